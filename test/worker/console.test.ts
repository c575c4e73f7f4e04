import { describe, expect, it } from "vitest";
import type { Refusal } from "../../src/auth/unauthenticated";
import { call, newOrg, sessionToken } from "./support/api";
import { addMember } from "./support/db";
import { errorBody, refusedBody } from "./support/errors";

describe("POST /v1/orgs", () => {
  it("creates the user's org once, then returns the same org", async () => {
    const token = await sessionToken({ email: "ada@example.com" });
    const first = await call("/v1/orgs", { method: "POST", token });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({
      object: "organization",
      name: "ada@example.com's organization",
      role: "owner",
    });
    expect(first.json.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(first.json.created).toISOString()).toBe(first.json.created);

    const second = await call("/v1/orgs", { method: "POST", token, body: { name: "Other" } });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
  });

  it("creates exactly one org when the same user's calls race", async () => {
    const token = await sessionToken();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        call("/v1/orgs", { method: "POST", token, body: { name: "Race" } }),
      ),
    );
    // One 201 and seven 200s; the bodies name what went wrong otherwise.
    expect(answers.map((a) => (a.status === 200 ? 200 : [a.status, a.json])).sort()).toEqual([
      ...Array(7).fill(200),
      [201, answers.find((a) => a.status === 201)?.json],
    ]);
    expect(new Set(answers.map((a) => a.json.id)).size).toBe(1);
  });

  it("takes a name", async () => {
    const token = await sessionToken();
    const res = await call("/v1/orgs", { method: "POST", token, body: { name: "Acme Payments" } });
    expect(res.status).toBe(201);
    expect(res.json.name).toBe("Acme Payments");
  });

  it("refuses an API key: org creation is for signed-in users", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await call("/v1/orgs", { method: "POST", key });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("session_required"));
  });

  it("rejects a name with a NUL character with 400, not a database error", async () => {
    const token = await sessionToken();
    const res = await call("/v1/orgs", { method: "POST", token, body: { name: "a\u0000b" } });
    expect(res.status).toBe(400);
    expect(res.error.details[0].path).toBe("name");
  });

  it("rejects an unknown body field with 400 and the path", async () => {
    const token = await sessionToken();
    const res = await call("/v1/orgs", {
      method: "POST",
      token,
      body: { name: "x", plan: "free" },
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details[0].code).toBe("unrecognized_keys");
  });
});

describe("session tokens", () => {
  const cases: [string, () => Promise<string>, Refusal][] = [
    ["an expired token", () => sessionToken({}, { expiresIn: "-1m" }), "expired_session"],
    [
      "a token from another issuer",
      () => sessionToken({}, { issuer: "https://evil.example" }),
      "unknown_session",
    ],
    [
      "a token for another audience",
      () => sessionToken({}, { audience: "someone-else" }),
      "unknown_session",
    ],
    [
      "a token signed by an unknown key",
      async () => {
        const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
          "sign",
          "verify",
        ])) as CryptoKeyPair;
        const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
        return sessionToken({}, { privateJwk: { ...jwk, kid: "local-idp" } as never });
      },
      "unknown_session",
    ],
    ["a token that is not a JWT", async () => "not.a.jwt", "malformed_session"],
  ];
  for (const [name, make, refusal] of cases) {
    it(`refuses ${name} with 401 (${refusal})`, async () => {
      const res = await call("/v1/me", { token: await make() });
      expect(res.status).toBe(401);
      expect(res.error).toEqual(refusedBody(refusal));
    });
  }
});

describe("GET /v1/me", () => {
  it("describes an API key caller", async () => {
    const org = await newOrg();
    const { id, key } = await org.key(["assess:read", "audit:read"], "test");
    const res = await call("/v1/me", { key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      orgId: org.id,
      orgName: `${org.subject}@example.com's organization`,
      actor: { type: "api_key", id, name: "test", mode: "test" },
      scopes: ["assess:read", "audit:read"],
      livemode: false,
    });
  });

  it("accepts the key as a Bearer credential too", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await call("/v1/me", { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.json.orgId).toBe(org.id);
    expect(res.json.livemode).toBe(true);
  });

  it("describes an owner session with every scope", async () => {
    const org = await newOrg();
    const res = await call("/v1/me", { token: org.token });
    expect(res.status).toBe(200);
    expect(res.json.orgId).toBe(org.id);
    expect(res.json.orgName).toBe(`${org.subject}@example.com's organization`);
    expect(res.json.actor).toMatchObject({ type: "user", subject: org.subject, role: "owner" });
    expect(res.json.scopes).toContain("keys:write");
    expect(res.json.scopes).toContain("assess:write");
  });

  it("names the org the session acts for, of all the orgs its user belongs to", async () => {
    const mine = await newOrg();
    const theirs = await newOrg();
    await addMember(theirs.id, mine.subject, "member");
    const own = await call("/v1/me", { token: mine.token, headers: { "x-org-id": mine.id } });
    expect(own.json.orgName).toBe(`${mine.subject}@example.com's organization`);
    const other = await call("/v1/me", { token: mine.token, headers: { "x-org-id": theirs.id } });
    expect(other.status, other.text).toBe(200);
    expect(other.json).toMatchObject({
      orgId: theirs.id,
      orgName: `${theirs.subject}@example.com's organization`,
      actor: { role: "member" },
    });
  });

  it("tells a signed-in user without an org to create one", async () => {
    const res = await call("/v1/me", { token: await sessionToken() });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("no_organization"));
  });

  it("refuses a session asking for an org it does not belong to", async () => {
    const mine = await newOrg();
    const theirs = await newOrg();
    const res = await call("/v1/me", { token: mine.token, headers: { "x-org-id": theirs.id } });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("no_organization"));
  });
});
