import { env } from "cloudflare:test";
import { Validator } from "@cfworker/json-schema";
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import acpDelegatePayment from "../fixtures/acp/schema.delegate_payment.json";
import { call, callRaw } from "./support/api";
import {
  agentOf,
  assess,
  assessOk,
  assessRaw,
  examples,
  type Json,
  orgWithKey,
  payment,
} from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// Issue 42 §4 (docs/rails.md): the x402 and ACP artefacts of one verdict, derived from the
// stored outcome and signed after the commit.

/**
 * x402's types, copied from x402-foundation/x402 PR #2422
 * (`typescript/packages/core/src/types/risk-check.ts`, commit e78661e): `RiskCheckResult` and
 * `RiskCheckDiscovery`, as zod, strict so that a field the PR does not define fails.
 */
const X402RiskCheckResult = z.strictObject({
  checked: z.boolean(),
  score: z.number().optional(),
  tier: z.enum(["low", "medium", "high", "critical"]).optional(),
  provider: z.string().optional(),
  categories: z.array(z.string()).optional(),
  jws: z.string().optional(),
  jwks_url: z.string().optional(),
  checked_at: z.string().optional(),
  expires_at: z.string().optional(),
});
const X402RiskCheckDiscovery = z.strictObject({
  name: z.string(),
  version: z.string(),
  description: z.string().optional(),
  endpoint: z.string(),
  method: z.enum(["POST", "GET"]),
  pricing: z
    .object({ amount: z.string(), currency: z.string(), protocol: z.string(), network: z.string() })
    .optional(),
  signals: z.array(z.string()).optional(),
  chains_supported: z.array(z.string()).optional(),
  response_time_ms: z.string().optional(),
  attestation: z
    .object({ jwks_url: z.string(), algorithm: z.string(), kid: z.string(), ttl: z.string() })
    .optional(),
});

/** ACP's `risk_signals` (`DelegatePaymentRequest.risk_signals`) against ACP's own schema. */
const acpRiskSignals = new Validator(
  { $defs: acpDelegatePayment.$defs, type: "array", items: { $ref: "#/$defs/RiskSignal" } },
  "2020-12",
);
/** ACP's whole `DelegatePaymentRequest`, to show the signals drop into its example. */
const acpRequest = new Validator(
  { $defs: acpDelegatePayment.$defs, $ref: "#/$defs/DelegatePaymentRequest" },
  "2020-12",
);

const BASE = env.PUBLIC_BASE_URL as string;
const DID = `did:web:${encodeURIComponent(new URL(BASE).host)}`;

async function keySet() {
  const res = await call("/.well-known/jwks.json");
  return createLocalJWKSet(res.json as JSONWebKeySet);
}

/** The Risk Payload's claims, as the assessment's answer carried them. */
function payloadClaims(body: Json): Json {
  const [, payload] = (body.riskPayloadJws as string).split(".");
  return JSON.parse(atob((payload as string).replace(/-/g, "+").replace(/_/g, "/")));
}

/** An assessment's answer, read loosely: the test checks its shape itself. */
async function answer(key: string, body: Parameters<typeof assessOk>[1]): Promise<Json> {
  return (await assessOk(key, body)) as Json;
}

const CAP = { approve: 100, review: 59, deny: 29 } as const;
const tierOf = (score: number) =>
  score >= 80 ? "low" : score >= 60 ? "medium" : score >= 30 ? "high" : "critical";

describe("POST /v1/assess with artifacts", () => {
  it("answers without `artifacts` when the request names none, as before", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, { mandate: payment() });
    expect(Object.keys(body)).toEqual([
      "decision",
      "score",
      "assessmentId",
      "mandateId",
      "riskPayloadJws",
      "mandate",
      "mandate_receipt",
      "outcome",
      "idempotency_key",
    ]);
  });

  it("answers x402's RiskCheckResult, its JWS verified against the key set with exact claims", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, {
      mandate: payment(),
      audience: "https://resource.example",
      artifacts: ["x402"],
    });
    expect(Object.keys(body.artifacts)).toEqual(["x402"]);
    const result = X402RiskCheckResult.parse(body.artifacts.x402);
    const risk = payloadClaims(body);
    const decision = body.decision as keyof typeof CAP;
    const score = Math.min(100 - body.score, CAP[decision]);
    const { payload, protectedHeader } = await jwtVerify(result.jws as string, await keySet(), {
      issuer: DID,
      audience: "https://resource.example",
      typ: "risk-check+jwt",
      currentDate: new Date(risk.iat * 1000),
    });
    expect(payload).toEqual({
      iss: DID,
      sub: body.assessmentId,
      score,
      tier: tierOf(score),
      iat: risk.iat,
      exp: risk.exp,
      aud: "https://resource.example",
      categories: ["identity", "behavioral"],
      input_hash: risk.mandate_hash,
    });
    // ES256, the key every new artefact is signed with (the ADR, point 1).
    expect(protectedHeader.alg).toBe("ES256");
    expect(protectedHeader.kid).toBeTypeOf("string");
    expect(result).toEqual({
      checked: true,
      score,
      tier: tierOf(score),
      provider: DID,
      categories: ["identity", "behavioral"],
      jws: result.jws,
      jwks_url: `${BASE}/.well-known/jwks.json`,
      checked_at: new Date(risk.iat * 1000).toISOString(),
      expires_at: new Date(risk.exp * 1000).toISOString(),
    });
  });

  it("answers ACP risk_signals that ACP's schema accepts, signed", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, { mandate: payment(), artifacts: ["acp"] });
    expect(Object.keys(body.artifacts)).toEqual(["acp"]);
    const { risk_signals, jws, jwks_url } = body.artifacts.acp;
    expect(acpRiskSignals.validate(risk_signals).valid).toBe(true);
    expect(body.decision).toBe("review");
    expect(risk_signals).toEqual([
      { type: "card_testing", score: body.score, action: "manual_review" },
    ]);
    const example = acpDelegatePayment.$defs.DelegatePaymentRequest.example;
    expect(acpRequest.validate({ ...example, risk_signals }).valid).toBe(true);
    expect(
      acpRequest.validate({ ...example, risk_signals: [{ ...risk_signals[0], x: 1 }] }).valid,
    ).toBe(false);
    expect(jwks_url).toBe(`${BASE}/.well-known/jwks.json`);
    const risk = payloadClaims(body);
    const { payload } = await jwtVerify(jws, await keySet(), {
      issuer: BASE,
      typ: "acp-risk-signals+jwt",
      currentDate: new Date(risk.iat * 1000),
    });
    expect(payload).toEqual({
      iss: BASE,
      sub: body.assessmentId,
      iat: risk.iat,
      exp: risk.exp,
      input_hash: risk.mandate_hash,
      risk_signals,
    });
  });

  it("states a deny as x402 critical and ACP blocked", async () => {
    const { key } = await orgWithKey();
    // The reference open payment mandate expired in April 2026: its own bound denies it.
    const body = await answer(key, {
      mandate: examples.open_payment(),
      artifacts: ["acp", "x402", "acp"],
    });
    expect(body.decision).toBe("deny");
    // In ARTIFACT_NAMES order, each once, whatever the request's order.
    expect(Object.keys(body.artifacts)).toEqual(["x402", "acp"]);
    expect(body.artifacts.x402.score).toBe(Math.min(100 - body.score, 29));
    expect(body.artifacts.x402.tier).toBe("critical");
    expect(body.artifacts.acp.risk_signals).toEqual([
      { type: "card_testing", score: body.score, action: "blocked" },
    ]);
    expect(acpRiskSignals.validate(body.artifacts.acp.risk_signals).valid).toBe(true);
  });

  it("refuses an unknown artefact, or a list that is not one, naming the path", async () => {
    const { key } = await orgWithKey();
    const cases: [unknown, string][] = [
      [["x402", "stripe"], "artifacts.1"],
      ["x402", "artifacts"],
      [[{ name: "x402" }], "artifacts.0"],
      [Array(9).fill("x402"), "artifacts"],
    ];
    for (const [artifacts, path] of cases) {
      const res = await assessRaw(key, { mandate: payment(), artifacts });
      expect(res.status).toBe(400);
      expect(res.json).toEqual(
        errorBody("invalid_request", [{ path, message: expect.any(String) }]),
      );
    }
  });

  it("replays the same assessment with or without artefacts, restating the same claims", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    const plain = await answer(key, { mandate });
    const asked = await answer(key, { mandate, artifacts: ["x402", "acp"] });
    const again = await answer(key, { mandate, artifacts: ["x402", "acp"] });
    const bare = await answer(key, { mandate });
    const { artifacts, ...rest } = asked;
    expect(rest).toEqual(plain);
    expect(bare).toEqual(plain);
    expect(again.assessmentId).toBe(plain.assessmentId);
    const claims = (jws: string) => JSON.parse(atob(jws.split(".")[1] as string));
    expect(claims(again.artifacts.x402.jws)).toEqual(claims(artifacts.x402.jws));
    expect(claims(again.artifacts.acp.jws)).toEqual(claims(artifacts.acp.jws));
    expect({ ...again.artifacts.x402, jws: "" }).toEqual({ ...artifacts.x402, jws: "" });
  });
});

describe("GET /v1/assessments/{id}/artifacts/{rail}", () => {
  it("restates the artefacts of the assessment, later", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, { mandate: payment(), artifacts: ["x402", "acp"] });
    const x402 = await call(`/v1/assessments/${body.assessmentId}/artifacts/x402`, { key });
    expect(x402.status).toBe(200);
    expect({ ...x402.json, jws: "" }).toEqual({ ...body.artifacts.x402, jws: "" });
    const claims = (jws: string) => JSON.parse(atob(jws.split(".")[1] as string));
    expect(claims(x402.json.jws)).toEqual(claims(body.artifacts.x402.jws));
    const acp = await call(`/v1/assessments/${body.assessmentId}/artifacts/acp`, { key });
    expect(acp.status).toBe(200);
    expect(acp.json.risk_signals).toEqual(body.artifacts.acp.risk_signals);
  });

  it("is 404 for another rail's name", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, { mandate: payment() });
    const res = await callRaw(`/v1/assessments/${body.assessmentId}/artifacts/stripe`, { key });
    expect(res.status).toBe(404);
  });
});

describe("GET /.well-known/risk-check.json", () => {
  it("is public, x402's RiskCheckDiscovery, naming a key of the key set", async () => {
    const res = await call("/.well-known/risk-check.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    const doc = X402RiskCheckDiscovery.parse(res.json);
    expect(doc).toMatchObject({ endpoint: "/v1/assess", method: "POST", version: "0.1.0" });
    const keys = (await call("/.well-known/jwks.json")).json.keys as { kid: string; alg: string }[];
    const named = keys.find((k) => k.kid === doc.attestation?.kid);
    expect(doc.attestation?.algorithm).toBe("ES256");
    expect(named?.alg).toBe("ES256");
    expect(doc.attestation?.jwks_url).toBe(`${BASE}/.well-known/jwks.json`);
    expect(doc.attestation?.ttl).toMatch(/^[1-9][0-9]*[hms]$/);
  });

  it("names the key that signs the x402 attestation", async () => {
    const { key } = await orgWithKey();
    const body = await answer(key, { mandate: payment(), artifacts: ["x402"] });
    const doc = (await call("/.well-known/risk-check.json")).json;
    const header = decodeProtectedHeader(body.artifacts.x402.jws);
    expect(header).toEqual({
      alg: doc.attestation.algorithm,
      kid: doc.attestation.kid,
      typ: "risk-check+jwt",
    });
  });
});

// `assess` is the typed call; it must accept the request's `artifacts`.
void assess;

describe("POST /v1/assess with ACP checkout telemetry in risk_data", () => {
  const types = (body: Json) => (body.outcome.signals as { type: string }[]).map((s) => s.type);

  /** Waits for the digests remembered after the response (tenant.later) to be written. */
  async function remembered(agentId: string, n: number) {
    for (let i = 0; i < 50; i += 1) {
      const rows =
        await ownerSql`select kind, digest from agent_telemetry where agent_id = ${agentId}`;
      if (rows.length >= n) return rows;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the telemetry was not remembered");
  }

  it("signals a device and a network new for the agent, then not, keeping digests only", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const telemetry = {
      ip_address: "203.0.113.7",
      user_agent: "ChatGPT/2.0",
      accept_language: "en-US",
      session_id: "sess_abc123",
      device_fingerprint: `fp_${crypto.randomUUID()}`,
    };
    const first = await answer(key, {
      mandate: payment(),
      agent_id: agent.id,
      risk_data: telemetry,
    });
    expect(types(first)).toEqual(
      expect.arrayContaining(["device_first_seen", "network_first_seen"]),
    );
    const rows = await remembered(agent.id, 2);
    expect(rows.map((r: Json) => r.kind).sort()).toEqual(["device", "network"]);
    for (const row of rows) expect(row.digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Never stored raw: not in the mandate, the assessment, or anywhere the assessment wrote.
    const raw = await ownerSql`select
      (select count(*) from mandates where mandate::text like ${`%${telemetry.device_fingerprint}%`})::int
      + (select count(*) from assessments where to_jsonb(assessments)::text like ${"%203.0.113%"})::int as n`;
    expect(raw[0]?.n).toBe(0);
    // The same device, another address of the same /24: seen.
    const again = await answer(key, {
      mandate: payment(),
      agent_id: agent.id,
      risk_data: { ...telemetry, ip_address: "203.0.113.200" },
    });
    expect(types(again)).not.toContain("device_first_seen");
    expect(types(again)).not.toContain("network_first_seen");
    // Another device, another network.
    const moved = await answer(key, {
      mandate: payment(),
      agent_id: agent.id,
      risk_data: { ip_address: "2001:db8:1::5", device_fingerprint: "fp_other" },
    });
    expect(types(moved)).toEqual(
      expect.arrayContaining(["device_first_seen", "network_first_seen"]),
    );
  });

  it("signals nothing of telemetry without a known agent, or without telemetry", async () => {
    const { key } = await orgWithKey();
    const unknown = await answer(key, {
      mandate: payment(),
      risk_data: { ip_address: "198.51.100.1", device_fingerprint: "fp_x" },
    });
    expect(types(unknown)).not.toContain("device_first_seen");
    const none = await answer(key, { mandate: payment() });
    expect(types(none)).not.toContain("network_first_seen");
  });

  it("is not part of the idempotency identity: other telemetry replays the assessment", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    const first = await answer(key, { mandate, risk_data: { ip_address: "198.51.100.1" } });
    const again = await answer(key, { mandate, risk_data: { ip_address: "192.0.2.1" } });
    expect(again.assessmentId).toBe(first.assessmentId);
  });

  it("refuses telemetry outside ACP's RiskSignals, naming the path", async () => {
    const { key } = await orgWithKey();
    const cases: [unknown, string][] = [
      [{ ip_address: "999.1.1.1" }, "risk_data.ip_address"],
      [{ ip_address: "203.0.113.7/24" }, "risk_data.ip_address"],
      [{ ip_country: "US" }, "risk_data.ip_country"],
      [{ user_agent: "x".repeat(1025) }, "risk_data.user_agent"],
      [{ session_id: "a\nb" }, "risk_data.session_id"],
      [{ device_fingerprint: "" }, "risk_data.device_fingerprint"],
      ["203.0.113.7", "risk_data"],
    ];
    for (const [risk_data, path] of cases) {
      const res = await assessRaw(key, { mandate: payment(), risk_data });
      expect(res.status, JSON.stringify(risk_data)).toBe(400);
      expect(res.json).toEqual(
        errorBody("invalid_request", [{ path, message: expect.any(String) }]),
      );
    }
  });
});
