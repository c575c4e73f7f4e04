import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { fromBase64url } from "#audit/encoding";
import worker from "../../workers/main";
import { call, newOrg, type RequestBody } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newPrincipal } from "./support/identity";

const ADA = {
  type: "individual",
  name: "Ada Lovelace",
  email: "ada@example.com",
  phone: "+442071234567",
  address: {
    line1: "12 St James's Square",
    city: "London",
    postal_code: "SW1Y 4JH",
    country: "GB",
  },
  external_ref: "cus_4711",
  metadata: { segment: "vip" },
} satisfies RequestBody<"/v1/principals", "POST">;

async function ownerKey() {
  const org = await newOrg();
  return { org, key: (await org.key()).key };
}

describe("POST /v1/principals", () => {
  it("creates a principal and answers every field", async () => {
    const { key } = await ownerKey();
    const res = await call("/v1/principals", { method: "POST", key, body: ADA });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      object: "principal",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ...ADA,
      status: "active",
      created: expect.any(String),
      erased_at: null,
    });
    const read = await call(`/v1/principals/${res.json.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);
  });

  it("stores no personal data in the clear", async () => {
    const { org, key } = await ownerKey();
    const res = await call("/v1/principals", { method: "POST", key, body: ADA });
    const [row] = await ownerSql`select * from principals where id = ${res.json.id}`;
    // The sealed columns are random base64url, where a short name can turn up by chance
    // ("…xAdaq…"): they are checked to be sealed, every other column for the data in clear.
    expect(row?.ciphertext).toMatch(/^v1\./);
    const stored = JSON.stringify({ ...row, ciphertext: "sealed", wrapped_key: "sealed" });
    for (const secret of ["Ada", "ada@example.com", "4071234567", "James", "cus_4711", "SW1Y"]) {
      expect(stored).not.toContain(secret);
    }
    expect(row?.org_id).toBe(org.id);
    expect(row?.wrapped_key).toMatch(/^v1\./);
    // The ledger entry holds a digest of the sealed record, never the data or a digest of it.
    const [entry] = await ownerSql`select * from audit_entries
      where org_id = ${org.id} and type = 'principal.created'`;
    expect(entry?.subject_id).toBe(res.json.id);
    const { type: _, metadata: __, ...personal } = ADA;
    const guesses = [
      personal,
      { ...personal, type: "individual" },
      res.json,
      ...Object.values(personal),
    ].map(payloadDigest);
    expect(guesses).not.toContain(entry?.digest);
    // It is the documented payload: {id, type, status, sealed_digest, erased_at}.
    expect(entry?.digest).toBe(
      payloadDigest({
        id: res.json.id,
        type: "individual",
        status: "active",
        sealed_digest: payloadDigest(row?.ciphertext),
        erased_at: null,
      }),
    );
  });

  it("defaults the type to individual and accepts a bare name", async () => {
    const { key } = await ownerKey();
    const res = await call("/v1/principals", { method: "POST", key, body: { name: "Acme Ltd" } });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      type: "individual",
      name: "Acme Ltd",
      email: null,
      phone: null,
      address: null,
      external_ref: null,
      metadata: {},
    });
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "x", email: "not-an-email" }, "email"],
    [{ name: "x", phone: "0207 123" }, "phone"],
    [{ name: "x", type: "robot" }, "type"],
    [{ name: "x", address: { city: "London" } }, "address.line1"],
    [{ name: "x", address: { line1: "1 Road", country: "gb" } }, "address.country"],
    [{ name: "x", unknown: 1 }, ""],
    [{ name: "x", metadata: { k: 1 } }, "metadata.k"],
    [{ name: "x\u0000y" }, "name"],
    [{ name: "x\ud800y" }, "name"],
    [{ name: "x", metadata: { k: "a\u0000" } }, "metadata.k"],
  ])("refuses %j with 400 naming %s", async (body, path) => {
    const { key } = await ownerKey();
    const res = await call("/v1/principals", { method: "POST", key, raw: true, body });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it("answers 503 and stores nothing when the master key is missing", async () => {
    // The whole Worker with the secret unset: the route refuses before writing anything.
    const { key, org } = await ownerKey();
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://risk.test/v1/principals", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(ADA),
      }),
      { ...env, PRINCIPAL_MASTER_KEY: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(errorBody("encryption_key_unavailable"));
    expect(await ownerSql`select id from principals where org_id = ${org.id}`).toEqual([]);
  });
});

describe("the order of refusals", () => {
  it("answers 401 for an unknown key before 503 for a missing master key", async () => {
    // Well formed, so only the database can tell it is nobody's.
    const unknown = `aar_live_${"A".repeat(43)}`;
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://risk.test/v1/principals", {
        method: "POST",
        headers: { "x-api-key": unknown, "content-type": "application/json" },
        body: JSON.stringify(ADA),
      }),
      { ...env, PRINCIPAL_MASTER_KEY: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(401);
  });

  it("answers 403 for a key without agents:write before 503", async () => {
    const org = await newOrg();
    const { key } = await org.key(["agents:read"]);
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://risk.test/v1/principals", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(ADA),
      }),
      { ...env, PRINCIPAL_MASTER_KEY: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(403);
  });
});

describe("GET /v1/principals", () => {
  it("lists newest first with keyset pagination and a status filter", async () => {
    const { org, key } = await ownerKey();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await newPrincipal(org, { name: `P${i}` }));
    await call(`/v1/principals/${ids[1]}/erase`, { method: "POST", key });

    const first = await call("/v1/principals?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json.data.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/principals?limit=2&cursor=${first.json.next_cursor}`, { key });
    expect(second.json.data.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(second.json).toMatchObject({ has_more: false, next_cursor: null });

    const erased = await call("/v1/principals?status=erased", { key });
    expect(erased.json.data.map((p: { id: string }) => p.id)).toEqual([ids[1]]);
    expect(erased.json.data[0]!.name).toBeNull();
  });

  it.each(["limit=0", "limit=101", "status=gone", "cursor=!!"])("refuses %s", async (q) => {
    const { key } = await ownerKey();
    expect((await call(`/v1/principals?${q}`, { key })).status).toBe(400);
  });
});

/** Every AES key the service holds, plus every data key of every other principal. */
async function everyKeyTheServiceHolds(exceptPrincipal: string): Promise<CryptoKey[]> {
  const keys: CryptoKey[] = [];
  const master = JSON.parse(env.PRINCIPAL_MASTER_KEY as string);
  keys.push(await aesKey(fromBase64url(master.k)));
  const signing = JSON.parse(env.SIGNING_KEY as string);
  keys.push(await aesKey(fromBase64url(signing.d)));
  const masterKey = await aesKey(fromBase64url(master.k));
  const others = await ownerSql`select id, org_id, wrapped_key from principals
    where wrapped_key is not null and id <> ${exceptPrincipal}`;
  for (const other of others) {
    const [, kid, iv, wrapped] = String(other.wrapped_key).split(".") as string[];
    const aad = JSON.stringify(["agent-risk/principal", "v1", "key", other.org_id, other.id, kid]);
    const raw = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(iv as string), additionalData: utf8(aad) },
      masterKey,
      fromBase64url(wrapped as string),
    );
    keys.push(await aesKey(new Uint8Array(raw)));
  }
  return keys;
}

function utf8(text: string) {
  return new TextEncoder().encode(text);
}

function aesKey(bytes: Uint8Array) {
  return crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["decrypt"]);
}

async function opens(key: CryptoKey, ciphertext: string, aad: string): Promise<boolean> {
  const [, iv, data] = ciphertext.split(".") as [string, string, string];
  try {
    await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(iv), additionalData: utf8(aad) },
      key,
      fromBase64url(data),
    );
    return true;
  } catch {
    return false;
  }
}

describe("POST /v1/principals/{id}/erase", () => {
  it("crypto-erases: reads are redacted, the ciphertext opens with no key, verify passes", async () => {
    const { org, key } = await ownerKey();
    const created = await call("/v1/principals", { method: "POST", key, body: ADA });
    const id = created.json.id;
    const [before] = await ownerSql`select * from principals where id = ${id}`;
    const aad = JSON.stringify(["agent-risk/principal", "v1", "data", org.id, id]);
    // The check can fail: with the data key still wrapped, the service's keys do open it.
    const candidatesBefore = await everyKeyTheServiceHolds("00000000-0000-0000-0000-000000000000");
    const openedBefore = await Promise.all(
      candidatesBefore.map((k) => opens(k, before?.ciphertext, aad)),
    );
    expect(openedBefore.filter(Boolean)).toHaveLength(1);

    const erased = await call(`/v1/principals/${id}/erase`, { method: "POST", key });
    expect(erased.status).toBe(200);
    expect(erased.json).toEqual({
      ...created.json,
      status: "erased",
      name: null,
      email: null,
      phone: null,
      address: null,
      external_ref: null,
      metadata: {},
      erased_at: expect.any(String),
    });

    const [after] = await ownerSql`select * from principals where id = ${id}`;
    expect(after?.wrapped_key).toBeNull();
    expect(after?.ciphertext).toBe(before?.ciphertext);
    const candidates = await everyKeyTheServiceHolds(id);
    expect(candidates.length).toBeGreaterThan(2);
    for (const candidate of candidates)
      expect(await opens(candidate, after?.ciphertext, aad)).toBe(false);

    expect((await call(`/v1/principals/${id}`, { key })).json).toEqual(erased.json);
    const listed = await call("/v1/principals", { key });
    expect(listed.json.data[0]).toEqual(erased.json);

    const verify = await call("/v1/audit/verify", { key });
    expect(verify.status).toBe(200);
    expect(verify.json).toMatchObject({ ok: true, first_break: null });
  });

  it("is harmless twice: same answer, one ledger entry", async () => {
    const { org, key } = await ownerKey();
    const id = await newPrincipal(org);
    const first = await call(`/v1/principals/${id}/erase`, { method: "POST", key });
    const second = await call(`/v1/principals/${id}/erase`, { method: "POST", key });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    const entries = await ownerSql`select sequence from audit_entries
      where org_id = ${org.id} and type = 'principal.erased'`;
    expect(entries).toHaveLength(1);
  });

  it("needs gdpr:erase, not agents:write", async () => {
    const org = await newOrg();
    const id = await newPrincipal(org);
    const { key } = await org.key(["agents:write", "agents:read"]);
    const res = await call(`/v1/principals/${id}/erase`, { method: "POST", key });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("insufficient_scope", { required: "gdpr:erase" }));
  });

  it("refuses an agent for an erased principal", async () => {
    const { org, key } = await ownerKey();
    const id = await newPrincipal(org);
    await call(`/v1/principals/${id}/erase`, { method: "POST", key });
    const res = await call("/v1/agents", {
      method: "POST",
      key,
      body: { principal_id: id, name: "late agent" },
    });
    expect(res.status).toBe(409);
    expect(res.error.error).toBe("principal_erased");
  });
});
