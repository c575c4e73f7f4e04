/**
 * What the risk model's stages emit (docs/risk-model.md): signals that raise the score and
 * rejection reasons that deny, each type in a catalog with its category.
 */

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CATEGORIES = [
  "identity",
  "mandate",
  "policy",
  "behavior",
  "recipient",
  "network",
  "system",
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Signal {
  category: Category;
  type: string;
  severity: Severity;
}

export interface RejectionReason {
  key: string;
  category: Category;
  description: string;
}

/**
 * Each signal type with its category and the words a `reason` uses for it. Emitting through
 * `signal()` keeps the category of a type fixed and every type documented.
 */
export const SIGNAL_CATALOG = {
  agent_unknown: { category: "identity", text: "the agent could not be identified" },
  agent_suspended: { category: "identity", text: "the agent is suspended" },
  key_revoked: { category: "identity", text: "the presented holder key is revoked" },
  key_unregistered: {
    category: "identity",
    text: "the mandate's holder key is not registered to the agent",
  },
  identity_conflict: { category: "identity", text: "the identity evidence names two agents" },
  card_unverified: { category: "identity", text: "the referenced Agent Card is not verified" },
  card_unknown: { category: "identity", text: "the referenced Agent Card matches no card" },
  agent_card_invalid: { category: "identity", text: "the agent's last Agent Card check failed" },
  payee_unverifiable: {
    category: "mandate",
    text: "the payee may be one of the mandate's undisclosed allowed payees",
  },
  execution_date_far_future: {
    category: "mandate",
    text: "the execution date is more than a year ahead",
  },
  execution_date_unreadable: { category: "mandate", text: "a mandate date could not be read" },
  mandate_issued_in_future: { category: "mandate", text: "the mandate is issued in the future" },
  credential_suspended: {
    category: "mandate",
    text: "the credential's status list says it is suspended",
  },
  credential_status_unknown: {
    category: "mandate",
    text: "the credential's status list could not be fetched or trusted",
  },
  unverified: {
    category: "mandate",
    text: "the AP2 mandate was sent as decoded JSON, which nobody's signature proves",
  },
  geo_unknown: { category: "policy", text: "the request's country is unknown" },
  velocity_unknown: { category: "policy", text: "the velocity rule could not be checked" },
  amount_unknown: { category: "policy", text: "the amount rules could not be checked" },
  amount_above_usual: { category: "behavior", text: "the amount is far above the agent's usual" },
  activity_burst: { category: "behavior", text: "the agent is acting in a burst" },
  custom_action: { category: "behavior", text: "the action kind has no specific risk model" },
  payee_first_seen: { category: "recipient", text: "the agent never paid this payee before" },
  recipient_first_contact: {
    category: "recipient",
    text: "the agent never contacted this recipient before",
  },
  device_first_seen: {
    category: "behavior",
    text: "the agent never acted from this device before",
  },
  network_first_seen: {
    category: "behavior",
    text: "the agent never acted from this network before",
  },
  recipient_missing: { category: "recipient", text: "the action names no recipient" },
  recipient_not_e164: {
    category: "recipient",
    text: "the call recipient is not an E.164 phone number",
  },
  // The learned model's reasons (src/assess/learned-model.ts): the features that raised its
  // fraud probability most, by group.
  model_amount_unusual: {
    category: "behavior",
    text: "the amount, against the agent's usual payments, raised the model's fraud probability",
  },
  model_agent_velocity: {
    category: "behavior",
    text: "the agent's recent number of payments raised the model's fraud probability",
  },
  model_time_unusual: {
    category: "behavior",
    text: "the time of the payment raised the model's fraud probability",
  },
  model_payee_new: {
    category: "recipient",
    text: "a payee new to the agent raised the model's fraud probability",
  },
  model_payee_activity: {
    category: "recipient",
    text: "the payee's recent volume raised the model's fraud probability",
  },
  model_payee_fraud: {
    category: "recipient",
    text: "the payee's known frauds raised the model's fraud probability",
  },
  model_network_fraud: {
    category: "network",
    text: "frauds other organizations confirmed raised the model's fraud probability",
  },
  // What other organizations of the network confirmed (src/assess/network-signals.ts, which
  // words a reason with the count: "the payee was confirmed in fraud at 4 other organizations
  // this month").
  network_payee_fraud: {
    category: "network",
    text: "the payee was confirmed in fraud at other organizations this month",
  },
  network_agent_key_fraud: {
    category: "network",
    text: "the agent key was confirmed in fraud at other organizations this month",
  },
  network_issuer_fraud: {
    category: "network",
    text: "the credential's issuer key was confirmed in fraud at other organizations this month",
  },
  network_instrument_fraud: {
    category: "network",
    text: "the payment instrument was confirmed in fraud at other organizations this month",
  },
  // The agent's HTTP message signature (src/assess/http-signature/, docs/http-signatures.md).
  http_signature_invalid: {
    category: "identity",
    text: "the agent's HTTP message signature did not verify",
  },
  http_signature_replayed: {
    category: "identity",
    text: "the agent's HTTP message signature reuses a nonce already seen",
  },
  http_signature_agent_mismatch: {
    category: "identity",
    text: "the agent's HTTP signature key is not shown to be the mandate's or the Agent Card's agent",
  },
  kya_fault: { category: "system", text: "internal fault in kya" },
  policy_fault: { category: "system", text: "internal fault in policy" },
  risk_fault: { category: "system", text: "internal fault in risk" },
} as const satisfies Record<string, { category: Category; text: string }>;
export type SignalType = keyof typeof SIGNAL_CATALOG;

export function signal(type: SignalType, severity: Severity): Signal {
  return { category: SIGNAL_CATALOG[type].category, type, severity };
}

/** Each rejection key with its category; any one of them denies. */
export const REJECTION_CATALOG = {
  agent_revoked: "identity",
  mandate_expired: "mandate",
  mandate_amount_exceeded: "mandate",
  mandate_amount_below_minimum: "mandate",
  mandate_currency_mismatch: "mandate",
  mandate_outside_execution_window: "mandate",
  payee_not_allowed: "mandate",
  credential_signature_invalid: "mandate",
  credential_untrusted_issuer: "mandate",
  credential_delegation_broken: "mandate",
  credential_disclosure_invalid: "mandate",
  credential_audience_mismatch: "mandate",
  credential_nonce_mismatch: "mandate",
  credential_expired: "mandate",
  credential_not_yet_valid: "mandate",
  credential_constraint_violated: "mandate",
  credential_constraint_withheld: "mandate",
  credential_already_consumed: "mandate",
  credential_budget_exceeded: "mandate",
  credential_revoked: "mandate",
  max_amount_exceeded: "policy",
  currency_not_allowed: "policy",
  geo_not_allowed: "policy",
  velocity_exceeded: "policy",
} as const satisfies Record<string, Category>;
export type RejectionKey = keyof typeof REJECTION_CATALOG;

export function rejection(key: RejectionKey, description: string): RejectionReason {
  return { key, category: REJECTION_CATALOG[key], description };
}

/**
 * The rejection of a `deny` rule of the policy's rule list (docs/rules.md). Apart from the
 * catalog, which lists what the model itself finds; the rule list is the org's own judgement.
 */
export function ruleRejection(description: string): RejectionReason {
  return { key: "policy_rule_denied", category: "policy", description };
}
