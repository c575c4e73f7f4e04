import type { TrustAnchors } from "../ap2-credentials/verify";
import type { SpendState } from "../billing/plans";
import type { NetworkCount } from "../network/counts";
import type { NetworkOutcome } from "../schemas/assessments";
import type { HttpSignatureRead } from "./http-signature/verify";
import type { AssessmentRecord } from "./outcome";
import type { NormalizedRules } from "./policy";
import { parsedPolicy } from "./policy-cache";
import type { RefinementRow } from "./refinement";
import type { ParsedAssessRequest } from "./request";
import { type CredentialEvidence, type Identity, provenIdentity } from "./risk-input";
import type { RiskInput } from "./risk-model";
import { aggregateValues } from "./rules/aggregates";
import { type TelemetryDigests, type TelemetrySeenRow, telemetrySeen } from "./telemetry";

export interface AgentRowView {
  id: string;
  status: "active" | "suspended" | "revoked";
  trust_score: number;
  risk_tier: "low" | "medium" | "high" | "critical";
  card_status: "unverified" | "verified" | "invalid";
}

/** Everything the pipeline reads, from the one round trip that also authenticates. */
export interface AssessContext {
  /** The stored assessment for the same content: the request is a replay. */
  replay: AssessmentRecord | null;
  /** The replayed assessment's review item, for the Outcome's `refinement`. */
  replayReview: RefinementRow | null;
  /** The content hash the idempotency key was first used with. */
  keyOwner: string | null;
  policy: { id: string; version: number; rules: unknown } | null;
  /**
   * The org's shadow policy (docs/shadow-policies.md), read in the same statement, with what
   * its own velocity window and rule list count; null when the org shadows none.
   */
  shadow?: {
    id: string;
    version: number | null;
    rules: unknown;
    window_count: number;
    aggregates: Record<string, unknown> | null;
  } | null;
  keyHit: { agent_id: string; status: "active" | "revoked" } | null;
  cardHit: { agent_id: string; card_status: AgentRowView["card_status"] } | null;
  explicit: AgentRowView | null;
  agent: AgentRowView | null;
  history: {
    window_count: number;
    burst: number;
    approved_count: number;
    median_amount: number | null;
    counterparty_seen: boolean;
  } | null;
  /** The active rule list's window aggregates as counted, by key; null when none were. */
  aggregates?: Record<string, unknown> | null;
  /** The newest checkpoint's size: entries up to it are anchored. */
  anchoredThrough: number;
  /** The spend guard's state; absent where no billing applies (backtests, evaluations). */
  spend?: SpendState | null;
  /** The org's active credential issuers' keys, read only for a request with a credential. */
  anchors?: TrustAnchors;
  /**
   * The instant the assessment is made at: the request's test clock's frozen time (ISO), or
   * absent without one (the request's own receipt time is used).
   */
  asOf?: string;
  /** The request named a test clock this org does not have. */
  testClockMissing?: boolean;
  /** The mode's active and shadow risk models, with the history their features read. */
  models?: ModelContext;
  /**
   * The network's counts for the request's digests and the issuer keys its root could name;
   * null when the org's mode does not consume; absent when nothing was asked (no network keys).
   */
  network?: NetworkCount[] | null;
  /** The request's telemetry digests and which agents saw them; absent when none was sent. */
  telemetry?: { digests: TelemetryDigests; rows: TelemetrySeenRow[] };
  /**
   * The registered agent key the HTTP signature's `keyid` names, and whether its nonce is new;
   * absent when the request carried no HTTP signature.
   */
  httpSignature?: HttpSignatureRead;
}

/** A risk model as the context read names it; `params` only when the isolate lacked them. */
export interface ModelRow {
  id: string;
  version: number | null;
  label_delay_seconds: number;
  thresholds: { review: { probability: number }; deny: { probability: number } } | null;
  params: unknown | null;
}

export interface ModelContext {
  active: ModelRow | null;
  shadow: ModelRow | null;
  /** The agent's payments of the last 30 days in the request's currency: [ms, amount, payee]. */
  agentPast: [number, number, string | null][];
  /** The payee's payments of the horizon: [ms, fraud label known at (ms) or null]. */
  payeePast: [number, number | null][];
}

/**
 * The model's input from the request and its context: pure, so the benchmark can time the
 * scoring stages outside the runtime exactly as the pipeline runs them.
 */

/** Who the action is for: the payee for payments, the recipient for messages and calls. */
export function counterpartyOf(request: ParsedAssessRequest): string | null {
  return request.facts.payee?.id ?? request.facts.recipient ?? null;
}

type Rules = NormalizedRules;

/**
 * The active policy's rules: null without a policy; "unreadable" when the stored rules no
 * longer parse (an older grammar) or their rule list does not compile. Either makes the policy
 * component fail, and the assessment is at least review: never a 500. Parsed once per policy
 * version in the isolate (`policy-cache.ts`), not once per request.
 */
function readRules(context: AssessContext): Rules | "unreadable" | null {
  return context.policy ? parsedPolicy(context.policy) : null;
}

/** The active policy's rules, or null without one (or when they cannot be read). */
export function rulesOf(context: AssessContext): Rules | null {
  const rules = readRules(context);
  return rules === "unreadable" ? null : rules;
}

/** True when an active policy's stored rules cannot be read: the policy stage must fail. */
export function rulesUnreadable(context: AssessContext): boolean {
  return readRules(context) === "unreadable";
}

/**
 * `credential` is the verifier's verdict on the request's credential (null without one); the
 * agent it names by its last hop's key is proven only when the chain verified. `network` is
 * `outcome.network` (null when the org's mode does not consume).
 */
export function riskInput(
  request: ParsedAssessRequest,
  context: AssessContext,
  thumbprint: string | null,
  now: number,
  credential: CredentialEvidence | null = null,
  network: NetworkOutcome | null = null,
): RiskInput {
  const rules = rulesOf(context);
  const agent = context.agent;
  const history = context.history;
  const counterparty = counterpartyOf(request);
  const seen = agent && counterparty ? (history?.counterparty_seen ?? false) : null;
  const specs = rules?.program?.aggregates ?? [];
  return {
    kind: request.kind,
    mandateType: request.mandateType,
    facts: request.facts,
    identity: identityOf(context, thumbprint, request, credential),
    rules,
    policyVersion: context.policy?.version ?? 0,
    history: {
      windowCount: agent && rules?.velocity ? (history?.window_count ?? 0) : null,
      burst: agent ? (history?.burst ?? 0) : 0,
      approvedCount: agent ? (history?.approved_count ?? 0) : 0,
      medianApprovedAmount: agent ? (history?.median_amount ?? null) : null,
      payeeSeen: request.kind === "ap2_payment" ? seen : null,
      recipientSeen: request.kind === "ap2_payment" ? null : seen,
    },
    now,
    geo: geoOf(request.facts.riskData),
    ...(request.credential === null ? {} : { credential }),
    ...(network === null ? {} : { network }),
    ...(context.telemetry
      ? {
          telemetry: telemetrySeen(
            context.telemetry.digests,
            context.telemetry.rows,
            agent?.id ?? null,
          ),
        }
      : {}),
    ...(specs.length === 0
      ? {}
      : {
          aggregates: aggregateValues(specs, context.aggregates ?? null, {
            agent: agent !== null,
            counterparty: counterparty !== null,
          }),
        }),
  };
}

function identityOf(
  context: AssessContext,
  thumbprint: string | null,
  request: ParsedAssessRequest,
  credential: CredentialEvidence | null,
): Identity {
  const { keyHit, cardHit, explicit, agent } = context;
  // Only a verified card identifies its agent; a match on an unverified one is a signal.
  const verifiedCard = cardHit?.card_status === "verified" ? cardHit : null;
  const named = [keyHit?.agent_id, verifiedCard?.agent_id, explicit?.id].filter(
    (id): id is string => id !== undefined,
  );
  const cardRef = request.a2a?.agent_card_ref ?? null;
  return {
    agent,
    method: keyHit ? "key" : verifiedCard ? "card" : explicit ? "explicit" : null,
    key: thumbprint === null ? null : keyHit ? keyHit.status : "unregistered",
    card:
      cardRef === null
        ? null
        : cardHit
          ? cardHit.card_status === "verified"
            ? "verified"
            : "unverified"
          : "unknown",
    conflict: new Set(named).size > 1,
    // A credential's holder key proves its agent only once the whole chain verified (the
    // presentation's audience and nonce included: a replayed leaf proves nothing); decoded
    // JSON (no credential) never does.
    proven: provenIdentity(request.credential === null ? null : credential, keyHit?.status ?? null),
  };
}

/** The payer's country, as the trusted surface reported it in `risk_data`. */
export function geoOf(riskData: Record<string, unknown> | null): string | null {
  const geo = riskData?.geo;
  const candidates = [
    riskData?.country,
    typeof geo === "object" && geo !== null ? (geo as Record<string, unknown>).country : undefined,
  ];
  const found = candidates.find(
    (v): v is string => typeof v === "string" && /^[A-Za-z]{2}$/.test(v),
  );
  return found ? found.toUpperCase() : null;
}
