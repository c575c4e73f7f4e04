import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { keyPair, newAgent, registerKey } from "./support/identity";

async function setup() {
  const org = await newOrg();
  const { key } = await org.key();
  const agent = await newAgent(org);
  return { org, key, agent };
}

function register(key: string, agentId: string, jwk: unknown) {
  return call(`/v1/agents/${agentId}/keys`, { method: "POST", key, raw: true, body: { jwk } });
}

describe("POST /v1/agents/{id}/keys", () => {
  it.each(["EdDSA", "ES256", "RS256"] as const)(
    "registers a %s public key under its RFC 7638 thumbprint",
    async (alg) => {
      const { org, key, agent } = await setup();
      const pair = await keyPair(alg);
      const res = await register(key, agent.id, pair.publicJwk);
      expect(res.status).toBe(201);
      expect(res.json).toEqual({
        object: "agent_key",
        id: pair.kid,
        agent_id: agent.id,
        kty: pair.publicJwk.kty,
        crv: pair.publicJwk.crv ?? null,
        alg,
        jwk: expect.objectContaining({ kty: pair.publicJwk.kty }),
        status: "active",
        created: expect.any(String),
        revoked_at: null,
        status_list: {
          idx: expect.any(Number),
          uri: expect.stringMatching(/\/v1\/status-lists\//),
        },
      });
      const [row] = await ownerSql`select thumbprint from agent_keys where org_id = ${org.id}`;
      expect(row?.thumbprint).toBe(pair.kid);
      const after = await call(`/v1/agents/${agent.id}`, { key });
      expect(after.json).toMatchObject({
        trust_score: 45,
        evidence: { active_keys: 1 },
      });
    },
  );

  it("answers the same key twice with the one record, 200 the second time", async () => {
    const { org, key, agent } = await setup();
    const pair = await keyPair();
    const first = await register(key, agent.id, pair.publicJwk);
    // The same key with its members in another order, and an extra member.
    const reordered = { x: pair.publicJwk.x, kty: "OKP", crv: "Ed25519", use: "sig" };
    const second = await register(key, agent.id, reordered);
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(await ownerSql`select 1 from agent_keys where org_id = ${org.id}`).toHaveLength(1);
    const ledger = await ownerSql`select 1 from audit_entries
      where org_id = ${org.id} and type = 'agent_key.registered'`;
    expect(ledger).toHaveLength(1);
  });

  it("takes the agent id in any case: the same key again is the same record", async () => {
    const { org, key, agent } = await setup();
    const pair = await keyPair();
    const upper = await register(key, agent.id.toUpperCase(), pair.publicJwk);
    expect(upper.status).toBe(201);
    expect(upper.json.agent_id).toBe(agent.id);
    const lower = await register(key, agent.id, pair.publicJwk);
    expect(lower.status).toBe(200);
    const again = await register(key, agent.id.toUpperCase(), pair.publicJwk);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(upper.json);
    const ledger = await ownerSql`select 1 from audit_entries
      where org_id = ${org.id} and type = 'agent_key.registered'`;
    expect(ledger).toHaveLength(1);
  });

  it("records a registration whose first attempt committed but never reached the ledger", async () => {
    const { org, key, agent } = await setup();
    const pair = await keyPair();
    // What a first attempt that failed between the commit and the ledger leaves behind.
    await ownerSql`insert into agent_keys (org_id, thumbprint, agent_id, jwk, kty, crv, alg)
      values (${org.id}, ${pair.kid}, ${agent.id}, ${JSON.stringify(pair.publicJwk)}::jsonb,
              'OKP', 'Ed25519', 'EdDSA')`;
    const retry = await register(key, agent.id, pair.publicJwk);
    expect(retry.status).toBe(200);
    const entries = async () => ownerSql`select type from audit_entries
      where org_id = ${org.id} and type = 'agent_key.registered'`;
    expect(await entries()).toHaveLength(1);
    // The retry also settles the evidence the first attempt's batch would have.
    expect((await call(`/v1/agents/${agent.id}`, { key })).json.evidence.active_keys).toBe(1);
    await register(key, agent.id, pair.publicJwk);
    expect(await entries()).toHaveLength(1);
  });

  it("refuses a key already held by another agent of the org", async () => {
    const { org, key, agent } = await setup();
    const other = await newAgent(org);
    const pair = await registerKey(org, agent.id);
    const res = await register(key, other.id, pair.publicJwk);
    expect(res.status).toBe(409);
    expect(res.error.error).toBe("key_in_use");
  });

  it("lets another org register the same public key for its own agent", async () => {
    const { org, agent } = await setup();
    const pair = await registerKey(org, agent.id);
    const second = await setup();
    const res = await register(second.key, second.agent.id, pair.publicJwk);
    expect(res.status).toBe(201);
  });

  it("refuses private key material, naming the member", async () => {
    const { key, agent } = await setup();
    const { privateKey } = await generateKeyPair("EdDSA", { extractable: true });
    const res = await register(key, agent.id, await exportJWK(privateKey));
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain("jwk.d");
  });

  it.each([
    [{ kty: "OKP", crv: "X25519", x: "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo" }],
    [{ kty: "oct", k: "c2VjcmV0" }],
    [{ kty: "OKP", crv: "Ed25519", x: "not*base64" }],
    [{ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" }],
    [{}],
  ])("refuses %j with 400", async (jwk) => {
    const { key, agent } = await setup();
    const res = await register(key, agent.id, jwk);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it("refuses an RSA key under 2048 bits", async () => {
    const { key, agent } = await setup();
    // jose refuses to make one; WebCrypto still can.
    const { publicKey } = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const res = await register(key, agent.id, await exportJWK(publicKey));
    expect(res.status).toBe(400);
    expect(res.error.details[0].path).toBe("jwk.n");
  });

  it("answers 404 for an agent that does not exist", async () => {
    const { key } = await setup();
    const res = await register(
      key,
      "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
      (await keyPair()).publicJwk,
    );
    expect(res.status).toBe(404);
  });
});

describe("GET /v1/agents/{id}/keys", () => {
  it("lists newest first, revoked included, by keyset pages", async () => {
    const { org, key, agent } = await setup();
    const kids = [];
    for (let i = 0; i < 3; i++) kids.push((await registerKey(org, agent.id)).kid);
    await call(`/v1/agents/${agent.id}/keys/${kids[0]}/revoke`, { method: "POST", key });
    const first = await call(`/v1/agents/${agent.id}/keys?limit=2`, { key });
    expect(first.status).toBe(200);
    expect(first.json.data.map((k: { id: string }) => k.id)).toEqual([kids[2], kids[1]]);
    expect(first.json.has_more).toBe(true);
    const rest = await call(
      `/v1/agents/${agent.id}/keys?limit=2&cursor=${first.json.next_cursor}`,
      {
        key,
      },
    );
    expect(rest.json.data).toEqual([expect.objectContaining({ id: kids[0], status: "revoked" })]);
    expect(rest.json).toMatchObject({ has_more: false, next_cursor: null });
  });

  it.each([
    ["not one of its own", "abc"],
    // "999999999999999:a": a time past year 9999, which Postgres cannot hold.
    ["a time out of range", "OTk5OTk5OTk5OTk5OTk5OmE"],
  ])("refuses a cursor that is %s", async (_, cursor) => {
    const { key, agent } = await setup();
    const res = await call(`/v1/agents/${agent.id}/keys?cursor=${cursor}`, { key });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_cursor");
  });
});

describe("POST /v1/agents/{id}/keys/{keyId}/revoke", () => {
  it("revokes once for good: trust drops, the key cannot come back", async () => {
    const { org, key, agent } = await setup();
    const pair = await registerKey(org, agent.id);
    const res = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      key,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: pair.kid,
      status: "revoked",
      revoked_at: expect.any(String),
    });
    const again = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      key,
    });
    expect(again.json).toEqual(res.json);
    expect((await call(`/v1/agents/${agent.id}`, { key })).json).toMatchObject({
      trust_score: 30,
      evidence: { active_keys: 0 },
    });
    const back = await register(key, agent.id, pair.publicJwk);
    expect(back.status).toBe(409);
    expect(back.error.error).toBe("key_revoked");
    const ledger = await ownerSql`select type from audit_entries
      where org_id = ${org.id} and type like 'agent_key.%' order by sequence`;
    expect(ledger.map((e) => e.type)).toEqual(["agent_key.registered", "agent_key.revoked"]);
  });

  it("answers 404 for a key of another agent", async () => {
    const { org, key, agent } = await setup();
    const other = await newAgent(org);
    const pair = await registerKey(org, agent.id);
    const res = await call(`/v1/agents/${other.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      key,
    });
    expect(res.status).toBe(404);
  });
});
