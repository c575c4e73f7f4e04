import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/auth/api-key";
import { call, newOrg } from "./support/api";
import { addMember, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

describe("POST /v1/api-keys", () => {
  it("creates a key, shows the plaintext once and stores only its SHA-256", async () => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      body: { name: "checkout service", scopes: ["assess:write", "assess:read"], mode: "live" },
    });
    expect(res.status).toBe(201);
    expect(res.json.key).toMatch(/^aar_live_[A-Za-z0-9_-]{43}$/);
    expect(res.json).toMatchObject({
      object: "api_key",
      name: "checkout service",
      mode: "live",
      scopes: ["assess:write", "assess:read"],
      status: "active",
      revoked_at: null,
      prefix: res.json.key.slice(0, 13),
    });

    const rows = await ownerSql`select * from api_keys where id = ${res.json.id}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).toBe(await hashApiKey(res.json.key));
    expect(JSON.stringify(rows)).not.toContain(res.json.key);

    const listed = await call("/v1/api-keys", { token: org.token });
    expect(listed.text).not.toContain(res.json.key);
    expect(listed.text).not.toContain(rows[0]?.key_hash);
    expect(listed.json.data[0]).not.toHaveProperty("key");
  });

  it("makes test-mode keys with their own prefix", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"], "test");
    expect(key).toMatch(/^aar_test_/);
  });

  it("defaults the mode to live", async () => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      body: { name: "k", scopes: ["assess:read"] },
    });
    expect(res.status).toBe(201);
    expect(res.json.mode).toBe("live");
  });

  it.each([
    [["keys:write"], "scopes.0"],
    [["assess:read", "keys:read"], "scopes.1"],
    [["assess:read", "everything"], "scopes.1"],
  ])("refuses scopes %j with 400 invalid_scope naming %s", async (scopes, path) => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      body: { name: "k", scopes },
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_scope");
    expect(res.error.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it.each([
    [{ name: "k", scopes: [] }, "scopes"],
    [{ name: "", scopes: ["assess:read"] }, "name"],
    [{ scopes: ["assess:read"] }, "name"],
    [{ name: "k", scopes: ["assess:read"], mode: "sandbox" }, "mode"],
    [{ name: "k", scopes: "assess:read" }, "scopes"],
    [{ name: "a\u0000b", scopes: ["assess:read"] }, "name"],
    [{ name: "line\nbreak", scopes: ["assess:read"] }, "name"],
  ])("refuses the body %j with 400 naming %s", async (body, path) => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", { method: "POST", token: org.token, raw: true, body });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it("refuses malformed JSON with 400 invalid_json", async () => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      raw: true,
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(res.error).toEqual(errorBody("invalid_json"));
  });

  it("refuses a body that is not JSON with 400", async () => {
    const org = await newOrg();
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      raw: true,
      body: "name=k",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it("lets an admin manage keys, and not a member", async () => {
    const org = await newOrg();
    const admin = await newOrg();
    const member = await newOrg();
    await addMember(org.id, admin.subject, "admin");
    await addMember(org.id, member.subject, "member");
    const body = { name: "k", scopes: ["assess:read"] };
    const asAdmin = await call("/v1/api-keys", {
      method: "POST",
      token: admin.token,
      headers: { "x-org-id": org.id },
      body,
    });
    expect(asAdmin.status).toBe(201);
    const me = await call("/v1/me", { key: asAdmin.json.key });
    expect(me.json.orgId).toBe(org.id);
    const asMember = await call("/v1/api-keys", {
      method: "POST",
      token: member.token,
      headers: { "x-org-id": org.id },
      body,
    });
    expect(asMember.status).toBe(403);
  });
});

describe("GET /v1/api-keys", () => {
  it("pages newest first with an opaque cursor", async () => {
    const org = await newOrg();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await org.key(["assess:read"]));
    const first = await call("/v1/api-keys?limit=2", { token: org.token });
    expect(first.status).toBe(200);
    expect(first.json.object).toBe("list");
    expect(first.json.data.map((k: { id: string }) => k.id)).toEqual([made[2]?.id, made[1]?.id]);
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/api-keys?limit=2&cursor=${first.json.next_cursor}`, {
      token: org.token,
    });
    expect(second.json.data.map((k: { id: string }) => k.id)).toEqual([made[0]?.id]);
    expect(second.json.has_more).toBe(false);
    expect(second.json.next_cursor).toBeNull();
  });

  it("lists only the caller's org", async () => {
    const mine = await newOrg();
    const theirs = await newOrg();
    const { id } = await theirs.key(["assess:read"]);
    const res = await call("/v1/api-keys", { token: mine.token });
    expect(res.json.data.map((k: { id: string }) => k.id)).not.toContain(id);
  });

  it.each(["limit=0", "limit=101", "limit=abc", "cursor=%%%", "cursor=bm90LWEtdXVpZA"])(
    "refuses %s with 400",
    async (query) => {
      const org = await newOrg();
      const res = await call(`/v1/api-keys?${query}`, { token: org.token });
      expect(res.status).toBe(400);
      expect(["invalid_request", "invalid_cursor"]).toContain(res.error.error);
    },
  );
});

describe("POST /v1/api-keys/{id}/revoke", () => {
  it("revokes at once and is harmless to repeat", async () => {
    const org = await newOrg();
    const { id, key } = await org.key(["assess:read"]);
    expect((await call("/v1/me", { key })).status).toBe(200);

    const revoked = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ id, status: "revoked" });
    expect(Date.parse(revoked.json.revoked_at!)).not.toBeNaN();

    expect((await call("/v1/me", { key })).status).toBe(401);

    const again = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(revoked.json);
  });

  it("answers 404 for an unknown key", async () => {
    const org = await newOrg();
    const res = await call(`/v1/api-keys/${crypto.randomUUID()}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });

  it("cannot revoke another org's key, which keeps working", async () => {
    const victim = await newOrg();
    const { id, key } = await victim.key(["assess:read"]);
    const attacker = await newOrg();
    const res = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: attacker.token });
    expect(res.status).toBe(404);
    expect((await call("/v1/me", { key })).status).toBe(200);
  });
});
