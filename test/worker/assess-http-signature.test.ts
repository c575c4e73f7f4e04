import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import clients from "../fixtures/http-signatures/clients.json";
import { call } from "./support/api";
import {
  assess,
  assessOk,
  assessRaw,
  holderJwk,
  type Json,
  openPayment,
  orgWithKey,
  payment,
  signalTypes,
} from "./support/assess";
import { clockAt, publishDirectory, signHttp } from "./support/http-signatures";
import {
  type AgentKeyPair,
  keyPair,
  merchantCard,
  newAgent,
  registerKey,
  signCard,
} from "./support/identity";

// POST /v1/assess with the agent's own HTTP message signature (issue 42 §5,
// docs/http-signatures.md): RFC 9421 Appendix B and Web Bot Auth vectors, time and nonce
// failures, each agent binding, and hostile fields.

/** RFC 9421 B.1.4, the Ed25519 test key (public half), as a JWK. */
const RFC_ED25519 = {
  kty: "OKP",
  crv: "Ed25519",
  x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs",
};

/** The RSA key of RFC 9421 B.1.2 (`test-key-rsa-pss`), public half, as the Web Bot Auth tests hold it. */
const RFC_RSA_PSS = {
  kty: "RSA",
  kid: "test-key-rsa-pss",
  e: "AQAB",
  n:
    "r4tmm3r20Wd_PbqvP1s2-QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct-Lh1GH45x28Rw3Ry53mm-oAXjyQ86OnDkZ5N8" +
    "lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7OyrFAHqgDsznjPFmTOtCEcN2Z1FpWgchwuYLPL-Wokqltd11nqqzi-bJ9cv" +
    "SKADYdUAAN5WUtzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw9lq4aOT9v6d-nb4bnNkQVklLQ3fV" +
    "AvJm-xdDOp9LCNCN48V2pnDOkFV6-U9nV5oyc6XI2w",
};

const COVERED = { method: "GET", authority: "shop.example", path: "/checkout" };

function outcomeOf(body: Json): Json {
  return body.outcome.outcome.http_signature;
}

describe("RFC 9421 Appendix B vectors", () => {
  it("B.2.6: the Ed25519 signature verifies under the directory's key named by keyid", async () => {
    const { key } = await orgWithKey("test");
    const created = 1618884473;
    const clock = await clockAt(key, created + 10);
    const directory = await publishDirectory(
      [{ ...RFC_ED25519, kid: "test-key-ed25519" }],
      "sig-b26",
    );
    const http_signature = {
      signature:
        "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:",
      signature_input:
        'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");' +
        'created=1618884473;keyid="test-key-ed25519"',
      signature_agent: directory,
      covered: {
        method: "POST",
        authority: "example.com",
        path: "/foo",
        query: "param=Value&Pet=dog",
        headers: {
          date: "Tue, 20 Apr 2021 02:07:55 GMT",
          "content-type": "application/json",
          "content-length": "18",
        },
      },
    };
    const body = await assessOk(key, { mandate: payment(), test_clock: clock, http_signature });
    expect(outcomeOf(body)).toEqual({
      verified: true,
      label: "sig-b26",
      keyid: "test-key-ed25519",
      tag: null,
      alg: "ed25519",
      key_thumbprint: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
      key_source: "directory",
      agent_binding: "absent",
    });
    expect(signalTypes(body.outcome)).not.toContain("http_signature_invalid");

    // One byte of the base changed (the method): the same signature no longer verifies.
    const tampered = { ...http_signature, covered: { ...http_signature.covered, method: "PUT" } };
    const refused = await assessOk(key, {
      mandate: payment(),
      test_clock: clock,
      http_signature: tampered,
    });
    expect(outcomeOf(refused)).toMatchObject({ verified: false, failure: "signature_invalid" });
    expect(signalTypes(refused.outcome)).toContain("http_signature_invalid");
  });
});

describe("Web Bot Auth vectors (cloudflare/web-bot-auth test data)", () => {
  const created = 1735689600;

  it("an Ed25519 signature of @authority verifies under the agent's registered key", async () => {
    const { org, key } = await orgWithKey("test");
    const agent = await newAgent(org);
    const res = await call(`/v1/agents/${agent.id}/keys`, {
      method: "POST",
      token: org.token,
      body: { jwk: RFC_ED25519 },
    });
    expect(res.status).toBe(201);
    const clock = await clockAt(key, created + 30);
    const body = await assessOk(key, {
      mandate: payment(),
      agent_id: agent.id,
      test_clock: clock,
      http_signature: {
        signature:
          "sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:",
        signature_input:
          'sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";' +
          'alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";' +
          'tag="web-bot-auth"',
        covered: { method: "GET", authority: "example.com", path: "/path/to/resource" },
      },
    });
    expect(outcomeOf(body)).toMatchObject({
      verified: true,
      tag: "web-bot-auth",
      key_source: "registered",
      key_thumbprint: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
      // An explicit agent_id is no key to bind to.
      agent_binding: "absent",
    });
  });

  it("an RSA-PSS signature covering signature-agent;key= verifies under the directory's key", async () => {
    const { key } = await orgWithKey("test");
    const clock = await clockAt(key, created + 30);
    const directory = await publishDirectory([RFC_RSA_PSS], "agent2");
    const body = await assessOk(key, {
      mandate: payment(),
      test_clock: clock,
      http_signature: {
        signature:
          "sig2=:gHzpLNeHaHIO19NaJH9YMW5dcVSi2s0wOMBr6p18vcofS106sfC4KBIS0/szPlBBd1vIcyQ88B6CTEWIhRAiVrb9zfX0mx1aG12CSGWcYkSirHeyTxhbuJvXd27ed6skWoy4PjXItq38936ivUQjfdIwXh1aX6HxkAC3vRnEdSNfntkLWeEuIQ5BLIOBGE39fSwg27Qjq6OVWYas/9/aFUr3HA34MXWYdp+//cvlEKDp3kRoLOw9ro0AOr6srHrTeEtxon2afcws1aZVSlPdd2fZSEIGmw9HAHLDCEkFTERu1gH2k/zIEqgy7CAYXI9E5slog0cLg/Vc6+f8gih33g==:",
        signature_input:
          'sig2=("@authority" "signature-agent";key="agent2");created=1735689600;' +
          'keyid="oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA";alg="rsa-pss-sha512";expires=4889289600;' +
          'nonce="wcfPQPh7SzkvrIVvhD00vNk9PkxJNY2NVbYl2PVBB4zmUoluSwE7W6bPtF60QA3k8g06FU7PPCD+J58YofY1zg==";' +
          'tag="web-bot-auth"',
        signature_agent: directory,
        covered: {
          method: "GET",
          authority: "example.com",
          path: "/path/to/resource",
          headers: { "signature-agent": 'agent2="https://signature-agent.test"' },
        },
      },
    });
    expect(outcomeOf(body)).toMatchObject({
      verified: true,
      alg: "rsa-pss-sha512",
      key_source: "directory",
      key_thumbprint: "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA",
    });
  });
});

describe("signatures made by third-party clients (test/fixtures/http-signatures)", () => {
  it("web-bot-auth's Ed25519 and http-message-signatures' TAP P-256 signatures verify, bound to one agent", async () => {
    const { org, key } = await orgWithKey("test");
    const agent = await newAgent(org);
    for (const jwk of [clients.web_bot_auth.public_jwk, clients.tap_payer.public_jwk]) {
      const res = await call(`/v1/agents/${agent.id}/keys`, {
        method: "POST",
        token: org.token,
        body: { jwk },
      });
      expect(res.status).toBe(201);
    }
    const clock = await clockAt(key, clients.created + 10);
    const mandate = () => openPayment(clients.tap_payer.public_jwk);
    const wba = await assessOk(key, {
      mandate: mandate(),
      test_clock: clock,
      http_signature: clients.web_bot_auth.http_signature,
    });
    expect(outcomeOf(wba)).toMatchObject({
      verified: true,
      tag: "web-bot-auth",
      keyid: clients.web_bot_auth.keyid,
      key_source: "registered",
      agent_binding: "same_agent",
    });
    const tap = await assessOk(key, {
      mandate: mandate(),
      test_clock: clock,
      http_signature: clients.tap_payer.http_signature,
    });
    expect(outcomeOf(tap)).toMatchObject({
      verified: true,
      tag: "agent-payer-auth",
      alg: "ecdsa-p256-sha256",
      agent_binding: "same_key",
    });
  });
});

/** An org whose agent holds an ES256 key (the open mandate's `cnf`) and an Ed25519 key. */
async function agentWithTwoKeys() {
  const { org, key } = await orgWithKey();
  const agent = await newAgent(org);
  const mandateKey = await registerKey(org, agent.id, "ES256");
  const httpKey = await registerKey(org, agent.id, "EdDSA");
  return { org, key, agent, mandateKey, httpKey };
}

async function assessSigned(key: string, mandateKey: AgentKeyPair, httpKey: AgentKeyPair) {
  return assessOk(key, {
    mandate: openPayment(holderJwk(mandateKey)),
    http_signature: await signHttp({ pair: httpKey, covered: COVERED }),
  });
}

describe("the agent binding", () => {
  it("same_key: the mandate's cnf key signed the HTTP request", async () => {
    const { key, mandateKey } = await agentWithTwoKeys();
    const body = await assessSigned(key, mandateKey, mandateKey);
    expect(outcomeOf(body)).toMatchObject({
      verified: true,
      alg: "ecdsa-p256-sha256",
      key_thumbprint: mandateKey.kid,
      key_source: "registered",
      agent_binding: "same_key",
    });
  });

  it("same_agent: another key registered to the mandate key's agent", async () => {
    const { key, mandateKey, httpKey } = await agentWithTwoKeys();
    const body = await assessSigned(key, mandateKey, httpKey);
    expect(outcomeOf(body)).toMatchObject({ verified: true, agent_binding: "same_agent" });
    expect(signalTypes(body.outcome)).not.toContain("http_signature_agent_mismatch");
  });

  it("mismatch: another agent's key signed the request, a high signal that reviews", async () => {
    const { org, key, mandateKey } = await agentWithTwoKeys();
    const other = await newAgent(org);
    const otherKey = await registerKey(org, other.id, "EdDSA");
    const body = await assessSigned(key, mandateKey, otherKey);
    expect(outcomeOf(body)).toMatchObject({ verified: true, agent_binding: "mismatch" });
    expect(body.outcome.signals).toContainEqual({
      category: "identity",
      type: "http_signature_agent_mismatch",
      severity: "high",
    });
    expect(body.outcome.outcome.decision).not.toBe("approve");
  });

  it("mismatch: a directory key the org never registered is not the mandate's agent", async () => {
    const { key, mandateKey } = await agentWithTwoKeys();
    const stranger = await keyPair("EdDSA");
    const directory = await publishDirectory([stranger.publicJwk]);
    const body = await assessOk(key, {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature: await signHttp({
        pair: stranger,
        covered: COVERED,
        signatureAgent: directory,
      }),
    });
    expect(outcomeOf(body)).toMatchObject({
      verified: true,
      key_source: "directory",
      agent_binding: "mismatch",
    });
  });

  it("same_key with a card: the key that signs the agent's verified Agent Card signed the request", async () => {
    const { org, key } = await orgWithKey();
    const agent = await newAgent(org);
    const cardKey = await registerKey(org, agent.id);
    const card = await signCard(merchantCard(), cardKey);
    const verified = await call("/v1/agents/verify-card", {
      method: "POST",
      token: org.token,
      body: { agent_id: agent.id, card },
    });
    expect(verified.json.status).toBe("verified");
    const status = await call(`/v1/agents/${agent.id}/card-status`, { token: org.token });
    const a2a = { agent_card_ref: status.json.digest as string };
    const signed = await assessOk(key, {
      mandate: payment(),
      a2a,
      http_signature: await signHttp({ pair: cardKey, covered: COVERED }),
    });
    expect(outcomeOf(signed)).toMatchObject({ verified: true, agent_binding: "same_key" });

    // Another agent's key beside this card: a mismatch.
    const other = await newAgent(org);
    const otherKey = await registerKey(org, other.id);
    const crossed = await assessOk(key, {
      mandate: payment(),
      a2a,
      http_signature: await signHttp({ pair: otherKey, covered: COVERED }),
    });
    expect(outcomeOf(crossed)).toMatchObject({ verified: true, agent_binding: "mismatch" });
  });

  it("absent: nothing to bind to (no cnf key, no card)", async () => {
    const { key, httpKey } = await agentWithTwoKeys();
    const body = await assessOk(key, {
      mandate: payment(),
      http_signature: await signHttp({ pair: httpKey, covered: COVERED }),
    });
    expect(outcomeOf(body)).toMatchObject({ verified: true, agent_binding: "absent" });
  });
});

describe("time and nonce", () => {
  const now = () => Math.floor(Date.now() / 1000);

  async function failureOf(options: Partial<Parameters<typeof signHttp>[0]>) {
    const { key, mandateKey } = await agentWithTwoKeys();
    const body = await assessOk(key, {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature: await signHttp({ pair: mandateKey, covered: COVERED, ...options }),
    });
    return body;
  }

  it("expired: past its expires", async () => {
    const body = await failureOf({ created: now() - 200, expires: now() - 100 });
    expect(outcomeOf(body)).toMatchObject({
      verified: false,
      failure: "expired",
      agent_binding: "absent",
    });
    expect(signalTypes(body.outcome)).toContain("http_signature_invalid");
  });

  it("not_yet_valid: created in the future", async () => {
    const body = await failureOf({ created: now() + 600, expires: now() + 700 });
    expect(outcomeOf(body)).toMatchObject({ verified: false, failure: "not_yet_valid" });
  });

  it("too_old: created longer ago than the service accepts, whatever its expires", async () => {
    const body = await failureOf({ created: now() - 3600, expires: now() + 3600 });
    expect(outcomeOf(body)).toMatchObject({ verified: false, failure: "too_old" });
  });

  it("a nonce seen twice for the same key is refused the second time, a high signal", async () => {
    const { key, mandateKey } = await agentWithTwoKeys();
    const http_signature = await signHttp({ pair: mandateKey, covered: COVERED });
    const first = await assessOk(key, {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature,
    });
    expect(outcomeOf(first)).toMatchObject({ verified: true });
    const second = await assessOk(key, {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature,
    });
    expect(outcomeOf(second)).toMatchObject({ verified: false, failure: "nonce_replayed" });
    expect(second.outcome.signals).toContainEqual({
      category: "identity",
      type: "http_signature_replayed",
      severity: "high",
    });
  });

  it("an idempotent replay of the same request answers the stored outcome, not a replay", async () => {
    const { key, mandateKey } = await agentWithTwoKeys();
    const request = {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature: await signHttp({ pair: mandateKey, covered: COVERED }),
    };
    const first = await assessOk(key, request);
    const again = await assessOk(key, request);
    expect(again.outcome.id).toBe(first.outcome.id);
    expect(outcomeOf(again)).toEqual(outcomeOf(first));
  });

  it("a nonce is per mode: a test key's use does not spend the live one", async () => {
    const { org, key, mandateKey } = await agentWithTwoKeys();
    const { key: testKey } = await org.key(undefined, "test");
    const http_signature = await signHttp({ pair: mandateKey, covered: COVERED });
    const test = await assessOk(testKey, { mandate: payment(), http_signature });
    // The test mode has no registered key: its answer is its own.
    expect(outcomeOf(test).failure).not.toBe("nonce_replayed");
    const live = await assessOk(key, {
      mandate: openPayment(holderJwk(mandateKey)),
      http_signature,
    });
    expect(outcomeOf(live)).toMatchObject({ verified: true });
  });
});

describe("unverifiable and hostile fields", () => {
  it("unknown_key: a keyid neither registered nor in a directory", async () => {
    const { key } = await orgWithKey();
    const stranger = await keyPair("EdDSA");
    const body = await assessOk(key, {
      mandate: payment(),
      http_signature: await signHttp({ pair: stranger, covered: COVERED }),
    });
    expect(outcomeOf(body)).toMatchObject({
      verified: false,
      failure: "unknown_key",
      key_source: null,
    });
  });

  it("a Signature-Agent origin's directory is read at its well-known path", async () => {
    const { key } = await orgWithKey();
    const stranger = await keyPair("EdDSA");
    const res = await fetch(`${env.TEST_FIXTURE_URL}/docs/well-known-directory`, {
      method: "PUT",
      headers: { "content-type": "application/http-message-signatures-directory+json" },
      body: JSON.stringify({ keys: [stranger.publicJwk] }),
    });
    expect(res.status).toBe(204);
    const body = await assessOk(key, {
      mandate: payment(),
      http_signature: await signHttp({
        pair: stranger,
        covered: COVERED,
        signatureAgent: `sig1="${env.TEST_FIXTURE_URL}"`,
      }),
    });
    expect(outcomeOf(body)).toMatchObject({
      verified: true,
      key_source: "directory",
      key_thumbprint: stranger.kid,
    });
  });

  it("directory_unavailable: a Signature-Agent the outbound guard refuses", async () => {
    const { key } = await orgWithKey();
    const stranger = await keyPair("EdDSA");
    const body = await assessOk(key, {
      mandate: payment(),
      http_signature: await signHttp({
        pair: stranger,
        covered: COVERED,
        signatureAgent: 'sig1="http://169.254.169.254"',
      }),
    });
    expect(outcomeOf(body)).toMatchObject({ verified: false, failure: "directory_unavailable" });
  });

  it("a request without http_signature answers no http_signature at all", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    expect(body.outcome.outcome).not.toHaveProperty("http_signature");
  });

  const garbled: [string, (signed: Json) => Json, string][] = [
    [
      "a Signature-Input that is no dictionary",
      (s) => ({ ...s, signature_input: "sig1=(" }),
      "http_signature.signature_input",
    ],
    [
      "a Signature that is no byte sequence",
      (s) => ({ ...s, signature: "sig1=abc" }),
      "http_signature.signature",
    ],
    [
      "a label the fields lack",
      (s) => ({ ...s, label: "other" }),
      "http_signature.signature_input",
    ],
    [
      "an oversized Signature-Input",
      (s) => ({ ...s, signature_input: `sig1=("${"a".repeat(9000)}")` }),
      "http_signature.signature_input",
    ],
    [
      "a control character in a field",
      (s) => ({ ...s, signature: "sig1=:AA==:\n" }),
      "http_signature.signature",
    ],
    [
      "a covered header the request does not give",
      (s) => ({
        ...s,
        signature_input: s.signature_input.replace('"@path"', '"@path" "x-missing"'),
      }),
      "http_signature.covered.headers.x-missing",
    ],
    [
      "a component covered twice",
      (s) => ({ ...s, signature_input: s.signature_input.replace('"@path"', '"@path" "@path"') }),
      "http_signature.signature_input",
    ],
    [
      "a Signature-Agent that is neither string nor dictionary",
      (s) => ({ ...s, signature_agent: "((" }),
      "http_signature.signature_agent",
    ],
    [
      "a non-integer created",
      (s) => ({
        ...s,
        signature_input: s.signature_input.replace(/created=\d+/, 'created="soon"'),
      }),
      "http_signature.signature_input",
    ],
    ["an unknown member", (s) => ({ ...s, extra: 1 }), "http_signature.extra"],
  ];
  it.each(garbled)("%s is 400 invalid_request naming the field", async (_, change, path) => {
    const { key } = await orgWithKey();
    const pair = await keyPair("EdDSA");
    const signed = await signHttp({ pair, covered: COVERED });
    const res = await assessRaw(key, { mandate: payment(), http_signature: change(signed) });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect((res.error.details as Json[]).map((d) => d.path)).toContain(path);
  });

  it("an unsupported component (@query-param) is a failure, not a 400", async () => {
    const { key, mandateKey } = await agentWithTwoKeys();
    const res = await assess(key, {
      mandate: payment(),
      http_signature: {
        signature: "sig1=:AAAA:",
        signature_input: `sig1=("@query-param";name="a");created=1;keyid="${mandateKey.kid}"`,
        covered: { method: "GET", authority: "a.example", path: "/", query: "a=1" },
      },
    });
    expect(res.status).toBe(200);
    expect(outcomeOf(res.json)).toMatchObject({
      verified: false,
      failure: "unsupported_component",
    });
  });
});
