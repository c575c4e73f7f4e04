import type { NetworkOutcome } from "../schemas/assessments";
import type { AgentBinding, HttpSignatureFailure } from "../schemas/http-signature";
import type { ActionKind, AGENT_STATUSES, CARD_STATUSES, RISK_TIERS } from "../schemas/vocabulary";
import type { MandateFacts } from "./facts";
import type { MandateType } from "./request";
import type { TelemetrySeen } from "./telemetry";

/**
 * What the risk model reads about an action, apart from the org's policy: the request's facts,
 * who acts, and the history counted before it. The rule language reads exactly this (its
 * attributes, src/assess/rules/attributes.ts), so it depends on the input, never on the model.
 */

export interface AgentView {
  id: string;
  status: (typeof AGENT_STATUSES)[number];
  trust_score: number;
  risk_tier: (typeof RISK_TIERS)[number];
  card_status: (typeof CARD_STATUSES)[number];
}

export interface Identity {
  agent: AgentView | null;
  /**
   * How the agent was identified: by the open mandate's cnf key thumbprint, by a verified A2A
   * card reference, or by an explicit agent id in the request.
   */
  method: "key" | "card" | "explicit" | null;
  /**
   * The presented holder key (cnf.jwk) as registered: active, revoked, or not registered at
   * all; null when no key was presented.
   */
  key: "active" | "revoked" | "unregistered" | null;
  /**
   * The A2A agent_card_ref as found: a verified card of the agent, a card that is not (or no
   * longer) verified, or none matching; null when no ref was given.
   */
  card: "verified" | "unverified" | "unknown" | null;
  /** Two pieces of evidence name different agents. */
  conflict: boolean;
  /**
   * The agent was identified by proof of possession: the key that signed a verified AP2
   * credential's last hop is its registered, active key (`provenIdentity`). Everything else
   * (decoded JSON's `cnf.jwk`, a card reference, an `agent_id`, a refused credential's key, an
   * input stored before this field) is a claim: absent counts as false.
   */
  proven?: boolean;
}

/**
 * The one rule of proof (docs/assess.md, "What each kind of evidence earns"): only the holder
 * key of a verified credential, registered and active for the agent, proves who acts. Decoded
 * JSON proves nothing, whoever it names.
 */
export function provenIdentity(
  credential: { verified: boolean } | null,
  holderKey: Identity["key"],
): boolean {
  return credential?.verified === true && holderKey === "active";
}

/** True when the input's agent is proven; a claim (or no agent) otherwise. */
export function isProven(identity: Identity): boolean {
  return identity.agent !== null && identity.proven === true;
}

/** What an AP2 credential proved, as the model reads it (docs/assess.md). */
export interface CredentialEvidence {
  verified: boolean;
  /** Why not (a verifier failure); null when verified. */
  failure: string | null;
  /** The verifier's message, and for `constraint_violated` the constraint. */
  detail: { constraint?: string; message: string } | null;
  /**
   * What a status list the credential names says, when it is neither VALID nor INVALID (which
   * refuses the credential, `revoked`): `suspended` reviews; `unknown` (no list to trust)
   * reviews when the issuer requires status (docs/status-lists.md). Absent otherwise.
   */
  status?: { state: "suspended" | "unknown"; required: boolean; detail: string };
}

/** What the route counted in the org's assessment history, before this assessment. */
export interface History {
  /**
   * Assessments by the same agent within the policy's velocity window; null when not counted
   * (no velocity rule, or no agent to count for).
   */
  windowCount: number | null;
  /** Assessments by the agent in the last 60 s. */
  burst: number;
  /** Approved assessments of the agent. */
  approvedCount: number;
  /** Median approved amount of the agent, in this request's currency; null when none. */
  medianApprovedAmount: number | null;
  /** This agent paid this payee before; null when there is no agent or no payee. */
  payeeSeen: boolean | null;
  /** This agent contacted this recipient before (message_send, voice_call); null when unknown. */
  recipientSeen: boolean | null;
}

/** The input without the policy: what a rule's attributes read. */
export interface RuleInput {
  kind: ActionKind;
  mandateType: MandateType | null;
  facts: MandateFacts;
  identity: Identity;
  history: History;
  /** The assessment's time, epoch milliseconds: the only clock the model reads. */
  now: number;
  /** ISO 3166-1 alpha-2 country the request came from; null when unknown. */
  geo: string | null;
  /**
   * The window aggregates the policy's rule list reads, by canonical key
   * (`<measure>.<per>.<seconds>`, src/assess/rules/attributes.ts); null when not countable (no agent,
   * no payee, no currency). Absent when the policy reads none.
   */
  aggregates?: Record<string, number | null>;
  /** The AP2 credential the mandate came from; null or absent for decoded JSON. */
  credential?: CredentialEvidence | null;
  /**
   * What other organizations of the network confirmed about the action's identifiers
   * (`outcome.network`); absent when the org's mode does not consume network signals.
   */
  network?: NetworkOutcome | null;
  /**
   * Whether the request's device and network (ACP checkout telemetry) were seen with this
   * agent before; absent when the request sent none.
   */
  telemetry?: TelemetrySeen;
  /**
   * What the agent's HTTP message signature proved (docs/http-signatures.md); absent when the
   * request carried none.
   */
  httpSignature?: HttpSignatureEvidence | null;
}

/** An HTTP signature as the model reads it: verified or why not, and its agent binding. */
export interface HttpSignatureEvidence {
  verified: boolean;
  failure: HttpSignatureFailure | null;
  binding: AgentBinding;
}

/** Kinds whose amount the amount rules and the behaviour model read; others carry none. */
export const AMOUNT_KINDS: readonly ActionKind[] = ["ap2_payment", "custom"];
