/**
 * The risk model's codes in words, for the person who decides: every signal type and rejection
 * key the assess path can give (src/assess/signals.ts, the learned model's `model_*` reasons of
 * src/assess/learned-model.ts) and the action-authority reason codes (src/schemas/vocabulary.ts).
 * test/node/console-words.test.ts checks none is missing; an unknown code reads as itself.
 */

const SIGNALS: Record<string, string> = {
  agent_unknown: "The agent could not be identified.",
  agent_suspended: "The agent is suspended.",
  key_revoked: "The presented holder key is revoked.",
  key_unregistered: "The mandate's holder key is not registered to the agent.",
  identity_conflict: "The identity evidence names two different agents.",
  card_unverified: "The referenced Agent Card is not verified.",
  card_unknown: "The referenced Agent Card matches no known card.",
  agent_card_invalid: "The agent's last Agent Card check failed.",
  payee_unverifiable: "The payee may be one of the mandate's undisclosed allowed payees.",
  execution_date_far_future: "The execution date is more than a year ahead.",
  execution_date_unreadable: "A date in the mandate could not be read.",
  mandate_issued_in_future: "The mandate says it was issued in the future.",
  unverified: "The mandate was sent as decoded JSON: no signature proves it.",
  geo_unknown: "The request's country is unknown.",
  velocity_unknown: "The velocity rule could not be checked.",
  amount_unknown: "The amount rules could not be checked.",
  amount_above_usual: "The amount is far above the agent's usual payments.",
  activity_burst: "The agent is acting in a burst.",
  custom_action: "This kind of action has no specific risk model.",
  payee_first_seen: "The agent has never paid this payee before.",
  device_first_seen: "The agent has never acted from this device before.",
  network_first_seen: "The agent has never acted from this network before.",
  recipient_first_contact: "The agent has never contacted this recipient before.",
  recipient_missing: "The action names no recipient.",
  recipient_not_e164: "The call recipient is not an E.164 phone number.",
  model_amount_unusual:
    "The amount, against the agent's usual payments, raised the model's fraud probability.",
  model_agent_velocity:
    "The agent's recent number of payments raised the model's fraud probability.",
  model_time_unusual: "The time of the payment raised the model's fraud probability.",
  model_payee_new: "A payee new to the agent raised the model's fraud probability.",
  model_payee_activity: "The payee's recent volume raised the model's fraud probability.",
  model_payee_fraud: "The payee's known frauds raised the model's fraud probability.",
  model_network_fraud:
    "Frauds other organizations confirmed on this payment's identifiers raised the model's fraud probability.",
  network_payee_fraud: "Other organizations confirmed fraud on this payee in the last 30 days.",
  network_agent_key_fraud:
    "Other organizations confirmed fraud on this agent key in the last 30 days.",
  network_issuer_fraud:
    "Other organizations confirmed fraud on this credential's issuer key in the last 30 days.",
  network_instrument_fraud:
    "Other organizations confirmed fraud on this payment instrument in the last 30 days.",
  http_signature_invalid: "The agent's HTTP message signature did not verify.",
  credential_suspended: "A status list the credential names says it is suspended.",
  credential_status_unknown:
    "The status list the credential names could not be fetched or trusted.",
  http_signature_replayed:
    "The agent's HTTP message signature reused a nonce seen before: a replay.",
  http_signature_agent_mismatch:
    "The key that signed the agent's HTTP request is not shown to belong to the agent of the mandate or Agent Card.",
  kya_fault: "The identity check failed internally; it could not judge the agent.",
  policy_fault: "The policy check failed internally; it could not judge the rules.",
  risk_fault: "The risk model failed internally; it could not judge the behaviour.",
};

/** What each learned-model reason group is made of, for "which features moved the probability". */
export const MODEL_GROUPS: Record<string, string> = {
  model_amount_unusual: "Amount against the agent's usual",
  model_agent_velocity: "The agent's recent number of payments",
  model_time_unusual: "Time of day and week",
  model_payee_new: "Payee new to the agent",
  model_payee_activity: "The payee's recent volume",
  model_payee_fraud: "The payee's known frauds",
  model_network_fraud: "Frauds other organizations confirmed",
};

const REJECTIONS: Record<string, string> = {
  agent_revoked: "The agent is revoked.",
  mandate_expired: "The mandate has expired.",
  mandate_amount_exceeded: "The amount is above what the mandate allows.",
  mandate_amount_below_minimum: "The amount is below the mandate's minimum.",
  mandate_currency_mismatch: "The currency is not the mandate's.",
  mandate_outside_execution_window: "The payment falls outside the mandate's execution window.",
  payee_not_allowed: "The payee is not one the mandate allows.",
  credential_signature_invalid: "A signature in the AP2 credential does not verify.",
  credential_untrusted_issuer:
    "The credential's issuer is not trusted (unknown, revoked or its key is gone).",
  credential_delegation_broken: "The credential's chain of delegation is broken.",
  credential_disclosure_invalid: "A selective disclosure of the credential is invalid.",
  credential_audience_mismatch: "The credential was issued for another audience.",
  credential_nonce_mismatch: "The credential's nonce does not match.",
  credential_expired: "The credential has expired.",
  credential_not_yet_valid: "The credential is not valid yet.",
  credential_constraint_violated: "The payment breaks a constraint of the credential.",
  credential_constraint_withheld:
    "The credential withholds a constraint its issuer requires to be disclosed.",
  credential_revoked: "A status list the credential names says it was revoked.",
  credential_already_consumed: "The credential's consent has already paid for this transaction.",
  credential_budget_exceeded: "The payment would take the open mandate past its budget.",
  max_amount_exceeded: "The amount is above the policy's maximum.",
  currency_not_allowed: "The policy does not allow this currency.",
  geo_not_allowed: "The policy does not allow this country.",
  velocity_exceeded: "The agent exceeded the policy's velocity limit.",
  policy_rule_denied: "A deny rule of the org's policy matched.",
  // Action authority (docs/action-authority.md).
  mandate_revoked: "The mandate is revoked.",
  mandate_not_yet_valid: "The mandate is not valid yet.",
  action_mismatch: "The action is not one the mandate grants.",
  resource_mismatch: "The resource is not one the mandate grants.",
  currency_mismatch: "The currency is not the mandate's.",
  amount_required: "The mandate needs an amount and none was given.",
  amount_exceeds_per_use: "The amount is above the mandate's limit per use.",
  amount_exceeds_total: "The amount would take the mandate past its total.",
  uses_exhausted: "The mandate's uses are exhausted.",
  agent_suspended: "The agent is suspended.",
  agent_risk_critical: "The agent's risk tier is critical.",
  limits_exhausted: "The agent's limits are exhausted.",
};

/** A signal type as a sentence; an unknown type as itself. */
export function signalWords(type: string): string {
  return SIGNALS[type] ?? type;
}

/** A rejection key or reason code as a sentence; an unknown one as itself. */
export function rejectionWords(key: string): string {
  return REJECTIONS[key] ?? key;
}

/** The codes that have words: for the test that keeps this file complete. */
export const WORDED = { signals: Object.keys(SIGNALS), rejections: Object.keys(REJECTIONS) };
