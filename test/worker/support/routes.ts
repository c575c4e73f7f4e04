import { env } from "cloudflare:test";
import type { ScopeRequirement } from "../../../src/auth/scopes";
import { RANGE } from "../../support/ap2-chains";
import { CAPTURE, newMandate } from "./action";
import { call, type RequestBody, type TestOrg } from "./api";
import { mandateOf } from "./credentials";
import { newAgent, newPrincipal, registerKey } from "./identity";
import { seedHistory, trainModel } from "./risk-models";

/** Every authenticated route, with what the common auth/scope/tenant tests need to call it. */
export interface RouteCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  /** One scope, or any one of several. */
  scope: ScopeRequirement | null;
  sessionOnly?: boolean;
  /** Needs only a signed-in person, not an org (creating the org). */
  orgless?: boolean;
  /** Changes what live and test mode share: a test key gets 403 `live_key_required`. */
  liveOnly?: boolean;
  /**
   * Exists only in test mode (test clocks): a live key, or a session without `x-mode: test`,
   * gets 400 `test_mode_only`; the other common tests call it in test mode.
   */
  testOnly?: boolean;
  body?: unknown;
  /** Creates the resource named by the path in the given org: `{id}`, or every parameter. */
  resource?: (org: TestOrg) => Promise<string | Record<string, string>>;
  /**
   * Bad query filters (a bad uuid, a bad date, an unknown status or enum): each answers 400
   * `invalid_request` naming the parameter, and only after the credential is checked.
   */
  filters?: Record<string, string>;
}

/** The filter cases of a list route: each bad value of each named parameter. */
const BAD_UUID = "not-a-uuid";
const BAD_DATE = "2026-13-45";
const UNKNOWN = "no-such-value";

/** A one-case evaluation set, as the eval-set routes take it. */
const EVAL_SET = {
  name: "golden",
  cases: [
    {
      request: {
        mandate: {
          vct: "mandate.payment.1",
          transaction_id: "tx-1",
          payee: { id: "merchant_1", name: "Demo Merchant" },
          payment_amount: { amount: 1000, currency: "USD" },
          payment_instrument: { id: "stub", type: "card" },
        },
      },
      expected: "approve",
    },
  ],
} satisfies RequestBody<"/v1/eval-sets", "POST">;

/** A public P-256 key, as an issuer of AP2 credentials registers it. */
const ISSUER_JWK = {
  kty: "EC",
  crv: "P-256",
  x: "epZ9CQpHH_uUJsDMf5coiIAzX1l68UBeKCsIpsN69pA",
  y: "kRPJY0hTNWkvuC3xEfpXovo1Tv30IScaVE8w43Brvkc",
};

export const ROUTES: RouteCase[] = [
  { method: "GET", path: "/v1/me", scope: null },
  { method: "POST", path: "/v1/orgs", scope: null, sessionOnly: true, orgless: true },
  {
    method: "POST",
    path: "/v1/api-keys",
    scope: "keys:write",
    sessionOnly: true,
    body: { name: "k", scopes: ["assess:read"] },
  },
  { method: "GET", path: "/v1/api-keys", scope: "keys:read", sessionOnly: true },
  {
    method: "POST",
    path: "/v1/api-keys/{id}/revoke",
    scope: "keys:write",
    sessionOnly: true,
    resource: async (org) => (await org.key(["assess:read"])).id,
  },
  {
    method: "GET",
    path: "/v1/audit",
    scope: "audit:read",
    filters: { from: BAD_DATE, to: "0000-01-01T00:00:00Z" },
  },
  { method: "GET", path: "/v1/audit/verify", scope: "audit:read" },
  { method: "GET", path: "/v1/audit/export", scope: "audit:read" },
  { method: "GET", path: "/v1/audit/checkpoints", scope: "audit:read" },
  {
    method: "GET",
    path: "/v1/audit/{id}/proof",
    scope: "audit:read",
    resource: async (org) => (await call("/v1/audit", { token: org.token })).json.data[0]!.id,
  },

  {
    method: "POST",
    path: "/v1/principals",
    liveOnly: true,
    scope: "agents:write",
    body: { name: "Ada" },
  },
  { method: "GET", path: "/v1/principals", scope: "agents:read", filters: { status: UNKNOWN } },
  { method: "GET", path: "/v1/principals/{id}", scope: "agents:read", resource: newPrincipal },
  {
    method: "POST",
    path: "/v1/principals/{id}/erase",
    liveOnly: true,
    scope: "gdpr:erase",
    resource: newPrincipal,
  },
  {
    method: "POST",
    path: "/v1/agents",
    liveOnly: true,
    scope: "agents:write",
    body: { principal_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", name: "a" },
  },
  {
    method: "GET",
    path: "/v1/agents",
    scope: "agents:read",
    filters: { status: UNKNOWN, risk_tier: UNKNOWN, principal_id: BAD_UUID },
  },
  {
    method: "GET",
    path: "/v1/agents/{id}",
    scope: "agents:read",
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "PATCH",
    path: "/v1/agents/{id}",
    liveOnly: true,
    scope: "agents:write",
    body: { name: "renamed" },
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "GET",
    path: "/v1/agents/{id}/trust-history",
    scope: "agents:read",
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "GET",
    path: "/v1/agents/{id}/card-status",
    scope: "agents:read",
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "POST",
    path: "/v1/agents/verify-card",
    liveOnly: true,
    scope: "agents:write",
    body: { agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", card: { name: "x" } },
  },
  {
    method: "POST",
    path: "/v1/agents/{id}/keys",
    liveOnly: true,
    scope: "agents:write",
    body: { jwk: { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" } },
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "GET",
    path: "/v1/agents/{id}/keys",
    scope: "agents:read",
    resource: async (org) => (await newAgent(org)).id,
  },
  {
    method: "POST",
    path: "/v1/agents/{id}/keys/{keyId}/revoke",
    liveOnly: true,
    scope: "agents:write",
    resource: async (org) => {
      const agent = await newAgent(org);
      return { id: agent.id, keyId: (await registerKey(org, agent.id)).kid };
    },
  },
  // the remaining-budget attestation of an open mandate the org approved a payment under
  {
    method: "GET",
    path: "/v1/mandate-budgets/{reference}",
    scope: "assess:read",
    resource: async (org) => {
      const mandate = await mandateOf(org, [RANGE]);
      const approved = await mandate.pay((await org.key()).key);
      if (approved.decision !== "approve") throw new Error(`not approved: ${approved.decision}`);
      return { reference: mandate.reference };
    },
  },
  // credential issuers (the trust anchors of AP2 credentials)
  {
    method: "POST",
    path: "/v1/credential-issuers",
    liveOnly: true,
    scope: "issuers:write",
    body: { name: "Demo Bank", jwks: { keys: [ISSUER_JWK] } },
  },
  { method: "GET", path: "/v1/credential-issuers", scope: "issuers:read" },
  {
    method: "GET",
    path: "/v1/credential-issuers/{id}",
    scope: "issuers:read",
    resource: newIssuer,
  },
  {
    method: "POST",
    path: "/v1/credential-issuers/{id}",
    liveOnly: true,
    scope: "issuers:write",
    resource: newIssuer,
    body: { required_constraints: ["payment.budget"] },
  },
  {
    method: "POST",
    path: "/v1/credential-issuers/{id}/revoke",
    liveOnly: true,
    scope: "issuers:write",
    resource: newIssuer,
  },

  {
    method: "POST",
    path: "/v1/assess",
    scope: "assess:write",
    body: { mandate: { vct: "mandate.payment.1" } },
  },
  {
    method: "GET",
    path: "/v1/assessments",
    scope: "assess:read",
    filters: { status: UNKNOWN, agent: BAD_UUID, kind: UNKNOWN, from: BAD_DATE, to: BAD_DATE },
  },
  {
    method: "GET",
    path: "/v1/assessments/summary",
    scope: "assess:read",
    filters: { from: BAD_DATE, to: BAD_DATE, tz: UNKNOWN },
  },
  {
    method: "GET",
    path: "/v1/assessments/breakdown",
    scope: "assess:read",
    filters: { from: BAD_DATE, to: BAD_DATE, tz: UNKNOWN },
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/reviews",
    scope: "review:read",
    filters: { status: UNKNOWN, agent: BAD_UUID, from: BAD_DATE, to: BAD_DATE, order: UNKNOWN },
  },
  { method: "GET", path: "/v1/reviews/{id}", scope: "review:read", resource: newReview },
  {
    method: "POST",
    path: "/v1/reviews/{id}/resolve",
    scope: "review:write",
    body: { decision: "deny", note: "checked by hand" },
    resource: newReview,
  },
  { method: "GET", path: "/v1/review-settings", scope: "review:read" },
  {
    method: "POST",
    path: "/v1/review-settings",
    scope: "review:write",
    liveOnly: true,
    body: { sla_seconds: 3600 },
  },
  { method: "GET", path: "/v1/network-settings", scope: null, sessionOnly: true },
  {
    method: "POST",
    path: "/v1/network-settings",
    scope: "network:write",
    sessionOnly: true,
    body: { contribute: false, consume: false },
  },
  {
    method: "POST",
    path: "/v1/assessments/{id}/feedback",
    scope: "assess:write",
    body: { label: "fraud" },
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}/feedback",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "POST",
    path: "/v1/assessments/{id}/receipts",
    scope: "assess:write",
    body: {
      status: "Success",
      iss: "https://psp.example",
      iat: 1795166071,
      reference: "RRs8AIeCNgXRl8DsBU9hmcq-DbD6P1tMSvjpQk62fNg",
      payment_id: "pay_1",
      psp_confirmation_id: "psp_1",
      network_confirmation_id: "nw_1",
    },
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}/receipts",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}/evidence",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}/artifacts/x402",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  {
    method: "GET",
    path: "/v1/assessments/{id}/artifacts/acp",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).assessmentId,
  },
  { method: "GET", path: "/v1/mandates", scope: "assess:read", filters: { kind: UNKNOWN } },
  {
    method: "GET",
    path: "/v1/mandates/{id}",
    scope: "assess:read",
    resource: async (org) => (await assessOnce(org)).mandateId,
  },
  {
    method: "POST",
    path: "/v1/policies",
    liveOnly: true,
    scope: "policy:write",
    body: { name: "p", rules: { max_amount: 1000 } },
  },
  {
    method: "GET",
    path: "/v1/policies",
    scope: "policy:read",
    filters: { status: UNKNOWN, shadow: UNKNOWN },
  },
  {
    method: "GET",
    path: "/v1/policies/{id}",
    scope: "policy:read",
    resource: newPolicy,
  },
  {
    method: "POST",
    path: "/v1/policies/{id}/activate",
    liveOnly: true,
    scope: "policy:write",
    resource: newPolicy,
  },
  {
    method: "POST",
    path: "/v1/policies/{id}/shadow",
    liveOnly: true,
    scope: "policy:write",
    resource: newPolicy,
  },
  {
    method: "DELETE",
    path: "/v1/policies/{id}/shadow",
    liveOnly: true,
    scope: "policy:write",
    resource: newPolicy,
  },
  {
    method: "GET",
    path: "/v1/policies/{id}/shadow-report",
    scope: "policy:read",
    resource: newPolicy,
    filters: { from: BAD_DATE, to: BAD_DATE, samples: "-1" },
  },
  {
    method: "POST",
    path: "/v1/policies/{id}/backtest",
    scope: "policy:read",
    body: {},
    resource: newPolicy,
  },
  { method: "POST", path: "/v1/risk-models", scope: "policy:write", body: {} },
  {
    method: "GET",
    path: "/v1/risk-models",
    scope: "policy:read",
    filters: { status: UNKNOWN },
  },
  { method: "GET", path: "/v1/risk-models/{id}", scope: "policy:read", resource: newRiskModel },
  {
    method: "GET",
    path: "/v1/risk-models/{id}/params",
    scope: "policy:read",
    resource: trainedRiskModel,
  },
  {
    method: "POST",
    path: "/v1/risk-models/{id}/activate",
    scope: "policy:write",
    resource: trainedRiskModel,
  },
  {
    method: "POST",
    path: "/v1/risk-models/{id}/shadow",
    scope: "policy:write",
    resource: trainedRiskModel,
  },
  {
    method: "GET",
    path: "/v1/risk-models/{id}/shadow-report",
    scope: "policy:read",
    resource: newRiskModel,
    filters: { from: BAD_DATE, to: BAD_DATE, samples: "-1" },
  },
  {
    method: "POST",
    path: "/v1/eval-sets",
    liveOnly: true,
    scope: "policy:write",
    body: EVAL_SET,
  },
  { method: "GET", path: "/v1/eval-sets", scope: "policy:read" },
  { method: "GET", path: "/v1/eval-sets/{id}", scope: "policy:read", resource: newEvalSet },
  {
    method: "DELETE",
    path: "/v1/eval-sets/{id}",
    liveOnly: true,
    scope: "policy:write",
    resource: newEvalSet,
  },
  {
    method: "POST",
    path: "/v1/evals/run",
    liveOnly: true,
    scope: "policy:write",
    body: {
      eval_set_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
      policy_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
    },
  },
  {
    method: "GET",
    path: "/v1/evals",
    scope: "policy:read",
    filters: { eval_set_id: BAD_UUID, policy_id: BAD_UUID },
  },
  { method: "GET", path: "/v1/evals/{id}", scope: "policy:read", resource: newEval },
  {
    method: "POST",
    path: "/v1/history/transactions",
    scope: "policy:write",
    // A made-up agent: past the credential, the scope and the mode, a 400 naming the record.
    body: {
      records: [
        {
          id: "txn-1",
          occurred_at: "2026-01-02T03:04:05Z",
          agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
          payee: { id: "merchant_1" },
          amount: { amount: 1000, currency: "USD" },
        },
      ],
    } satisfies RequestBody<"/v1/history/transactions", "POST">,
  },
  { method: "GET", path: "/v1/history/imports", scope: "policy:read" },

  {
    method: "POST",
    path: "/v1/action-mandates",
    liveOnly: true,
    scope: "assess:write",
    body: {
      agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
      action: "payment.capture",
      resource: "merchant:acme/*",
      expires_at: "2099-01-01T00:00:00Z",
    },
  },
  {
    method: "GET",
    path: "/v1/action-mandates",
    scope: "assess:read",
    filters: { status: UNKNOWN, agent_id: BAD_UUID },
  },
  {
    method: "GET",
    path: "/v1/action-mandates/{id}",
    scope: "assess:read",
    resource: async (org) => (await newMandate(org)).id,
  },
  {
    method: "POST",
    path: "/v1/action-mandates/{id}/revoke",
    liveOnly: true,
    scope: "assess:write",
    resource: async (org) => (await newMandate(org)).id,
  },
  {
    method: "POST",
    path: "/v1/action-mandates/{id}/decisions",
    liveOnly: true,
    scope: "assess:write",
    body: { ...CAPTURE, grant: false },
    resource: async (org) => (await newMandate(org)).id,
  },
  {
    method: "GET",
    path: "/v1/action-decisions/{id}",
    scope: "assess:read",
    resource: newDecision,
  },
  {
    method: "GET",
    path: "/v1/action-decisions/{id}/incident-pack",
    scope: "audit:read",
    resource: newDecision,
  },
  {
    method: "POST",
    path: "/v1/action-grants/redeem",
    scope: "assess:write",
    body: { grant: "e30.e30.AAAA", ...CAPTURE },
  },
  {
    method: "POST",
    path: "/v1/webhook-endpoints",
    scope: "webhooks:write",
    body: { url: `${env.TEST_FIXTURE_URL}/hooks/routes`, eventTypes: ["assessment.denied"] },
  },
  { method: "GET", path: "/v1/webhook-endpoints", scope: "webhooks:read" },
  {
    method: "DELETE",
    path: "/v1/webhook-endpoints/{id}",
    scope: "webhooks:write",
    resource: newEndpoint,
  },
  {
    method: "POST",
    path: "/v1/webhook-endpoints/{id}/rotate-secret",
    scope: "webhooks:write",
    body: { expires_in: 60 },
    resource: newEndpoint,
  },
  {
    method: "GET",
    path: "/v1/webhook-endpoints/{id}/deliveries",
    scope: "webhooks:read",
    resource: newEndpoint,
    filters: { status: UNKNOWN },
  },
  { method: "POST", path: "/v1/webhooks/dispatch", scope: "webhooks:write" },
  { method: "GET", path: "/v1/billing", scope: "assess:read" },
  {
    method: "POST",
    path: "/v1/billing/spending_cap",
    liveOnly: true,
    scope: "assess:write",
    body: { amount: 100 },
  },
  {
    method: "POST",
    path: "/v1/billing/spend_confirmations",
    liveOnly: true,
    scope: "assess:write",
    sessionOnly: true,
    body: { spending_cap: null },
  },
  {
    method: "POST",
    path: "/v1/billing/checkout",
    liveOnly: true,
    scope: "assess:write",
    body: {
      plan: "starter",
      success_url: "https://console.example.com/done",
      cancel_url: "https://console.example.com/",
    },
  },
  // evidence: artifacts
  {
    method: "POST",
    path: "/v1/artifacts",
    scope: ["artifact:write", "assess:write"],
    body: { digest: `sha256:${"a1".repeat(32)}`, name: "routes.pdf" },
  },
  { method: "GET", path: "/v1/artifacts", scope: "audit:read", filters: { digest: UNKNOWN } },
  { method: "GET", path: "/v1/artifacts/{id}", scope: "audit:read", resource: newArtifact },
  // evidence: sessions
  {
    method: "POST",
    path: "/v1/sessions",
    scope: ["session:write", "assess:write", "artifact:write"],
    body: { agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", external_id: "routes" },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/events",
    scope: ["session:write", "assess:write", "artifact:write"],
    body: {
      events: [
        {
          sequence: 1,
          type: "message",
          time: "2026-01-01T00:00:00.000Z",
          payload_digest: `sha256:${"ab".repeat(32)}`,
          prev_hash: "0".repeat(64),
          hash: "cd".repeat(32),
        },
      ],
    },
    resource: newSession,
  },
  { method: "GET", path: "/v1/sessions", scope: "audit:read", filters: { agent_id: BAD_UUID } },
  { method: "GET", path: "/v1/sessions/{id}", scope: "audit:read", resource: newSession },
  { method: "GET", path: "/v1/sessions/{id}/events", scope: "audit:read", resource: newSession },
  { method: "GET", path: "/v1/sessions/{id}/verify", scope: "audit:read", resource: newSession },
  // evidence: coverage
  {
    method: "POST",
    path: "/v1/control-coverage/effects",
    scope: "assess:write",
    body: {
      effect: "payment.executed",
      observer: "routes",
      reference: "pi_routes",
      occurred_at: "2026-01-01T00:00:00Z",
    },
  },
  {
    method: "GET",
    path: "/v1/control-coverage/effects",
    scope: "audit:read",
    filters: { has_gate: UNKNOWN },
  },
  {
    method: "GET",
    path: "/v1/control-coverage/effects/{id}",
    scope: "audit:read",
    resource: newEffect,
  },
  {
    method: "GET",
    path: "/v1/control-coverage",
    scope: "audit:read",
    filters: { from: BAD_DATE, to: BAD_DATE },
  },
  {
    method: "GET",
    path: "/v1/control-coverage/report",
    scope: "audit:read",
    filters: { from: BAD_DATE, to: BAD_DATE },
  },
  // history: test clocks, test mode only
  {
    method: "POST",
    path: "/v1/test-clocks",
    scope: "assess:write",
    testOnly: true,
    body: { frozen_time: "2026-01-01T00:00:00Z" },
  },
  { method: "GET", path: "/v1/test-clocks", scope: "assess:read", testOnly: true },
  {
    method: "GET",
    path: "/v1/test-clocks/{id}",
    scope: "assess:read",
    testOnly: true,
    resource: newTestClock,
  },
  {
    method: "POST",
    path: "/v1/test-clocks/{id}/advance",
    scope: "assess:write",
    testOnly: true,
    body: { frozen_time: "2026-01-02T00:00:00Z" },
    resource: newTestClock,
  },
  {
    method: "DELETE",
    path: "/v1/test-clocks/{id}",
    scope: "assess:write",
    testOnly: true,
    resource: newTestClock,
  },
];

/** The mode the common tests call a route in: test for a test-only route, else live. */
export function modeOf(route: RouteCase): "live" | "test" {
  return route.testOnly ? "test" : "live";
}

/** A test clock of the org at 2026-01-01, made by its owner in test mode. */
export async function newTestClock(org: TestOrg) {
  const res = await call("/v1/test-clocks", {
    method: "POST",
    token: org.token,
    headers: { "x-mode": "test" },
    body: { frozen_time: "2026-01-01T00:00:00Z" },
  });
  if (res.status !== 201) throw new Error(`test clock creation failed: ${res.status} ${res.text}`);
  return res.json.id;
}

/** An effect the org's owner reported (live mode). */
async function newEffect(org: TestOrg) {
  const res = await call("/v1/control-coverage/effects", {
    method: "POST",
    token: org.token,
    body: {
      effect: "payment.executed",
      observer: "routes",
      reference: `pi_${crypto.randomUUID()}`,
      occurred_at: new Date().toISOString(),
    },
  });
  if (res.status !== 201) throw new Error(`effect report failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** An ALLOW without a grant on a fresh mandate of the org. */
async function newDecision(org: TestOrg) {
  const mandate = await newMandate(org);
  const res = await call(`/v1/action-mandates/${mandate.id}/decisions`, {
    method: "POST",
    token: org.token,
    body: { ...CAPTURE, grant: false },
  });
  if (res.status !== 201) throw new Error(`decision failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** One assessment of a fresh payment mandate in the org, as its owner (live) or with a key. */
export async function assessOnce(org: TestOrg, key?: string) {
  const res = await call("/v1/assess", {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    body: {
      mandate: {
        vct: "mandate.payment.1",
        transaction_id: crypto.randomUUID(),
        payee: { id: "merchant_1", name: "Demo Merchant" },
        payment_amount: { amount: 1000, currency: "USD" },
        payment_instrument: { id: "stub", type: "card" },
      },
    },
  });
  if (res.status !== 200) throw new Error(`assess failed: ${res.status} ${res.text}`);
  return res.json as { assessmentId: string; mandateId: string };
}

/** A review item: an assessment of an unknown agent is a `review`, which opens one. */
async function newReview(org: TestOrg) {
  const { assessmentId } = await assessOnce(org);
  const res = await call("/v1/reviews?order=desc&limit=1", { token: org.token });
  const item = res.json.data[0];
  if (res.status !== 200 || item?.assessment_id !== assessmentId) {
    throw new Error(`no review opened: ${res.status} ${res.text}`);
  }
  return item.id as string;
}

async function newPolicy(org: TestOrg) {
  const res = await call("/v1/policies", {
    method: "POST",
    token: org.token,
    body: { name: "limits", rules: { max_amount: 5000 } },
  });
  if (res.status !== 201) throw new Error(`policy creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** A risk model of the org's live mode (with no history it ends `failed`: any status will do). */
async function newRiskModel(org: TestOrg) {
  const res = await call("/v1/risk-models", { method: "POST", token: org.token, body: {} });
  if (res.status !== 202) throw new Error(`risk model creation failed: ${res.status} ${res.text}`);
  return res.json.id;
}

/** A trained (`ready`) risk model of the org's live mode, on a seeded history. */
async function trainedRiskModel(org: TestOrg) {
  const asOf = Date.parse("2026-10-01T00:00:00.000Z");
  await seedHistory(org.id, true, { asOf, seed: 7 });
  const model = await trainModel({ token: org.token }, { as_of: new Date(asOf).toISOString() });
  if (model.status !== "ready") throw new Error(`risk model not trained: ${model.failure_reason}`);
  return model.id;
}

async function newEndpoint(org: TestOrg) {
  const res = await call("/v1/webhook-endpoints", {
    method: "POST",
    token: org.token,
    body: { url: `${env.TEST_FIXTURE_URL}/hooks/routes`, eventTypes: ["assessment.denied"] },
  });
  if (res.status !== 201) throw new Error(`endpoint creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

async function newEvalSet(org: TestOrg) {
  const res = await call("/v1/eval-sets", {
    method: "POST",
    token: org.token,
    body: EVAL_SET,
  });
  if (res.status !== 201) throw new Error(`eval set creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** An evaluation of a fresh policy against a fresh set of the org. */
async function newEval(org: TestOrg) {
  const body = { eval_set_id: await newEvalSet(org), policy_id: await newPolicy(org) };
  const res = await call("/v1/evals/run", { method: "POST", token: org.token, body });
  if (res.status !== 201) throw new Error(`eval run failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** A credential issuer of the org, with inline keys. */
async function newIssuer(org: TestOrg) {
  const res = await call("/v1/credential-issuers", {
    method: "POST",
    token: org.token,
    body: { name: "Demo Bank", jwks: { keys: [ISSUER_JWK] } },
  });
  if (res.status !== 201) throw new Error(`issuer creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** A freshly registered artifact of the org (a random digest). */
async function newArtifact(org: TestOrg) {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const digest = `sha256:${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  const res = await call("/v1/artifacts", {
    method: "POST",
    token: org.token,
    body: { digest, name: "routes.bin" },
  });
  if (res.status !== 201) {
    throw new Error(`artifact registration failed: ${res.status} ${res.text}`);
  }
  return res.json.id as string;
}

/** An empty session of a fresh agent of the org. */
async function newSession(org: TestOrg) {
  const agent = await newAgent(org);
  const res = await call("/v1/sessions", {
    method: "POST",
    token: org.token,
    body: { agent_id: agent.id, external_id: `routes-${crypto.randomUUID()}` },
  });
  if (res.status !== 201) throw new Error(`session creation failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}
