// The response examples an integrator reads most, written by hand: one example org ("Acme
// Checkout"), its owner, its live API key, one principal and its shopping agent, paying the
// merchant of AssessRequest's example mandate; three assessments of 20 November 2026 (approved, held for review
// and resolved, denied by the active policy), the webhook endpoint that received them, and the
// audit ledger that recorded it all. Ids are UUIDv7 whose time is the object's `created`.
// Keyed by operation; openapi-document.ts puts each on the operation's success response, where
// test/node/openapi-contract.test.ts validates it against the schema. Operations not listed
// get one built from their schema by openapi-sampler.

import { DECISIONS } from "../schemas/vocabulary";

const ORG = "01a19b53-dde4-753e-a76f-f5f9e8683a57";
const OWNER = "01a19b53-ddd6-7576-a6f6-980ac7cb8893";
const API_KEY = "01a19b59-8e96-79f4-b566-d4df368af2f4";
const PRINCIPAL = "01a1a0db-f2ca-7f4f-872b-6c042fcc5cd4";
const AGENT = "01a1a0de-6907-78cb-9aa9-4d0d45d0e308";
/** RFC 7638 thumbprint of the agent's P-256 key. */
const AGENT_KEY = "ESqNMeKw-z8gcDH-8y96ckX3h7TU6FtF9lqluDQ1Now";
const ENDPOINT = "01a1a6f7-aedf-7257-993b-2ba28b5cdd08";
const POLICY = "01a1c659-4af2-7d18-b826-95b4e23a8e27";
const SHADOW_POLICY = "01a1edee-1247-72ea-927b-fcc9e06602cb";
const APPROVED = "01a1f83b-fd78-7208-974a-047e80d58d4f";
const REVIEWED = "01a1f84c-3888-778f-8b1e-9906605976d2";
const DENIED = "01a1f868-2f9e-750e-9e2f-f66ea8d946ca";
const REVIEW = "01a1f84c-3888-78b6-824c-22f8b6f22b4a";
/** The org's public transparency log id: logIdFor(ORG). */
const LOG_ID = "303271ad77cbaeda8ffbdfd95cfd8b9d";
/** The service's signing key (its RFC 7638 thumbprint). */
const KID = "hQ5n0Zq3eX1v2Yb7mWc9tRk4LpS6uJd8aFg0iHe2oTs";
const JWKS_URL = "https://risk.example.com/.well-known/jwks.json";
/** A Risk Payload, shortened: header, claims, signature. */
const JWS =
  "eyJhbGciOiJFZERTQSIsImtpZCI6ImhRNW4wWnEzZVgxdjJZYjdtV2M5dFJrNExwUzZ1SmQ4YUZnMGlIZTJvVHMiLCJ0eXAiOiJyaXNrLXBheWxvYWQrand0In0.eyJzdWIiOiIwMWExZjgzYi1mZDc4LTcyMDgtOTc0YS0wNDdlODBkNThkNGYifQ.mZ3kQv8Yt0aR5c2Lw9nB1xJpE7hUoS4dFgKiTl6VqWs";

const hashes = {
  a: "3aeb42cca3ad6c61bcf3042640aceb885665ab7a7398bd99be1be389becffd45",
  b: "d200ae729b6801258eb636262a9fbb0183001a0cba833bae2049b6225b4af3a6",
  c: "7e082c08130f633458328a21379502da46eebad0229bbdc6aed7b536e9dca941",
  d: "ea02b31565755b37858f83054e5cbbcca22980e81fa3915c06e7019bc5fccc38",
  e: "95c5546b2e7978986c584bd101469b570224881f304e7ad77723a09f46f9b2e9",
  f: "5b8cd3ce36c172569f1fbab57e55509eb491825e9c503ba18f4854d45cf74f7d",
  g: "e744fd77a5f053cd899c0f6274962d044dff2f78adbde46f814c9ee39593f94f",
  h: "152df1b3dc52d0ae72074c7abc6df97dd4d2ac178b225aba5acc9654149cc18b",
};

function list<T>(data: T[], next: string | null = null) {
  return { object: "list", data, has_more: next !== null, next_cursor: next };
}

const riskPayload = { jws: JWS, kid: KID, alg: "EdDSA", verify_url: JWKS_URL };
const ownerParty = { type: "user", id: OWNER };

// --- Assessments -------------------------------------------------------------------------

const approvedOutcome = {
  object: "assessment",
  id: APPROVED,
  created: "2026-11-20T09:14:03.512Z",
  livemode: true,
  kind: "ap2_payment",
  outcome: {
    decision: "approve",
    risk_level: "normal",
    risk_score: 12,
    reason: "Approved: known agent within policy.",
    policy_version: 3,
  },
  confidences: {
    agent_identity: 1,
    mandate_validity: 1,
    policy_adherence: 1,
    behavioral_risk: 0.9,
    recipient_risk: 0.85,
  },
  signals: [],
  rejection_reasons: [],
  risk_payload: riskPayload,
  audit: { entry_id: "01a1f83b-fd8a-775a-aaaa-89b7fbddb38e", sequence: 57, status: "anchored" },
  refinement: null,
  agent: { id: AGENT, trust_score: 82, risk_tier: "low" },
  credential: {
    verified: true,
    reference: "RRs8AIeCNgXRl8DsBU9hmcq-DbD6P1tMSvjpQk62fNg",
    issuer: "01a1a0dc-1b52-7a3e-9c41-2f6d8e0b7a19",
    holder_thumbprint: AGENT_KEY,
    hops: 2,
    failure: null,
  },
  latency_ms: 21,
};

/** What an example summary adds to its decision: the transaction and who decided. */
interface SummaryParts {
  amount: number;
  payee: { id: string; name: string };
  transaction_id: string;
  decided_by: { type: string; rule: string | null; reviewer: string | null };
  review?: { id: string; status: string; decision: string | null } | null;
  credential?: { status: string; failure: string | null; reason: string | null } | null;
}

const summary = (
  id: string,
  created: string,
  decision: string,
  risk_level: string,
  risk_score: number,
  reason: string,
  agent_id: string | null,
  parts: SummaryParts,
) => ({
  id,
  object: "assessment",
  created,
  kind: "ap2_payment",
  livemode: true,
  decision,
  risk_level,
  risk_score,
  reason,
  agent_id,
  a2a: null,
  amount: parts.amount,
  currency: "USD",
  payee: parts.payee,
  transaction_id: parts.transaction_id,
  agent: agent_id === null ? null : { id: agent_id, name: "Office supplies buyer" },
  principal: agent_id === null ? null : { id: PRINCIPAL, name: "Northwind Traders", erased: false },
  model: null,
  credential: parts.credential ?? null,
  decided_by: parts.decided_by,
  review: parts.review ?? null,
});

const reviewedSummary = summary(
  REVIEWED,
  "2026-11-20T09:31:47.208Z",
  "review",
  "elevated",
  55,
  "Review: the agent could not be identified.",
  null,
  {
    amount: 64_900,
    payee: { id: "acct_1Pq7sWLmZ2", name: "Globex Office Supply" },
    transaction_id: "tx_7b1d0c52e9",
    decided_by: { type: "score", rule: null, reviewer: null },
    review: { id: REVIEW, status: "open", decision: null },
  },
);

const assessmentList = list(
  [
    summary(
      DENIED,
      "2026-11-20T10:02:19.934Z",
      "deny",
      "highest",
      90,
      'Denied: policy rule "large-new-payee" matched (A first payment to a payee above 500.00).',
      AGENT,
      {
        amount: 215_000,
        payee: { id: "acct_9Xw2kQ", name: "Initech Hardware" },
        transaction_id: "tx_f3a9120c44",
        decided_by: { type: "rule", rule: "large-new-payee", reviewer: null },
      },
    ),
    reviewedSummary,
    summary(
      APPROVED,
      "2026-11-20T09:14:03.512Z",
      "approve",
      "normal",
      12,
      "Approved: known agent within policy.",
      AGENT,
      {
        amount: 19_900,
        payee: { id: "acct_1Pq7sWLmZ2", name: "Globex Office Supply" },
        transaction_id: "tx_2c88e01f7a",
        decided_by: { type: "score", rule: null, reviewer: null },
        credential: { status: "verified", failure: null, reason: null },
      },
    ),
  ],
  APPROVED,
);

// --- Reviews and feedback ----------------------------------------------------------------

const openReview = {
  object: "review",
  id: REVIEW,
  created: "2026-11-20T09:31:47.208Z",
  livemode: true,
  assessment_id: REVIEWED,
  agent_id: null,
  status: "open",
  expires_at: "2026-11-21T09:31:47.208Z",
  original_decision: "review",
  decision: null,
  reason: null,
  note: null,
  resolved_at: null,
  resolved_by: null,
  credential_backed: false,
  risk_payload: null,
  audit_entry_id: null,
  assessment: reviewedSummary,
};

const resolvedReview = {
  ...openReview,
  status: "resolved",
  decision: "approve",
  reason: "review.resolved",
  note: "Customer confirmed the order by phone.",
  resolved_at: "2026-11-20T09:52:10.044Z",
  resolved_by: ownerParty,
  risk_payload: riskPayload,
  audit_entry_id: "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
  assessment: {
    ...reviewedSummary,
    decided_by: { type: "person", rule: null, reviewer: OWNER },
    review: { id: REVIEW, status: "resolved", decision: "approve" },
  },
};

const feedback = {
  id: "01a20910-7358-7c7a-b3f9-a429787dd623",
  object: "assessment_feedback",
  assessment_id: APPROVED,
  livemode: true,
  label: "chargeback",
  occurred_at: "2026-11-23T11:05:00.000Z",
  source: "stripe:dp_1QkR8mLqTz3nY6",
  note: "Cardholder disputed the charge as unauthorized.",
  created: "2026-11-23T15:40:02.776Z",
  created_by: { type: "api_key", id: API_KEY },
};

// --- Policies ----------------------------------------------------------------------------

const rules = {
  max_amount: 100_000,
  currencies: ["EUR", "USD"],
  velocity: { window: "1h", max: 20 },
  grammar: 1,
  rules: [
    {
      id: "large-new-payee",
      action: "deny",
      when: {
        all: [
          { attr: "amount", op: "gt", value: 50_000 },
          { attr: "payee.first_seen", op: "eq", value: true },
        ],
      },
      description: "A first payment to a payee above 500.00",
    },
  ],
};

const activePolicy = {
  object: "policy",
  id: POLICY,
  name: "Checkout default",
  status: "active",
  version: 3,
  rules,
  shadow: false,
  created: "2026-11-10T16:45:03.090Z",
  activated_at: "2026-11-10T16:47:30.512Z",
};

const shadowPolicy = {
  ...activePolicy,
  id: SHADOW_POLICY,
  name: "Checkout default, stricter",
  status: "draft",
  version: null,
  rules: { ...rules, max_amount: 50_000 },
  shadow: true,
  created: "2026-11-18T09:12:44.871Z",
  activated_at: null,
};

const matrix = (rows: number[][]) => {
  return Object.fromEntries(
    DECISIONS.map((from, i) => [
      from,
      Object.fromEntries(DECISIONS.map((to, j) => [to, rows[i]?.[j] ?? 0])),
    ]),
  );
};

const labeled = (
  counts: [number, number, number, number, number],
  precision: number,
  recall: number,
  fire: number,
) => ({
  labeled: counts[0],
  fraud_caught: counts[1],
  fraud_missed: counts[2],
  legitimate_blocked: counts[3],
  legitimate_approved: counts[4],
  precision,
  recall,
  fire_rate: fire,
});

const backtest = {
  object: "policy_backtest",
  policy: { id: SHADOW_POLICY, status: "draft", version: null },
  risk_model: null,
  livemode: true,
  from: "2026-10-24T00:00:00.000Z",
  to: "2026-11-23T00:00:00.000Z",
  limit: 10_000,
  replayed: 4_812,
  skipped: 3,
  changed: 41,
  has_more: false,
  truncated: false,
  limits: { rows: 4_815, max_rows: 10_000, aggregates: 0, max_aggregate_evaluations: 200_000 },
  matrix: matrix([
    [4_390, 12, 29],
    [0, 301, 0],
    [0, 0, 80],
  ]),
  rules: [{ id: "large-new-payee", action: "deny", hits: 109 }],
  unmatched: 4_703,
  samples: [
    {
      assessment_id: APPROVED,
      created: "2026-11-20T09:14:03.512Z",
      decision: "approve",
      replayed_decision: "deny",
      rule: "large-new-payee",
      reason:
        'Denied: policy rule "large-new-payee" matched (A first payment to a payee above 500.00).',
    },
  ],
  labeled: {
    recorded: labeled([62, 9, 4, 2, 47], 0.82, 0.69, 0.018),
    policy: labeled([62, 12, 1, 3, 46], 0.8, 0.92, 0.024),
  },
};

const shadowReport = {
  object: "shadow_report",
  policy: { id: SHADOW_POLICY, status: "draft", version: null, shadow: true },
  livemode: true,
  from: "2026-11-18T09:12:44.871Z",
  to: "2026-11-24T09:00:00.000Z",
  shadowed: 1_284,
  agreed: 1_271,
  disagreed: 13,
  matrix: matrix([
    [1_130, 0, 13],
    [0, 94, 0],
    [0, 0, 47],
  ]),
  disagreements: [
    {
      decision: "approve",
      shadow_decision: "deny",
      count: 13,
      labels: { fraud: 2, chargeback: 1, refund: 0, legitimate: 3, pending: 0, unlabeled: 7 },
    },
  ],
  samples: [
    {
      assessment_id: APPROVED,
      created: "2026-11-20T09:14:03.512Z",
      decision: "approve",
      shadow_decision: "deny",
      label: "chargeback",
    },
  ],
};

// --- Agents ------------------------------------------------------------------------------

const agent = {
  object: "agent",
  id: AGENT,
  principal_id: PRINCIPAL,
  name: "Acme Shopping Assistant",
  description: "Buys household supplies for the principal within the mandate's budget",
  metadata: { team: "checkout", environment: "production" },
  status: "active",
  trust_score: 82,
  risk_tier: "low",
  evidence: {
    card_status: "verified",
    active_keys: 1,
    approvals: 148,
    reviews: 6,
    denials: 2,
    suspensions: 0,
    confirmed_frauds: 0,
    confirmed_legitimate: 11,
  },
  card: {
    digest: `sha256:${hashes.h}`,
    protocol_version: "0.3.0",
    name: "Acme Shopping Assistant",
    url: "https://agents.acme.example/a2a",
    verified_at: "2026-11-03T10:07:41.220Z",
  },
  created: "2026-11-03T10:04:52.871Z",
  updated: "2026-11-20T09:14:03.540Z",
  suspended_at: null,
  revoked_at: null,
};

const agentKey = {
  object: "agent_key",
  id: AGENT_KEY,
  agent_id: AGENT,
  kty: "EC",
  crv: "P-256",
  alg: "ES256",
  jwk: {
    kty: "EC",
    crv: "P-256",
    x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
  },
  status: "active",
  created: "2026-11-03T10:06:05.302Z",
  revoked_at: null,
};

const trustEvent = (
  id: string,
  reason: string,
  score: number,
  tier: string,
  previous: [number, string] | null,
  created: string,
) => ({
  object: "trust_event",
  id,
  agent_id: AGENT,
  reason,
  status: "active",
  trust_score: score,
  risk_tier: tier,
  previous_score: previous?.[0] ?? null,
  previous_tier: previous?.[1] ?? null,
  created,
});

const cardStatus = {
  object: "agent_card_status",
  agent_id: AGENT,
  status: "verified",
  reasons: [],
  protocol_version: "0.3.0",
  digest: `sha256:${hashes.h}`,
  name: "Acme Shopping Assistant",
  url: "https://agents.acme.example/a2a",
  source_url: "https://agents.acme.example/.well-known/agent-card.json",
  signatures: [
    {
      index: 0,
      kid: AGENT_KEY,
      alg: "ES256",
      status: "valid",
      message: "signed by the agent's active key",
      form: "spec",
      diagnosis: "signed_as_received",
    },
  ],
  checked_at: "2026-11-03T10:07:41.220Z",
  verified_at: "2026-11-03T10:07:41.220Z",
};

// --- Webhooks ----------------------------------------------------------------------------

const endpoint = {
  object: "webhook_endpoint",
  id: ENDPOINT,
  url: "https://hooks.acme.example/agent-risk",
  event_types: ["assessment.denied", "assessment.flagged", "assessment.resolved"],
  description: "Order service: hold and release orders",
  token_set: false,
  livemode: true,
  status: "enabled",
  disabled_reason: null,
  created: "2026-11-04T14:30:12.447Z",
  disabled_at: null,
  previous_secret_expires_at: null,
};

const deliveries = list([
  {
    object: "webhook_delivery",
    id: "01a1f868-2fae-7daa-a602-55004c346dc7",
    endpoint_id: ENDPOINT,
    event: {
      id: "01a1f868-2fae-7a4c-b1c6-faee1d218518",
      type: "assessment.denied",
      created: 1_795_168_939,
    },
    status: "succeeded",
    attempt_count: 2,
    attempts: [
      {
        number: 1,
        time: "2026-11-20T10:02:20.611Z",
        status_code: 503,
        duration_ms: 42,
        error: "status 503",
        next_retry_at: "2026-11-20T10:02:25.722Z",
      },
      {
        number: 2,
        time: "2026-11-20T10:02:25.730Z",
        status_code: 200,
        duration_ms: 37,
        error: null,
        next_retry_at: null,
      },
    ],
    next_attempt_at: null,
    dead_lettered_at: null,
    created: "2026-11-20T10:02:19.950Z",
    completed_at: "2026-11-20T10:02:25.767Z",
  },
  {
    object: "webhook_delivery",
    id: "01a1f85e-e14d-74a3-8103-9a89e4ac9227",
    endpoint_id: ENDPOINT,
    event: {
      id: "01a1f85e-e14d-7c10-a5d2-3e8f9b0c1d2e",
      type: "assessment.resolved",
      created: 1_795_168_330,
    },
    status: "succeeded",
    attempt_count: 1,
    attempts: [
      {
        number: 1,
        time: "2026-11-20T09:52:10.702Z",
        status_code: 200,
        duration_ms: 35,
        error: null,
        next_retry_at: null,
      },
    ],
    next_attempt_at: null,
    dead_lettered_at: null,
    created: "2026-11-20T09:52:10.061Z",
    completed_at: "2026-11-20T09:52:10.737Z",
  },
]);

// --- Payment history ---------------------------------------------------------------------

const historyImport = {
  id: "01a22689-7646-78bc-9aea-fa00a0403cf9",
  object: "history_import",
  livemode: true,
  created: "2026-11-20T09:01:12.646Z",
  records: 10_000,
  inserted: 9_940,
  unchanged: 60,
  labels: { fraud: 41, chargeback: 18, legitimate: 3, refund: 12 },
  first_occurred_at: "2026-05-01T00:03:11.000Z",
  last_occurred_at: "2026-06-14T23:58:40.000Z",
  digest: `sha256:${hashes.e}`,
  audit_entry_id: "01a22689-7652-7688-accc-77d8c4bd0b02",
};

// --- API keys, the caller, the org -------------------------------------------------------

const apiKey = {
  object: "api_key",
  id: API_KEY,
  name: "checkout-service",
  prefix: "aar_live_7Hq2",
  mode: "live",
  scopes: ["assess:write", "assess:read", "review:read", "webhooks:read"],
  status: "active",
  created: "2026-11-02T08:21:40.118Z",
  revoked_at: null,
  created_by: OWNER,
};

// --- Audit -------------------------------------------------------------------------------

const auditEntry = (
  id: string,
  sequence: number,
  type: string,
  actor: { type: string; id: string },
  subject: { type: string; id: string },
  time: string,
  prev: string,
  hash: string,
  leaf: string,
  status: "pending" | "anchored",
) => ({
  object: "audit_entry",
  id,
  sequence,
  type,
  actor,
  subject,
  digest: `sha256:${leaf.slice(0, 32)}${prev.slice(0, 32)}`,
  time,
  prev_hash: prev,
  hash,
  leaf_hash: leaf,
  status,
});

const keyActor = { type: "api_key", id: API_KEY };

const checkpoint = {
  log_id: LOG_ID,
  tree_size: 64,
  root_hash: hashes.g,
  time: "2026-11-20T10:03:00.000Z",
  // C2SP tlog-checkpoint: origin, tree size, base64 root hash, the time extension line.
  note: `agent-risk/log/${LOG_ID}\n64\n50T9d6XwU82JnA9idJYtBE3/L3itveRvgUye45WT+U8=\ntime 2026-11-20T10:03:00.000Z\n`,
  jws: "eyJhbGciOiJFZERTQSIsImtpZCI6ImhRNW4wWnEzZVgxdjJZYjdtV2M5dFJrNExwUzZ1SmQ4YUZnMGlIZTJvVHMiLCJ0eXAiOiJ0bG9nLWNoZWNrcG9pbnQifQ.YWdlbnQtcmlzay9sb2cv.Vq3xT8m2Lk9pRz0aNb4wYc7dHe1fGj5sUo6iPr2tQx",
  previous_tree_size: 48,
  consistency_proof: [hashes.b, hashes.c, hashes.d],
};

// --- Billing -----------------------------------------------------------------------------

const billing = {
  object: "billing",
  plan: {
    id: "starter",
    object: "plan",
    name: "Starter",
    currency: "usd",
    amount: 4_900,
    interval: "month",
    included_assessments: 10_000,
    unit_amount: 2,
  },
  current_period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z" },
  usage: { assessments: 12_418, included_remaining: 0, billable_overage: 2_418 },
  projected_charge: { currency: "usd", plan_amount: 4_900, usage_amount: 4_836, total: 9_736 },
  spending_cap: { amount: 10_000, currency: "usd", review_threshold_percent: 80, status: "ok" },
  customer: "cus_R8mLqTz3nY6kWp",
};

// --- Network -----------------------------------------------------------------------------

const networkSettings = {
  object: "network_settings",
  livemode: true,
  contribute: true,
  consume: true,
  excluded: false,
  updated_at: "2026-11-21T09:30:12.408Z",
};

/** The examples, by operation (`METHOD /path`): each the body of its success response. */
export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  "GET /v1/me": {
    orgId: ORG,
    orgName: "Acme Checkout",
    actor: { type: "api_key", id: API_KEY, name: "checkout-service", mode: "live" },
    scopes: apiKey.scopes,
    livemode: true,
  },
  "POST /v1/orgs": {
    object: "organization",
    id: ORG,
    name: "Acme Checkout",
    created: "2026-11-02T08:15:27.204Z",
    role: "owner",
  },
  "POST /v1/api-keys": { ...apiKey, key: "aar_live_7Hq2oRKUafvshxWdss_-wpLkpkVKomyy40F2fME9Fjd" },
  "GET /v1/api-keys": list([apiKey]),
  "GET /v1/assessments": assessmentList,
  "GET /v1/assessments/{id}": approvedOutcome,
  "GET /v1/reviews": list([resolvedReview]),
  "GET /v1/reviews/{id}": openReview,
  "POST /v1/reviews/{id}/resolve": resolvedReview,
  "POST /v1/assessments/{id}/feedback": feedback,
  "GET /v1/assessments/{id}/feedback": {
    ...list([feedback]),
    effective_label: "chargeback",
    pending: false,
  },
  "POST /v1/history/transactions": historyImport,
  "GET /v1/history/imports": list([historyImport]),
  "GET /v1/policies": list([shadowPolicy, activePolicy]),
  "GET /v1/policies/{id}": activePolicy,
  "POST /v1/policies/{id}/backtest": backtest,
  "GET /v1/policies/{id}/shadow-report": shadowReport,
  "GET /v1/agents": list([agent]),
  "GET /v1/agents/{id}": agent,
  "GET /v1/agents/{id}/keys": list([agentKey]),
  "GET /v1/agents/{id}/trust-history": list([
    trustEvent(
      "01a1f83b-fd94-7b7a-bcbf-7dc4f0b56fe9",
      "assessment",
      82,
      "low",
      [81, "low"],
      "2026-11-20T09:14:03.540Z",
    ),
    trustEvent(
      "01a1a0df-83f6-7196-b564-fe714bb85ce6",
      "key_registered",
      45,
      "high",
      [30, "high"],
      "2026-11-03T10:06:05.302Z",
    ),
    trustEvent(
      "01a1a0de-6907-7d24-aa71-0e3ca2d3851a",
      "registered",
      30,
      "high",
      null,
      "2026-11-03T10:04:52.871Z",
    ),
  ]),
  "GET /v1/agents/{id}/card-status": cardStatus,
  "POST /v1/webhook-endpoints": {
    ...endpoint,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4iuY2Eobd5s=",
  },
  "GET /v1/webhook-endpoints": list([endpoint]),
  "GET /v1/webhook-endpoints/{id}/deliveries": deliveries,
  "GET /v1/audit": list(
    [
      auditEntry(
        "01a1f868-2fae-7727-8da8-dbabb5951a06",
        64,
        "assessment.created",
        keyActor,
        { type: "assessment", id: DENIED },
        "2026-11-20T10:02:19.950Z",
        hashes.a,
        hashes.b,
        hashes.c,
        "anchored",
      ),
      auditEntry(
        "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
        63,
        "review.resolved",
        ownerParty,
        { type: "review", id: REVIEW },
        "2026-11-20T09:52:10.061Z",
        hashes.d,
        hashes.a,
        hashes.e,
        "anchored",
      ),
    ],
    "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
  ),
  "GET /v1/audit/verify": {
    ok: true,
    checked: 64,
    head: { sequence: 64, hash: hashes.b },
    first_break: null,
    checkpoints: {
      checked: 4,
      latest: { tree_size: 64, root_hash: hashes.g, time: "2026-11-20T10:03:00.000Z" },
      first_invalid: null,
    },
    ledger: { tree_size: 64, root_hash: hashes.g, entries_stored: true, checkpoint_stored: true },
    alert: null,
  },
  "GET /v1/audit/checkpoints": list([{ object: "checkpoint", ...checkpoint }]),
  "GET /v1/audit/{id}/proof": {
    object: "audit_proof",
    entry_id: "01a1f83b-fd8a-775a-aaaa-89b7fbddb38e",
    sequence: 57,
    leaf_hash: hashes.f,
    status: "anchored",
    leaf_index: 56,
    tree_size: 64,
    audit_path: [hashes.e, hashes.h, hashes.c, hashes.a, hashes.d, hashes.b],
    checkpoint,
  },
  "GET /v1/billing": billing,
  "GET /v1/network-settings": networkSettings,
  "POST /v1/network-settings": networkSettings,
};
