import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import {
  keyPair,
  merchantCard,
  newAgent,
  registerKey,
  sdkSignCard,
  signCard,
} from "./support/identity";

type Pair = Awaited<ReturnType<typeof keyPair>>;

async function setup() {
  const org = await newOrg();
  const { key } = await org.key();
  const agent = await newAgent(org);
  const pair = await registerKey(org, agent.id);
  return { org, key, agent, pair };
}

function verify(key: string, body: unknown) {
  return call("/v1/agents/verify-card", { method: "POST", key, raw: true, body });
}

async function publish(name: string, document: unknown) {
  const res = await fetch(`${env.TEST_FIXTURE_URL}/docs/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(document),
  });
  expect(res.status).toBe(204);
  return `${env.TEST_FIXTURE_URL}/docs/${name}`;
}

describe("POST /v1/agents/verify-card", () => {
  it("verifies a signed card, binds it to the agent and raises its trust", async () => {
    const { org, key, agent, pair } = await setup();
    const card = await signCard(merchantCard(), pair);
    const res = await verify(key, { agent_id: agent.id, card });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: "agent_card_status",
      agent_id: agent.id,
      status: "verified",
      protocol_version: "0.3",
      name: "MerchantAgent",
      url: "https://merchant.example.com/a2a/merchant_agent",
      source_url: null,
      signatures: [expect.objectContaining({ kid: pair.kid, alg: "EdDSA", status: "valid" })],
      checked_at: expect.any(String),
      verified_at: expect.any(String),
    });
    const { signatures: _, ...unsigned } = card;
    const digest = await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(canonicalize(unsigned)),
    );
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    expect(res.json.digest).toBe(`sha256:${hex}`);

    expect((await call(`/v1/agents/${agent.id}/card-status`, { key })).json).toEqual(res.json);
    const after = (await call(`/v1/agents/${agent.id}`, { key })).json;
    expect(after).toMatchObject({
      trust_score: 75,
      risk_tier: "low",
      evidence: { card_status: "verified" },
      card: {
        digest: `sha256:${hex}`,
        protocol_version: "0.3",
        name: "MerchantAgent",
        url: "https://merchant.example.com/a2a/merchant_agent",
        verified_at: res.json.verified_at,
      },
    });
    const outbox = await ownerSql`select type, data from events where org_id = ${org.id}`;
    expect(outbox).toEqual([
      {
        type: "agent.trust_changed",
        data: expect.objectContaining({
          previous_tier: "high",
          risk_tier: "low",
          reason: "card_verified",
        }),
      },
    ]);
    const [entry] = await ownerSql`select type from audit_entries
      where org_id = ${org.id} and type = 'agent.card_checked'`;
    expect(entry).toBeDefined();
  });

  it("verifies an ES256-signed 1.0 card", async () => {
    const { org, key, agent } = await setup();
    const pair = await registerKey(org, agent.id, "ES256");
    const { protocolVersion: _, url, preferredTransport: __, ...rest } = merchantCard();
    const card10 = {
      ...rest,
      supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    };
    const res = await verify(key, { agent_id: agent.id, card: await signCard(card10, pair) });
    expect(res.json).toMatchObject({
      status: "verified",
      protocol_version: "1.0",
      url,
      signatures: [expect.objectContaining({ alg: "ES256", status: "valid" })],
    });
  });

  it("marks a tampered card invalid, lowers trust, and says why", async () => {
    const { key, agent, pair } = await setup();
    const card = await signCard(merchantCard(), pair);
    const res = await verify(key, { agent_id: agent.id, card: { ...card, name: "EvilAgent" } });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("invalid");
    expect(res.json.signatures[0]!.status).toBe("invalid");
    expect(res.json.verified_at).toBeNull();
    const after = (await call(`/v1/agents/${agent.id}`, { key })).json;
    expect(after).toMatchObject({ trust_score: 25, card: null });
  });

  it.each([
    [
      "a field changed after signing",
      async (pair: Pair) => {
        const card = await signCard(merchantCard(), pair);
        return { ...card, url: "https://attacker.example/a2a" };
      },
    ],
    [
      "another key claiming the registered kid",
      async (pair: Pair) => signCard(merchantCard(), await keyPair(), { kid: pair.kid }),
    ],
    [
      "a payload canonicalized differently (JSON.stringify, other key order)",
      async (pair: Pair) => {
        const card = merchantCard();
        const reordered = Object.fromEntries(Object.entries(card).reverse());
        return signCard(card, pair, { payload: JSON.stringify(reordered) });
      },
    ],
  ])("marks a card with %s invalid", async (_, make) => {
    const { key, agent, pair } = await setup();
    const res = await verify(key, { agent_id: agent.id, card: await make(pair) });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: "invalid",
      verified_at: null,
      signatures: [
        { index: 0, kid: pair.kid, alg: "EdDSA", status: "invalid", message: expect.any(String) },
      ],
      reasons: [{ code: "signature_invalid", message: expect.any(String), path: "signatures[0]" }],
    });
  });

  it("answers an oversized card with a short invalid result, not its every flaw", async () => {
    const { key, agent } = await setup();
    // About 255 KB: 85,000 empty skills, each missing four fields.
    const card = { ...merchantCard(), skills: Array.from({ length: 85_000 }, () => ({})) };
    const res = await verify(key, { agent_id: agent.id, card });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("invalid");
    expect(res.json.reasons).toEqual([
      { code: "too_large", message: expect.any(String), path: "skills" },
    ]);
    expect(res.text.length).toBeLessThan(2_000);
    const [row] = await ownerSql`select pg_column_size(card_reasons) as size from agents
      where id = ${agent.id}`;
    expect(row?.size).toBeLessThan(1_000);
  });

  it("takes the agent id in any case and answers it lowercase", async () => {
    const { key, agent, pair } = await setup();
    const card = await signCard(merchantCard(), pair);
    const res = await verify(key, { agent_id: agent.id.toUpperCase(), card });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ agent_id: agent.id, status: "verified" });
  });

  it("leaves a card without signatures unverified", async () => {
    const { key, agent } = await setup();
    const res = await verify(key, { agent_id: agent.id, card: merchantCard() });
    expect(res.json.status).toBe("unverified");
    expect(res.json.reasons.map((r: { code: string }) => r.code)).toContain("no_signature");
  });

  it("never verifies with a revoked key", async () => {
    const { key, agent, pair } = await setup();
    const card = await signCard(merchantCard(), pair);
    await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, { method: "POST", key });
    const res = await verify(key, { agent_id: agent.id, card });
    expect(res.json.status).toBe("unverified");
    expect(res.json.signatures[0]!.status).toBe("revoked_key");
  });

  it("unbinds a verified card when its only signing key is revoked", async () => {
    const { org, key, agent, pair } = await setup();
    const card = await signCard(merchantCard(), pair);
    await verify(key, { agent_id: agent.id, card });
    expect((await call(`/v1/agents/${agent.id}`, { key })).json.trust_score).toBe(75);

    await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, { method: "POST", key });
    const status = await call(`/v1/agents/${agent.id}/card-status`, { key });
    expect(status.json).toMatchObject({
      status: "unverified",
      verified_at: null,
      reasons: [{ code: "signing_key_revoked", message: expect.any(String) }],
      signatures: [{ kid: pair.kid, status: "revoked_key" }],
    });
    const after = (await call(`/v1/agents/${agent.id}`, { key })).json;
    // The key's 15 and the card's 30 gone: back to the base score, in one step.
    expect(after).toMatchObject({
      trust_score: 30,
      risk_tier: "high",
      card: null,
      evidence: { card_status: "unverified", active_keys: 0 },
    });
    const timeline = await call(`/v1/agents/${agent.id}/trust-history?limit=1`, {
      token: org.token,
    });
    expect(timeline.json.data[0]).toMatchObject({
      reason: "key_revoked",
      previous_score: 75,
      trust_score: 30,
    });
  });

  it("keeps a card verified while another active key signed it", async () => {
    const { org, key, agent, pair } = await setup();
    const second = await registerKey(org, agent.id);
    const card = await signCard(await signCard(merchantCard(), pair), second);
    expect((await verify(key, { agent_id: agent.id, card })).json.status).toBe("verified");
    await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, { method: "POST", key });
    const after = (await call(`/v1/agents/${agent.id}`, { key })).json;
    expect(after).toMatchObject({ trust_score: 75, evidence: { card_status: "verified" } });
    expect(after.card).not.toBeNull();
  });

  it("does not accept another agent's key", async () => {
    const { org, key, agent } = await setup();
    const other = await newAgent(org);
    const otherPair = await registerKey(org, other.id);
    const card = await signCard(merchantCard(), otherPair);
    const res = await verify(key, { agent_id: agent.id, card });
    expect(res.json.status).toBe("unverified");
    expect(res.json.signatures[0]!.status).toBe("unknown_key");
  });

  it("fetches a card from a URL (loopback is allowed in local development only)", async () => {
    const { key, agent, pair } = await setup();
    const url = await publish(`card-${agent.id}`, await signCard(merchantCard(), pair));
    const res = await verify(key, { agent_id: agent.id, card_url: url });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "verified", source_url: url });
  });

  it.each([
    ["http://169.254.169.254/latest/meta-data/", "url_not_allowed"],
    ["http://10.0.0.7/card.json", "url_not_allowed"],
    ["http://[fd00::1]/card.json", "url_not_allowed"],
    ["file:///etc/passwd", "url_not_allowed"],
    ["https://metadata.google.internal/", "url_not_allowed"],
  ])("refuses to fetch %s", async (url, error) => {
    const { key, agent } = await setup();
    const res = await verify(key, { agent_id: agent.id, card_url: url });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe(error);
  });

  it.each(["/redirect", "/big", "/docs/missing"])(
    "answers 400 card_unreachable when %s misbehaves",
    async (path) => {
      const { key, agent } = await setup();
      const res = await verify(key, {
        agent_id: agent.id,
        card_url: `${env.TEST_FIXTURE_URL}${path}`,
      });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("card_unreachable");
      // Nothing was recorded for a card that never arrived.
      const status = await call(`/v1/agents/${agent.id}/card-status`, { key });
      expect(status.json.checked_at).toBeNull();
    },
  );

  it("gives up on a card URL that takes longer than 5 seconds: 400 card_unreachable", async () => {
    const { key, agent } = await setup();
    const started = Date.now();
    const res = await verify(key, {
      agent_id: agent.id,
      card_url: `${env.TEST_FIXTURE_URL}/slow`,
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("card_unreachable");
    // The fixture answers after 10 s; the fetch gave up at 5.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(Date.now() - started).toBeLessThan(9_000);
  }, 20_000);

  it("refuses a body with both or neither of card and card_url", async () => {
    const { key, agent } = await setup();
    for (const body of [
      { agent_id: agent.id },
      { agent_id: agent.id, card: merchantCard(), card_url: "https://a.example/card" },
      { agent_id: "nope", card: merchantCard() },
      { agent_id: agent.id, card: merchantCard(), protocol_version: "2.0" },
    ]) {
      const res = await verify(key, body);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
  });

  it("answers 404 for another org's agent, and 409 for a revoked one", async () => {
    const { key } = await setup();
    const other = await setup();
    const foreign = await verify(key, { agent_id: other.agent.id, card: merchantCard() });
    expect(foreign.status).toBe(404);
    await call(`/v1/agents/${other.agent.id}`, {
      method: "PATCH",
      key: other.key,
      body: { status: "revoked" },
    });
    const revoked = await verify(other.key, { agent_id: other.agent.id, card: merchantCard() });
    expect(revoked.status).toBe(409);
  });
});

/** A 1.0 card as real ones are written: several fields at their default value. */
function v1Card(): Record<string, unknown> {
  const { protocolVersion: _, url, preferredTransport: __, ...rest } = merchantCard();
  return {
    ...rest,
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    documentationUrl: "",
    capabilities: { streaming: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    skills: [{ id: "search", name: "Search", description: "", tags: ["search"], examples: [] }],
  };
}

describe("POST /v1/agents/verify-card with a 1.0 card signed by the official A2A SDK", () => {
  it.each(["ES256", "EdDSA"] as const)(
    "verifies it (%s) and says it matched the SDK form",
    async (alg) => {
      const { org, key, agent } = await setup();
      const pair = await registerKey(org, agent.id, alg);
      const res = await verify(key, {
        agent_id: agent.id,
        card: await sdkSignCard(v1Card(), pair),
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: "verified", protocol_version: "1.0", reasons: [] });
      expect(res.json.signatures).toEqual([
        {
          index: 0,
          kid: pair.kid,
          alg,
          status: "valid",
          message:
            "the signature verifies over the card as the official A2A SDKs canonicalize it, " +
            "not over its A2A 1.0 §8.4.1 form",
          form: "sdk",
          diagnosis: null,
        },
      ]);
      expect((await call(`/v1/agents/${agent.id}/card-status`, { key })).json).toEqual(res.json);
      expect((await call(`/v1/agents/${agent.id}`, { key })).json.trust_score).toBe(75);
    },
  );

  it("answers invalid for it once a field changed, matching no form", async () => {
    const { key, agent, pair } = await setup();
    const card = {
      ...(await sdkSignCard(v1Card(), pair)),
      documentationUrl: "https://evil.example",
    };
    const res = await verify(key, { agent_id: agent.id, card });
    expect(res.status).toBe(200);
    const message =
      "the signature does not match the card's canonical form (A2A 1.0 §8.4.1), the official " +
      "SDKs' form or the card as received: the card changed after it was signed, or other " +
      "bytes or another key were signed";
    expect(res.json).toMatchObject({
      status: "invalid",
      verified_at: null,
      reasons: [{ code: "signature_invalid", message, path: "signatures[0]" }],
      signatures: [
        {
          index: 0,
          kid: pair.kid,
          status: "invalid",
          message,
          form: null,
          diagnosis: "matches_no_form",
        },
      ],
    });
  });

  it("tells a signer that skipped the default-value rules from a changed card", async () => {
    const { key, agent, pair } = await setup();
    // Signed over the card exactly as published: what a signer unaware of §8.4.1 does.
    const res = await verify(key, { agent_id: agent.id, card: await signCard(v1Card(), pair) });
    expect(res.status).toBe(200);
    const message =
      "the signature verifies over the card as received but not over its canonical form: the " +
      "signer kept fields at their default value, which A2A 1.0 §8.4.1 omits (the card is as " +
      "it was signed; its signer needs fixing)";
    expect(res.json).toMatchObject({
      status: "invalid",
      reasons: [{ code: "signature_invalid", message, path: "signatures[0]" }],
      signatures: [
        {
          index: 0,
          kid: pair.kid,
          status: "invalid",
          message,
          form: null,
          diagnosis: "signed_as_received",
        },
      ],
    });
  });
});

describe("GET /v1/agents/{id}/card-status", () => {
  it("reads form and diagnosis as null on a check stored before signatures had them", async () => {
    const { key, agent, pair } = await setup();
    await verify(key, { agent_id: agent.id, card: await signCard(merchantCard(), pair) });
    await ownerSql`update agents set card_signatures = (select jsonb_agg(s - 'form' - 'diagnosis')
      from jsonb_array_elements(card_signatures) s) where id = ${agent.id}`;
    const res = await call(`/v1/agents/${agent.id}/card-status`, { key });
    expect(res.json.signatures).toEqual([
      {
        index: 0,
        kid: pair.kid,
        alg: "EdDSA",
        status: "valid",
        message: "the signature verifies",
        form: null,
        diagnosis: null,
      },
    ]);
  });

  it("reports unverified with reason no_card before any card", async () => {
    const { key, agent } = await setup();
    const res = await call(`/v1/agents/${agent.id}/card-status`, { key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "agent_card_status",
      agent_id: agent.id,
      status: "unverified",
      reasons: [{ code: "no_card", message: expect.any(String) }],
      protocol_version: null,
      digest: null,
      name: null,
      url: null,
      source_url: null,
      signatures: [],
      checked_at: null,
      verified_at: null,
    });
  });
});
