import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callRaw } from "./support/api";
import {
  assess,
  assessmentEvents,
  assessOk,
  assessRaw,
  countRows,
  decodeJwsPart,
  examples,
  expectAssessResponse,
  expectConsistentBand,
  type Json,
  jcs,
  jwks,
  MANDATE_TYPES,
  mandateHash,
  orgWithKey,
  payment,
  reasonKeys,
  sha256Hex,
  withoutOurNamespace,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody, refusedBody } from "./support/errors";
import { verifyJws } from "./support/jws";

describe("POST /v1/assess: the AP2 reference examples", () => {
  it.each(MANDATE_TYPES)("answers the %s example with a complete AssessResponse", async (type) => {
    const { key } = await orgWithKey();
    const mandate = examples[type]();
    const res = await assess(key, { mandate });
    expect(res.status).toBe(200);
    const body = res.json;
    expectAssessResponse(body);
    expectConsistentBand(body.outcome);
    expect(body.outcome.kind).toBe("ap2_payment");
    expect(body.outcome.livemode).toBe(true);
    expect(body.outcome.audit.status).toBe("pending");
    // A review opens a review item, which the refinement names; nothing else is refined.
    if (body.decision === "review") {
      expect(body.outcome.refinement).toMatchObject({ status: "open", decision: null });
    } else {
      expect(body.outcome.refinement).toBeNull();
    }
    expect(body.mandateId).not.toBe(body.assessmentId);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it.each(MANDATE_TYPES)(
    'returns the %s mandate as submitted plus risk_data["agent-risk"]',
    async (type) => {
      const { key } = await orgWithKey();
      const mandate = examples[type]();
      const body = await assessOk(key, { mandate });
      const { risk_data, ...rest } = body.mandate as Json;
      expect(rest).toEqual(mandate);
      expect(Object.keys(risk_data)).toEqual(["agent-risk"]);
      expect(risk_data["agent-risk"]).toEqual({
        assessment_id: body.assessmentId,
        jws: body.riskPayloadJws,
        kid: body.outcome.risk_payload.kid,
        alg: "EdDSA",
        verify_url: body.outcome.risk_payload.verify_url,
      });
    },
  );

  it("preserves the rest of risk_data when injecting its own namespace", async () => {
    const { key } = await orgWithKey();
    const riskData = { device: { ip: "203.0.113.7" }, session_age_s: 120, country: "US" };
    const mandate = payment({ risk_data: structuredClone(riskData) });
    const body = await assessOk(key, { mandate });
    const { "agent-risk": ours, ...theirs } = body.mandate.risk_data as Json;
    expect(theirs).toEqual(riskData);
    expect(ours.jws).toBe(body.riskPayloadJws);
    expect(withoutOurNamespace(body.mandate)).toEqual(mandate);
  });

  it("marks an assessment by a test key livemode false", async () => {
    const { key } = await orgWithKey("test");
    const body = await assessOk(key, { mandate: payment() });
    expect(body.outcome.livemode).toBe(false);
  });

  // api.md: "test keys produce livemode: false records", so test and live are never one
  // assessment, even for the same mandate in the same org.
  it("keeps live and test assessments of the same mandate apart", async () => {
    const { org, key: live } = await orgWithKey("live");
    const { key: test } = await org.key(undefined, "test");
    const mandate = payment();
    const a = await assessOk(live, { mandate });
    const b = await assessOk(test, { mandate });
    expect(a.outcome.livemode).toBe(true);
    expect(b.outcome.livemode).toBe(false);
    expect(b.assessmentId).not.toBe(a.assessmentId);
  });
});

describe("the Risk Payload", () => {
  it("verifies with WebCrypto Ed25519 against the public key set, under its kid", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const keys = await jwks();
    const [h] = body.riskPayloadJws.split(".");
    const header = decodeJwsPart(h);
    expect(header.alg).toBe("EdDSA");
    expect(header.typ).toBe("risk-payload+jwt");
    expect(header.kid).toBe(body.outcome.risk_payload.kid);
    expect(keys.map((k) => k.kid)).toContain(header.kid);
    const jwk = keys.find((k) => k.kid === header.kid)!;
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    const verified = await verifyJws(body.riskPayloadJws, keys);
    expect(verified.valid).toBe(true);
  });

  it("kid is the RFC 7638 thumbprint of the key in the set, and verify_url serves that set", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const { kid, verify_url } = body.outcome.risk_payload;
    const jwk = (await jwks()).find((k) => k.kid === kid)!;
    // RFC 7638 for an OKP key: the members crv, kty, x in lexicographic order, no whitespace.
    const digest = await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`),
    );
    const thumbprint = btoa(String.fromCharCode(...new Uint8Array(digest)))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect(kid).toBe(thumbprint);
    const served = await callRaw(new URL(verify_url).pathname);
    expect(served.status).toBe(200);
    expect(served.json.keys.map((k: Json) => k.kid)).toContain(kid);
  });

  it("does not verify once a claim is changed (the check above is a real one)", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const [h, p, s] = body.riskPayloadJws.split(".");
    const claims = decodeJwsPart(p);
    const forged = btoa(JSON.stringify({ ...claims, decision: "approve", risk_score: 0 }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect((await verifyJws(`${h}.${forged}.${s}`, await jwks())).valid).toBe(false);
  });

  it("binds the assessment, the mandate's hash, the decision, score, level and policy", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({ risk_data: { device: "d-1", country: "US" } });
    const before = Math.floor(Date.now() / 1000);
    const body = await assessOk(key, { mandate });
    const after = Math.ceil(Date.now() / 1000);
    const claims = JSON.parse((await verifyJws(body.riskPayloadJws, await jwks())).payload);
    const o = body.outcome;
    expect(claims).toMatchObject({
      iss: env.PUBLIC_BASE_URL,
      sub: o.id,
      assessment_id: o.id,
      mandate_id: body.mandateId,
      kind: "ap2_payment",
      decision: o.outcome.decision,
      risk_score: o.outcome.risk_score,
      risk_level: o.outcome.risk_level,
      policy_version: o.outcome.policy_version,
      agent_id: null,
    });
    expect(Number.isInteger(claims.iat)).toBe(true);
    expect(claims.iat).toBeGreaterThanOrEqual(before - 1);
    expect(claims.iat).toBeLessThanOrEqual(after + 1);
    // Computed here: sha256 over our own RFC 8785 form of the mandate as submitted.
    expect(claims.mandate_hash).toBe(`sha256:${await sha256Hex(jcs(mandate))}`);
    // ...and what a downstream verifier recomputes from the forwarded mandate.
    expect(await mandateHash(body.mandate)).toBe(claims.mandate_hash);
  });

  it("hashes a mandate whose only risk_data is ours as if risk_data were absent", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    const body = await assessOk(key, { mandate });
    const claims = decodeJwsPart(body.riskPayloadJws.split(".")[1]);
    expect(claims.mandate_hash).toBe(`sha256:${await sha256Hex(jcs(mandate))}`);
    expect(withoutOurNamespace(body.mandate)).toEqual(mandate);
  });

  it("an empty risk_data: the documented recomputation matches mandate_hash", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment({ risk_data: {} }) });
    const claims = decodeJwsPart(body.riskPayloadJws.split(".")[1]);
    expect(body.mandate.risk_data).toEqual({ "agent-risk": expect.any(Object) });
    expect(await mandateHash(body.mandate)).toBe(claims.mandate_hash);
  });

  it("hashes unicode and key order canonically (RFC 8785)", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({
      payee: { name: "Café ☕ 𝄞", id: "m-é", website: "https://ex.example/ü" },
      b: 1,
      a: [3, 2.5, 1e21, -0.000001],
      é: true,
    });
    const body = await assessOk(key, { mandate });
    const claims = decodeJwsPart(body.riskPayloadJws.split(".")[1]);
    expect(claims.mandate_hash).toBe(`sha256:${await sha256Hex(jcs(mandate))}`);
  });

  it("stores the same mandate hash on the mandate record", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    const body = await assessOk(key, { mandate });
    const claims = decodeJwsPart(body.riskPayloadJws.split(".")[1]);
    const record = await call(`/v1/mandates/${body.mandateId}`, { key });
    expect(record.status).toBe(200);
    expect(record.json.mandate_hash).toBe(claims.mandate_hash);
  });
});

describe("credentials", () => {
  it("answers 401 without a key, before looking at the body", async () => {
    const res = await call("/v1/assess", { method: "POST", raw: true, body: "{not json" });
    expect(res.status).toBe(401);
    expect(res.error).toEqual(refusedBody("missing"));
  });

  it("answers 403 to a key without assess:write, before looking at the body", async () => {
    const { org } = await orgWithKey();
    const { key } = await org.key(["assess:read", "agents:write", "policy:write"]);
    for (const body of [{ mandate: payment() }, "{not json", { nope: 1 }]) {
      const res = await assessRaw(key, body);
      expect(res.status).toBe(403);
      expect(res.error.error).toBe("insufficient_scope");
    }
  });

  it("accepts the key as a Bearer credential", async () => {
    const { key } = await orgWithKey();
    const res = await call("/v1/assess", {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: { mandate: payment() },
    });
    expect(res.status).toBe(200);
  });
});

/** Deletes the value at a dotted path from a copy. */
function without(mandate: Json, path: string): Json {
  const copy = structuredClone(mandate);
  const keys = path.split(".");
  const last = keys.pop()!;
  let target: any = copy;
  for (const k of keys) target = target[k];
  delete target[last];
  return copy;
}

function withValue(mandate: Json, path: string, value: unknown): Json {
  const copy = structuredClone(mandate);
  const keys = path.split(".");
  const last = keys.pop()!;
  let target: any = copy;
  for (const k of keys) target = target[k];
  target[last] = value;
  return copy;
}

function detailPaths(body: Json): string[] {
  expect(Array.isArray(body.details)).toBe(true);
  return body.details.map((d: Json) => d.path);
}

describe("rule 1: a mandate that fails schema validation is a 422", () => {
  const required = [
    "vct",
    "transaction_id",
    "payee",
    "payment_amount",
    "payment_amount.amount",
    "payment_amount.currency",
    "payment_instrument",
  ];

  it.each(required)("a payment mandate without %s: 422 naming it", async (path) => {
    const { org, key } = await orgWithKey();
    const res = await assess(key, { mandate: without(payment(), path), mandateType: "payment" });
    expect(res.status).toBe(422);
    expect(res.error.error).toBe("mandate_invalid");
    expect(detailPaths(res.json)).toContain(`mandate.${path}`);
    for (const d of res.error.details) expect(typeof d.message).toBe("string");
    // Nothing was assessed.
    const [row] = (await ownerSql`select count(*)::int as n from assessments
                                  where org_id = ${org.id}`) as [Json];
    expect(row.n).toBe(0);
  });

  it("names every failing path at once", async () => {
    const { key } = await orgWithKey();
    const mandate = without(
      without(without(payment(), "payee"), "transaction_id"),
      "payment_instrument",
    );
    const res = await assess(key, { mandate });
    expect(res.status).toBe(422);
    expect(detailPaths(res.json).sort()).toEqual(
      ["mandate.payee", "mandate.payment_instrument", "mandate.transaction_id"].sort(),
    );
  });

  it.each([
    ["transaction_id", 5],
    ["transaction_id", null],
    ["payee", "merchant_1"],
    ["payee", []],
    ["payment_amount", 19900],
    ["payment_amount.amount", "19900"],
    ["payment_amount.amount", 199.5],
    ["payment_amount.amount", -1],
    ["payment_amount.amount", 2 ** 53],
    ["payment_amount.amount", true],
    ["payment_amount.currency", 840],
    ["payment_amount.currency", "usd"],
    ["payment_amount.currency", "DOLLARS"],
    ["payment_instrument", "card"],
    ["execution_date", 20260101],
    ["risk_data", "high"],
    ["risk_data", ["device"]],
  ])("a payment mandate whose %s is %j: 422 naming it", async (path, value) => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: withValue(payment(), path, value) });
    expect(res.status).toBe(422);
    expect(res.error.error).toBe("mandate_invalid");
    expect(detailPaths(res.json)).toContain(`mandate.${path}`);
  });

  it("allows additional AP2 fields at every level", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({ iss: "https://wallet.example", extra: { any: [1, "x"] } });
    mandate.payee.mcc = "5732";
    mandate.payment_amount.display = "$199.00";
    mandate.payment_instrument.network = "visa";
    expect((await assess(key, { mandate })).status).toBe(200);
  });

  it("an execution_date that is not ISO 8601 is a signal, not a schema failure", async () => {
    // risk-model.md: execution_date_unreadable (the spec's table types it only as a string).
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment({ execution_date: "next tuesday" }) });
    expect(res.status).toBe(200);
    expect(res.json.outcome.signals).toContainEqual({
      category: "mandate",
      type: "execution_date_unreadable",
      severity: "medium",
    });
  });

  it("accepts an ISO 8601 execution_date", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({ execution_date: new Date(Date.now() + 86_400_000).toISOString() });
    expect((await assess(key, { mandate })).status).toBe(200);
  });
});

describe("rule 2: a malformed request or an unknown mandate type is a 400", () => {
  it("malformed JSON", async () => {
    const { key } = await orgWithKey();
    for (const text of ["{", '{"mandate": }', "", "nul", "{'mandate': {}}"]) {
      const res = await assessRaw(key, text);
      expect(res.status, text).toBe(400);
      expect(res.error.error, text).toBe("invalid_json");
    }
  });

  it("a body sent as another content type is a 400 or assessed, never a 5xx", async () => {
    const { key } = await orgWithKey();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      const res = await assessRaw(key, JSON.stringify({ mandate: payment() }), {
        headers: { "content-type": type },
      });
      expect([200, 400], type).toContain(res.status);
    }
  });

  it("a truncated JSON document answers invalid_json", async () => {
    const { key } = await orgWithKey();
    const res = await assessRaw(key, JSON.stringify({ mandate: payment() }).slice(0, -3));
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_json");
  });

  it.each([[[]], [[{ mandate: {} }]], ["mandate"], [42], [null], [true]])(
    "a body that is not an object (%j)",
    async (body) => {
      const { key } = await orgWithKey();
      const res = await assessRaw(key, JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    },
  );

  it("a request without a mandate, or with a mandate that is not an object", async () => {
    const { key } = await orgWithKey();
    for (const body of [
      {},
      { kind: "custom" },
      { mandate: [] },
      { mandate: "x" },
      { mandate: null },
    ]) {
      const res = await assessRaw(key, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.error).toBe("invalid_request");
      expect(detailPaths(res.json)).toContain("mandate");
    }
  });

  it("an unknown top-level field, named in details", async () => {
    const { key } = await orgWithKey();
    const res = await assessRaw(key, { mandate: payment(), mandate_type: "payment" });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(detailPaths(res.json)).toEqual(["mandate_type"]);
  });

  it("an unknown field wins over an invalid mandate (400 before 422)", async () => {
    const { key } = await orgWithKey();
    const res = await assessRaw(key, { mandate: without(payment(), "payee"), extra: true });
    expect(res.status).toBe(400);
  });

  it.each([
    ["kind", "wire_transfer"],
    ["kind", 1],
    ["mandateType", 7],
    ["idempotency_key", 42],
    ["idempotency_key", ""],
    ["idempotency_key", "has space"],
    ["idempotency_key", "k".repeat(256)],
    ["a2a", "1.0"],
    ["a2a", { taskId: "t" }],
    ["a2a", { task_id: 5 }],
  ])("an ill-typed %s (%j)", async (field, value) => {
    const { key } = await orgWithKey();
    const res = await assessRaw(key, { mandate: payment(), [field]: value });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it("an unknown vct is unknown_mandate_type", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment({ vct: "mandate.unknown.1" }) });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("unknown_mandate_type");
    expect(detailPaths(res.json)).toEqual(["mandate.vct"]);
  });

  it("an unknown mandateType is unknown_mandate_type", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment(), mandateType: "refund" });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("unknown_mandate_type");
    expect(detailPaths(res.json)).toEqual(["mandateType"]);
  });

  it("a mandateType that contradicts vct is mandate_type_mismatch", async () => {
    const { key } = await orgWithKey();
    for (const [type, mandate] of [
      ["payment", examples.checkout()],
      ["open_payment", payment()],
      ["checkout", examples.open_checkout()],
    ] as const) {
      const res = await assess(key, { mandate, mandateType: type });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("mandate_type_mismatch");
    }
  });

  it.each(MANDATE_TYPES)("a mandateType that agrees with vct (%s) is accepted", async (type) => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: examples[type](), mandateType: type });
    expect(res.status).toBe(200);
  });

  it("a body over 256 KiB is request_too_large", async () => {
    const { org, key } = await orgWithKey();
    const res = await assess(key, { mandate: payment({ filler: "x".repeat(256 * 1024) }) });
    expect(res.status).toBe(413);
    expect(res.error).toEqual(errorBody("request_too_large", { max_bytes: 262144 }));
    const [row] = (await ownerSql`select count(*)::int as n from assessments
                                  where org_id = ${org.id}`) as [Json];
    expect(row.n).toBe(0);
  });

  it("a body just under 256 KiB is assessed", async () => {
    const { key } = await orgWithKey();
    const base = JSON.stringify({ mandate: payment({ filler: "" }) }).length;
    const res = await assess(key, { mandate: payment({ filler: "x".repeat(250 * 1024 - base) }) });
    expect(res.status).toBe(200);
  });

  it.each([
    ["a NUL character in a value", '{"kind":"custom","mandate":{"note":"a\\u0000b"}}'],
    ["a NUL character in a key", '{"kind":"custom","mandate":{"a\\u0000":1}}'],
    ["a lone surrogate", '{"kind":"custom","mandate":{"note":"\\ud800"}}'],
    ["a number beyond a double", '{"kind":"custom","mandate":{"n":1e400}}'],
    [
      "nesting deeper than 32 levels",
      `{"kind":"custom","mandate":${'{"a":'.repeat(40)}1${"}".repeat(40)}}`,
    ],
  ])("a mandate holding what cannot be stored faithfully: %s", async (_, text) => {
    const { org, key } = await orgWithKey();
    const res = await assessRaw(key, text);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    const [row] = (await ownerSql`select count(*)::int as n from assessments
                                  where org_id = ${org.id}`) as [Json];
    expect(row.n).toBe(0);
  });

  it("a NUL character inside an AP2 mandate is a 400, not a 500", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment({ transaction_id: "tx\u0000" }) });
    expect(res.status).toBe(400);
  });

  it("moderate nesting is fine", async () => {
    const { key } = await orgWithKey();
    const text = `{"kind":"custom","mandate":${'{"a":'.repeat(10)}1${"}".repeat(10)}}`;
    expect((await assessRaw(key, text)).status).toBe(200);
  });
});

describe("rule 3: A2A", () => {
  async function storedA2a(assessmentId: string) {
    const [row] = (await ownerSql`select a2a from assessments where id = ${assessmentId}`) as [
      Json,
    ];
    return row.a2a;
  }

  it("header A2A-Version 2.0: 400 unsupported_a2a_version", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment() }, { headers: { "A2A-Version": "2.0" } });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("unsupported_a2a_version");
  });

  it("a block version that is not supported: 400", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment(), a2a: { a2a_version: "0.2" } });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("unsupported_a2a_version");
  });

  it("header 1.0 with block a2a_version 0.3: 400 a2a_version_mismatch", async () => {
    const { key } = await orgWithKey();
    const res = await assess(
      key,
      { mandate: payment(), a2a: { a2a_version: "0.3" } },
      { headers: { "A2A-Version": "1.0" } },
    );
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("a2a_version_mismatch");
  });

  it("an A2A problem is a 400 even when the mandate is also invalid", async () => {
    const { key } = await orgWithKey();
    const res = await assess(
      key,
      { mandate: without(payment(), "payee") },
      { headers: { "A2A-Version": "2.0" } },
    );
    expect(res.status).toBe(400);
  });

  it("header 0.3 alone: 200, and the assessment is bound to A2A 0.3", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment() }, { headers: { "A2A-Version": "0.3" } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await storedA2a(res.json.assessmentId))).toContain('"0.3"');
  });

  it("a block binds its task, context and card ref, under the header's version", async () => {
    const { key } = await orgWithKey();
    const a2a = { task_id: "task-42", context_id: "ctx-7", agent_card_ref: "sha256:00" };
    const res = await assess(
      key,
      { mandate: payment(), a2a },
      { headers: { "A2A-Version": "1.0" } },
    );
    expect(res.status).toBe(200);
    const stored = JSON.stringify(await storedA2a(res.json.assessmentId));
    for (const v of ["task-42", "ctx-7", "sha256:00", '"1.0"']) expect(stored).toContain(v);
  });

  it("header and block agreeing: 200", async () => {
    const { key } = await orgWithKey();
    const res = await assess(
      key,
      { mandate: payment(), a2a: { a2a_version: "1.0", task_id: "t" } },
      { headers: { "A2A-Version": "1.0" } },
    );
    expect(res.status).toBe(200);
  });

  it("without header or block nothing is bound", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment() });
    expect(res.status).toBe(200);
    expect(await storedA2a(res.json.assessmentId)).toBeNull();
  });
});

describe("other action kinds", () => {
  const OTHER_KINDS = ["message_send", "voice_call", "custom"] as const;

  it.each(OTHER_KINDS)("%s accepts any object", async (kind) => {
    const { key } = await orgWithKey();
    for (const mandate of [
      {},
      { to: "+15551234567", body: "hi" },
      { vct: "mandate.unknown.1", deep: { list: [1, null, "x", { y: false }] } },
      { risk_data: "not an object" },
    ]) {
      const res = await assess(key, { kind, mandate });
      expect(res.status, JSON.stringify(mandate)).toBe(200);
      expectAssessResponse(res.json);
      expect(res.json.outcome.kind).toBe(kind);
    }
  });

  it("a custom mandate whose risk_data is not an object gets nothing injected", async () => {
    const { key } = await orgWithKey();
    const mandate = { action: "x", risk_data: ["a"] };
    const res = await assess(key, { kind: "custom", mandate });
    expect(res.status).toBe(200);
    expect(res.json.mandate).toEqual(mandate);
    expect(typeof res.json.riskPayloadJws).toBe("string");
  });

  it.each(OTHER_KINDS)("%s with a mandateType: 400", async (kind) => {
    const { key } = await orgWithKey();
    const res = await assessRaw(key, { kind, mandate: {}, mandateType: "payment" });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it("kind ap2_payment stated explicitly is the default", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { kind: "ap2_payment", mandate: payment() });
    expect(res.status).toBe(200);
    expect(res.json.outcome.kind).toBe("ap2_payment");
  });
});

describe("response headers", () => {
  it("Server-Timing and x-service-server-timing are equal and time every stage", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment() });
    expect(res.status).toBe(200);
    const timing = res.headers.get("server-timing");
    expect(timing).toBeTruthy();
    expect(res.headers.get("x-service-server-timing")).toBe(timing);
    const stages = Object.fromEntries(
      timing!.split(",").map((part) => {
        const [name, ...params] = part.trim().split(";");
        const dur = params.find((p) => p.trim().startsWith("dur="));
        return [name!.trim(), dur ? Number(dur.trim().slice(4)) : Number.NaN];
      }),
    );
    for (const stage of ["kya", "policy", "risk", "sign", "persist"]) {
      expect(stages, stage).toHaveProperty(stage);
      expect(Number.isFinite(stages[stage]), stage).toBe(true);
      expect(stages[stage]).toBeGreaterThanOrEqual(0);
    }
  });

  it("a replay carries the headers too", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    await assessOk(key, { mandate });
    const res = await assess(key, { mandate });
    const timing = res.headers.get("server-timing");
    expect(timing).toMatch(/kya;dur=/);
    expect(res.headers.get("x-service-server-timing")).toBe(timing);
  });
});

describe("side effects: the ledger and the outbox", () => {
  it("one assessment row, one mandate row and one assessment.completed ledger entry", async () => {
    const { org, key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
    const [entry] = (await ownerSql`select id, sequence, type from audit_entries
      where org_id = ${org.id} and type = 'assessment.completed'`) as [Json];
    expect(entry.id).toBe(body.outcome.audit.entry_id);
    expect(Number(entry.sequence)).toBe(body.outcome.audit.sequence);
    const [row] = (await ownerSql`select id, mandate_id, decision, risk_score from assessments
      where org_id = ${org.id}`) as [Json];
    expect(row).toEqual({
      id: body.assessmentId,
      mandate_id: body.mandateId,
      decision: body.decision,
      risk_score: body.score,
    });
  });

  const eventData = (body: Json) => ({
    assessment_id: body.assessmentId,
    decision: body.decision,
    risk_level: body.outcome.outcome.risk_level,
    risk_score: body.score,
    agent_id: body.outcome.agent?.id ?? null,
    kind: body.outcome.kind,
  });

  it("a deny queues assessment.completed and assessment.denied with the spec's data", async () => {
    const { org, key } = await orgWithKey();
    // The reference open payment mandate expired in April 2026: its own bound denies it.
    const body = await assessOk(key, { mandate: examples.open_payment() });
    expect(body.decision).toBe("deny");
    expect(reasonKeys(body.outcome)).toContain("mandate_expired");
    const events = await assessmentEvents(org.id);
    expect(events.map((e) => e.type).sort()).toEqual(
      ["assessment.completed", "assessment.denied"].sort(),
    );
    for (const e of events) expect(e.data).toEqual(eventData(body));
  });

  it("a review queues assessment.completed and assessment.flagged", async () => {
    const { org, key } = await orgWithKey();
    // No agent: agent_unknown and trust 0 put it at review at best (risk-model.md).
    const body = await assessOk(key, { mandate: payment() });
    expect(body.decision).toBe("review");
    const events = await assessmentEvents(org.id);
    expect(events.map((e) => e.type).sort()).toEqual(
      ["assessment.completed", "assessment.flagged"].sort(),
    );
    for (const e of events) expect(e.data).toEqual(eventData(body));
  });

  it("an approval queues assessment.completed only, naming the agent", async () => {
    // An agent proven by a verified credential: a claim by agent_id earns no trust to approve on.
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    const body = await assessOk(key, await proven());
    expect(body.decision).toBe("approve");
    const events = await assessmentEvents(org.id);
    expect(events).toEqual([{ type: "assessment.completed", data: eventData(body) }]);
    expect(events[0]!.data.agent_id).toBe(agentId);
  });

  it("a replay queues nothing new", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    await assessOk(key, { mandate });
    await assessOk(key, { mandate });
    expect(await countRows(org.id)).toEqual({ assessments: 1, mandates: 1, ledger: 1, events: 2 });
  });

  it("a rejected request leaves no trace", async () => {
    const { org, key } = await orgWithKey();
    await assess(key, { mandate: without(payment(), "payee") });
    await assessRaw(key, { mandate: payment(), bogus: 1 });
    expect(await countRows(org.id)).toEqual({ assessments: 0, mandates: 0, ledger: 0, events: 0 });
  });
});
