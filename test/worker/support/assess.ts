import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import type { Env } from "../../../src/env";
import worker from "../../../workers/main";
import checkoutExample from "../../fixtures/ap2/checkout_mandate.json";
import openCheckoutExample from "../../fixtures/ap2/open_checkout_mandate.json";
import openPaymentExample from "../../fixtures/ap2/open_payment_mandate.json";
import paymentExample from "../../fixtures/ap2/payment_mandate.json";
import { BASE, type Call, call, newOrg, type RequestBody, type TestOrg } from "./api";
import { ownerSql } from "./db";
import { type AgentKeyPair, keyPair, newAgent } from "./identity";

/**
 * Helpers of the assess suites (POST /v1/assess, the read API, policies). Everything here is
 * written from the spec and docs/assess.md: the canonical form and the hash are computed
 * independently of src/ so that a shared mistake cannot hide.
 */

export type Json = Record<string, any>;

export const MANDATE_TYPES = ["payment", "open_payment", "checkout", "open_checkout"] as const;
export type MandateType = (typeof MANDATE_TYPES)[number];
export const KINDS = ["ap2_payment", "message_send", "voice_call", "custom"] as const;
export const DECISIONS = ["approve", "review", "deny"] as const;
export const RISK_LEVELS = ["normal", "elevated", "highest"] as const;

/** The AP2 reference examples, as fresh deep copies. */
export const examples: Record<MandateType, () => Json> = {
  payment: () => structuredClone(paymentExample),
  open_payment: () => structuredClone(openPaymentExample),
  checkout: () => structuredClone(checkoutExample),
  open_checkout: () => structuredClone(openCheckoutExample),
};

/** A payment mandate of its own (a unique transaction id), so its content hash is new. */
export function payment(changes: Json = {}): Json {
  return {
    ...examples.payment(),
    transaction_id: `tx-${crypto.randomUUID()}`,
    ...changes,
  };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * An open payment mandate that is current (the reference example expired in April 2026),
 * bound to `jwk`, with a unique reference so its content hash is new.
 */
export function openPayment(jwk?: Json, changes: Json = {}): Json {
  const mandate = examples.open_payment();
  if (jwk) mandate.cnf = { jwk };
  mandate.constraints[2].conditional_transaction_id = `ref-${crypto.randomUUID()}`;
  mandate.iat = nowSeconds() - 5;
  mandate.exp = nowSeconds() + 3600;
  return { ...mandate, ...changes };
}

/** The public members a mandate's `cnf.jwk` may carry (it is a closed EC P-256 JWK). */
export function holderJwk(pair: AgentKeyPair): Json {
  const { kty, crv, x, y } = pair.publicJwk;
  return { kty, crv, x, y };
}

/** POST /v1/assess with a key: the body is the route's request schema. */
export function assess(
  key: string,
  body: RequestBody<"/v1/assess", "POST">,
  options: Pick<Call, "token" | "headers"> = {},
) {
  return call("/v1/assess", { method: "POST", key, body, ...options });
}

/**
 * POST /v1/assess with a body the request schema would refuse (hostile, malformed, partial, or
 * raw text), sent as given: the escape is in the name.
 */
export function assessRaw(
  key: string,
  body: unknown,
  options: Pick<Call, "token" | "headers"> = {},
) {
  return call("/v1/assess", { method: "POST", key, body, raw: true, ...options });
}

/** POST /v1/assess that must answer 200; returns the body. */
export async function assessOk(
  key: string,
  body: RequestBody<"/v1/assess", "POST">,
  headers?: Record<string, string>,
) {
  const res = await assess(key, body, { headers });
  if (res.status !== 200) throw new Error(`assess failed: ${res.status} ${res.text}`);
  return res.json;
}

/** An org with a live key holding every data scope. */
export async function orgWithKey(mode: "live" | "test" = "live") {
  const org = await newOrg();
  const { key } = await org.key(undefined, mode);
  return { org, key };
}

/** An agent of the org that an explicit `agent_id` names. */
export async function agentOf(org: TestOrg) {
  return (await newAgent(org)) as Json;
}

export { keyPair };

// --- RFC 8785 (JCS) and SHA-256, independent of src/lib/canonical.ts ---

/** RFC 8785: keys sorted by UTF-16 code units, ECMAScript number and string serialization. */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error("not finite");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object)
    .filter((k) => object[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(object[k])}`).join(",")}}`;
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The mandate as a verifier recomputes it: our namespace removed, and risk_data if empty. */
export function withoutOurNamespace(mandate: Json): Json {
  const copy = structuredClone(mandate);
  if (copy.risk_data && typeof copy.risk_data === "object" && !Array.isArray(copy.risk_data)) {
    delete copy.risk_data["agent-risk"];
    if (Object.keys(copy.risk_data).length === 0) delete copy.risk_data;
  }
  return copy;
}

export async function mandateHash(mandate: Json): Promise<string> {
  return `sha256:${await sha256Hex(jcs(withoutOurNamespace(mandate)))}`;
}

export function decodeJwsPart(part: string | undefined): Json {
  if (part === undefined) throw new Error("not a compact JWS: a part is missing");
  const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) =>
    c.charCodeAt(0),
  );
  return JSON.parse(new TextDecoder().decode(bytes));
}

export async function jwks(): Promise<{ kid: string; x: string; [k: string]: unknown }[]> {
  const res = await call("/.well-known/jwks.json");
  expect(res.status).toBe(200);
  return res.json.keys;
}

// --- The shapes of the spec ---

const isoDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Every Outcome field present and typed as the spec's Outcome table says. */
export function expectOutcome(outcome: Json) {
  expect(Object.keys(outcome).sort()).toEqual(
    [
      "agent",
      "audit",
      "confidences",
      "created",
      "credential",
      "id",
      "kind",
      "latency_ms",
      "livemode",
      "mandate_receipt",
      "object",
      "outcome",
      "refinement",
      "rejection_reasons",
      "risk_payload",
      "signals",
    ].sort(),
  );
  expect(outcome.object).toBe("assessment");
  expect(outcome.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(outcome.created).toMatch(isoDate);
  expect(Number.isNaN(Date.parse(outcome.created))).toBe(false);
  expect(typeof outcome.livemode).toBe("boolean");
  expect(KINDS).toContain(outcome.kind);

  const o = outcome.outcome;
  expect(Object.keys(o).sort()).toEqual(
    ["decision", "policy_version", "reason", "risk_level", "risk_score"].sort(),
  );
  expect(DECISIONS).toContain(o.decision);
  expect(RISK_LEVELS).toContain(o.risk_level);
  expect(Number.isInteger(o.risk_score)).toBe(true);
  expect(o.risk_score).toBeGreaterThanOrEqual(0);
  expect(o.risk_score).toBeLessThanOrEqual(100);
  expect(typeof o.reason).toBe("string");
  expect(o.reason.length).toBeGreaterThan(0);
  expect(Number.isInteger(o.policy_version)).toBe(true);
  expect(o.policy_version).toBeGreaterThanOrEqual(0);

  expect(Object.keys(outcome.confidences).sort()).toEqual(
    [
      "agent_identity",
      "behavioral_risk",
      "mandate_validity",
      "policy_adherence",
      "recipient_risk",
    ].sort(),
  );
  for (const value of Object.values(outcome.confidences)) {
    expect(typeof value).toBe("number");
    expect(value).toBeGreaterThanOrEqual(0);
    expect(value).toBeLessThanOrEqual(1);
  }

  expect(Array.isArray(outcome.signals)).toBe(true);
  for (const signal of outcome.signals) {
    expect(Object.keys(signal).sort()).toEqual(["category", "severity", "type"]);
    for (const v of Object.values(signal)) expect(typeof v).toBe("string");
  }
  expect(Array.isArray(outcome.rejection_reasons)).toBe(true);
  for (const reason of outcome.rejection_reasons) {
    expect(Object.keys(reason).sort()).toEqual(["category", "description", "key"]);
    for (const v of Object.values(reason)) expect(typeof v).toBe("string");
  }

  const rp = outcome.risk_payload;
  expect(Object.keys(rp).sort()).toEqual(["alg", "jws", "kid", "verify_url"]);
  expect(rp.jws).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  expect(typeof rp.kid).toBe("string");
  expect(rp.alg).toBe("EdDSA");
  expect(rp.verify_url).toMatch(/^https?:\/\/.+\/\.well-known\/jwks\.json$/);

  expect(Object.keys(outcome.audit).sort()).toEqual(["entry_id", "sequence", "status"]);
  expect(typeof outcome.audit.entry_id).toBe("string");
  expect(Number.isInteger(outcome.audit.sequence)).toBe(true);
  expect(["pending", "anchored"]).toContain(outcome.audit.status);

  if (outcome.refinement !== null) expect(typeof outcome.refinement.status).toBe("string");
  if (outcome.agent !== null) {
    expect(typeof outcome.agent.id).toBe("string");
    expect(Number.isInteger(outcome.agent.trust_score)).toBe(true);
    expect(typeof outcome.agent.risk_tier).toBe("string");
  }
  expect(Number.isInteger(outcome.latency_ms)).toBe(true);
  expect(outcome.latency_ms).toBeGreaterThanOrEqual(0);
}

/** Every AssessResponse field present and consistent with its outcome. */
export function expectAssessResponse(body: Json) {
  expect(DECISIONS).toContain(body.decision);
  expect(Number.isInteger(body.score)).toBe(true);
  expect(body.score).toBeGreaterThanOrEqual(0);
  expect(body.score).toBeLessThanOrEqual(100);
  expect(typeof body.assessmentId).toBe("string");
  expect(typeof body.mandateId).toBe("string");
  expect(typeof body.riskPayloadJws).toBe("string");
  expectOutcome(body.outcome);
  expect(body.decision).toBe(body.outcome.outcome.decision);
  expect(body.score).toBe(body.outcome.outcome.risk_score);
  expect(body.assessmentId).toBe(body.outcome.id);
  expect(body.riskPayloadJws).toBe(body.outcome.risk_payload.jws);
}

/** Score, level and decision never disagree (risk-model.md, Decision). */
export function expectConsistentBand(outcome: Json) {
  const { decision, risk_level, risk_score } = outcome.outcome;
  const band =
    risk_score >= 70 ? ["deny", "highest"] : risk_score >= 40 ? ["review", "elevated"] : null;
  if (band) expect([decision, risk_level]).toEqual(band);
  else expect([decision, risk_level]).toEqual(["approve", "normal"]);
}

export function signalTypes(outcome: Json): string[] {
  return outcome.signals.map((s: Json) => s.type);
}

export function reasonKeys(outcome: Json): string[] {
  return outcome.rejection_reasons.map((r: Json) => r.key);
}

// --- Side effects, read as the database owner ---

export async function countRows(orgId: string) {
  const [row] = (await ownerSql`
    select
      (select count(*)::int from assessments where org_id = ${orgId}) as assessments,
      (select count(*)::int from mandates where org_id = ${orgId}) as mandates,
      (select count(*)::int from audit_entries
        where org_id = ${orgId} and type = 'assessment.completed') as ledger,
      (select count(*)::int from events
        where org_id = ${orgId} and type like 'assessment.%') as events`) as Json[];
  return row as { assessments: number; mandates: number; ledger: number; events: number };
}

export async function assessmentEvents(orgId: string, assessmentId?: string) {
  const rows = (await ownerSql`
    select type, data from events
    where org_id = ${orgId} and type like 'assessment.%'
    order by id`) as { type: string; data: Json }[];
  return assessmentId ? rows.filter((r) => r.data.assessment_id === assessmentId) : rows;
}

// --- Policies ---

export async function createPolicy(
  org: TestOrg,
  rules: Json,
  options: { activate?: boolean; name?: string; key?: string } = {},
) {
  const res = await call("/v1/policies", {
    method: "POST",
    ...(options.key ? { key: options.key } : { token: org.token }),
    body: { name: options.name ?? "limits", rules, activate: options.activate ?? true },
  });
  if (res.status !== 201) throw new Error(`policy creation failed: ${res.status} ${res.text}`);
  return res.json;
}

// --- The Worker with an overridden environment (fault injection) ---

export async function fetchWith(
  override: Partial<Env> & Record<string, unknown>,
  path: string,
  init: RequestInit = {},
) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`${BASE}${path}`, init),
    { ...env, ...override } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, headers: response.headers };
}

export function assessWith(
  override: Partial<Env> & Record<string, unknown>,
  key: string,
  body: unknown,
) {
  return fetchWith(override, "/v1/assess", {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}
