import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { call, newOrg, sessionToken } from "./support/api";
import { ownerSql } from "./support/db";
import { keyPair, newAgent } from "./support/identity";

// Races and failed writes around commit() (src/ledger/commit.ts): the entry is sequenced before
// the write, so what a loser or a failed attempt leaves must not change what a client sees.

describe("commit under races and failed writes", () => {
  it("records a key for the agent it is registered to, never for one that was refused", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const agent = await newAgent(org);
    const pair = await keyPair();
    const ghost = await call(`/v1/agents/${crypto.randomUUID()}/keys`, {
      method: "POST",
      key,
      body: { jwk: pair.publicJwk },
    });
    expect(ghost.status).toBe(404);
    const real = await call(`/v1/agents/${agent.id}/keys`, {
      method: "POST",
      key,
      body: { jwk: pair.publicJwk },
    });
    expect(real.status).toBe(201);
    const entries = await ownerSql`select subject_id from audit_entries
      where org_id = ${org.id} and type = 'agent_key.registered'`;
    expect(entries.map((e) => e.subject_id)).toEqual([agent.id]);
  });

  it("revokes an agent whatever status change races it", async () => {
    const org = await newOrg();
    for (let i = 0; i < 3; i++) {
      const agent = await newAgent(org);
      const patch = (status: "suspended" | "revoked") =>
        call(`/v1/agents/${agent.id}`, { method: "PATCH", token: org.token, body: { status } });
      const [suspended, revoked] = await Promise.all([patch("suspended"), patch("revoked")]);
      expect([200, 409]).toContain(suspended.status);
      expect(revoked.status).toBe(200);
      expect(revoked.json.status).toBe("revoked");
      const now = await call(`/v1/agents/${agent.id}`, { token: org.token });
      expect(now.json.status).toBe("revoked");
    }
  });

  it("founds an org on a retry after a failed write: 201, and the entry records it", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const token = await sessionToken({ sub: subject, email: `${subject}@example.com` });
    const doomed = `Doomed-${crypto.randomUUID()}`;
    await ownerSql.query(`create or replace function commit_races_fail() returns trigger
      language plpgsql as $$ begin raise exception 'refused by the test'; end $$`);
    await ownerSql.query(`create trigger commit_races_fail before insert on organizations
      for each row when (new.name = '${doomed}') execute function commit_races_fail()`);
    try {
      const first = await call("/v1/orgs", { method: "POST", token, body: { name: doomed } });
      expect(first.status).toBe(500);
    } finally {
      await ownerSql.query("drop trigger commit_races_fail on organizations");
    }
    // The retry finishes the first attempt's founding: its terms, under its entry.
    const retry = await call("/v1/orgs", { method: "POST", token, body: { name: "Acme" } });
    expect(retry.status).toBe(201);
    const entries = await ownerSql`select digest, actor_id from audit_entries
      where org_id = ${retry.json.id} and type = 'org.created'`;
    expect(entries).toHaveLength(1);
    expect(entries[0]?.digest).toBe(payloadDigest(retry.json));
    const [user] = await ownerSql`select id from users where idp_subject = ${subject}`;
    expect(entries[0]?.actor_id).toBe(user?.id);
  });

  it("founds one org for racing first calls, named by the entry that records it", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const token = await sessionToken({ sub: subject, email: `${subject}@example.com` });
    const [a, b] = await Promise.all([
      call("/v1/orgs", { method: "POST", token, body: { name: "A" } }),
      call("/v1/orgs", { method: "POST", token, body: { name: "B" } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(a.json.id).toBe(b.json.id);
    expect(a.json).toEqual(b.json);
    const entries = await ownerSql`select digest from audit_entries
      where org_id = ${a.json.id} and type = 'org.created'`;
    expect(entries.map((e) => e.digest)).toEqual([payloadDigest(a.json)]);
  });

  it("answers both racing activations of one draft, and both racing shadowings of another", async () => {
    const org = await newOrg();
    const draft = async (name: string) =>
      (
        await call("/v1/policies", {
          method: "POST",
          token: org.token,
          body: { name, rules: { max_amount: 1000 } },
        })
      ).json.id as string;
    const act = await draft("a");
    const activations = await Promise.all(
      [0, 1].map(() => call(`/v1/policies/${act}/activate`, { method: "POST", token: org.token })),
    );
    expect(activations.map((r) => r.status)).toEqual([200, 200]);
    expect(activations[0]?.json).toEqual(activations[1]?.json);
    const shadow = await draft("s");
    const shadowings = await Promise.all(
      [0, 1].map(() => call(`/v1/policies/${shadow}/shadow`, { method: "POST", token: org.token })),
    );
    expect(shadowings.map((r) => r.status)).toEqual([200, 200]);
    expect(shadowings.map((r) => r.json.shadow)).toEqual([true, true]);
  });
});
