import { describe, expect, it } from "vitest";
import { call, newOrg, type TestOrg } from "./support/api";
import { type Json, orgWithKey } from "./support/assess";
import { ownerSql } from "./support/db";

// The spec's Policy create request ({name, rules, activate}) and create shape of `rules`;
// docs/assess.md (Policies) and risk-model.md (Policy rules) for what the spec leaves open.

function create(org: TestOrg, body: unknown, key?: string) {
  return call("/v1/policies", {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    raw: true,
    body,
  });
}

function activate(org: TestOrg, id: string, key?: string) {
  return call(`/v1/policies/${id}/activate`, {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
  });
}

async function draft(org: TestOrg, rules: Json = { max_amount: 1000 }) {
  const res = await create(org, { name: "draft", rules });
  expect(res.status).toBe(201);
  return res.json;
}

const isoDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe("POST /v1/policies", () => {
  it("creates a draft: 201 and the policy record", async () => {
    const org = await newOrg();
    const rules = {
      max_amount: 100000,
      currencies: ["EUR", "USD"],
      geo: { allow: ["DE", "NL"] },
      velocity: { window: "1h", max: 5 },
    };
    const res = await create(org, { name: "EU limits", rules });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      object: "policy",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "EU limits",
      status: "draft",
      version: null,
      rules,
      created: expect.stringMatching(isoDate),
      shadow: false,
      activated_at: null,
    });
    const read = await call(`/v1/policies/${res.json.id}`, { token: org.token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);
  });

  it("activate false is a draft too", async () => {
    const org = await newOrg();
    const res = await create(org, { name: "p", rules: {}, activate: false });
    expect(res.status).toBe(201);
    expect(res.json.status).toBe("draft");
  });

  it("activate true makes it the active policy at once, version 1", async () => {
    const org = await newOrg();
    const res = await create(org, { name: "p", rules: { max_amount: 5 }, activate: true });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ status: "active", version: 1 });
    expect(res.json.activated_at).toMatch(isoDate);
  });

  it("accepts the empty rule set (a policy that allows everything)", async () => {
    const org = await newOrg();
    expect((await create(org, { name: "open", rules: {} })).status).toBe(201);
  });

  it.each([
    ["max_amount 0", { max_amount: 0 }],
    ["a large max_amount", { max_amount: 9_007_199_254_740_991 }],
    ["one currency", { currencies: ["JPY"] }],
    ["one country", { geo: { allow: ["FR"] } }],
    ["velocity in seconds", { velocity: { window: "30s", max: 1 } }],
    ["velocity in minutes", { velocity: { window: "15m", max: 10 } }],
    ["velocity in days", { velocity: { window: "90d", max: 1000 } }],
    ["velocity as ISO 8601", { velocity: { window: "PT1H30M", max: 3 } }],
    ["velocity as ISO 8601 weeks", { velocity: { window: "P2W", max: 3 } }],
  ])("accepts %s", async (_, rules) => {
    const org = await newOrg();
    const res = await create(org, { name: "p", rules });
    expect(res.status).toBe(201);
    expect(res.json.rules).toEqual(rules);
  });

  it.each([
    ["no name", { rules: {} }],
    ["an empty name", { name: "", rules: {} }],
    ["a name that is not a string", { name: 5, rules: {} }],
    ["no rules", { name: "p" }],
    ["rules that are not an object", { name: "p", rules: [] }],
    ["activate that is not a boolean", { name: "p", rules: {}, activate: "yes" }],
    ["max_amount negative", { name: "p", rules: { max_amount: -1 } }],
    ["max_amount a float", { name: "p", rules: { max_amount: 1.5 } }],
    ["max_amount a string", { name: "p", rules: { max_amount: "100" } }],
    ["max_amount beyond the safe integers", { name: "p", rules: { max_amount: 2 ** 53 } }],
    ["currencies empty", { name: "p", rules: { currencies: [] } }],
    ["currencies a string", { name: "p", rules: { currencies: "EUR" } }],
    ["a lowercase currency", { name: "p", rules: { currencies: ["eur"] } }],
    ["a 2-letter currency", { name: "p", rules: { currencies: ["EU"] } }],
    ["a repeated currency", { name: "p", rules: { currencies: ["EUR", "EUR"] } }],
    ["geo without allow", { name: "p", rules: { geo: {} } }],
    ["geo.allow empty", { name: "p", rules: { geo: { allow: [] } } }],
    ["a lowercase country", { name: "p", rules: { geo: { allow: ["de"] } } }],
    ["a 3-letter country", { name: "p", rules: { geo: { allow: ["DEU"] } } }],
    ["an unknown geo field", { name: "p", rules: { geo: { allow: ["DE"], deny: ["FR"] } } }],
    ["velocity.window in years", { name: "p", rules: { velocity: { window: "1y", max: 1 } } }],
    ["velocity.window in months", { name: "p", rules: { velocity: { window: "P1M", max: 1 } } }],
    ["velocity.window uppercase", { name: "p", rules: { velocity: { window: "1H", max: 1 } } }],
    ["velocity.window of 0", { name: "p", rules: { velocity: { window: "0s", max: 1 } } }],
    ["velocity.window over 90 days", { name: "p", rules: { velocity: { window: "91d", max: 1 } } }],
    ["velocity.window a number", { name: "p", rules: { velocity: { window: 3600, max: 1 } } }],
    ["velocity.window garbage", { name: "p", rules: { velocity: { window: "soon", max: 1 } } }],
    ["velocity.max 0", { name: "p", rules: { velocity: { window: "1h", max: 0 } } }],
    ["velocity.max a float", { name: "p", rules: { velocity: { window: "1h", max: 1.5 } } }],
    ["velocity.max a string", { name: "p", rules: { velocity: { window: "1h", max: "2" } } }],
    ["an unknown rule", { name: "p", rules: { max_amonut: 100 } }],
    [
      "an unknown velocity field",
      { name: "p", rules: { velocity: { window: "1h", max: 1, burst: 2 } } },
    ],
  ])("refuses %s with 400", async (_, body) => {
    const org = await newOrg();
    const res = await create(org, body);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(Array.isArray(res.error.details)).toBe(true);
    const [row] = (await ownerSql`select count(*)::int as n from policies
                                  where org_id = ${org.id}`) as [Json];
    expect(row.n).toBe(0);
  });

  it("refuses malformed JSON with 400", async () => {
    const org = await newOrg();
    const res = await create(org, "{");
    expect(res.status).toBe(400);
  });
});

describe("activation and versions", () => {
  it("one active policy per org; each activation gets the next version", async () => {
    const org = await newOrg();
    const a = await draft(org);
    const b = await draft(org);
    const c = await draft(org);

    const first = await activate(org, a.id);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ id: a.id, status: "active", version: 1 });

    const second = await activate(org, b.id);
    expect(second.json).toMatchObject({ id: b.id, status: "active", version: 2 });
    expect((await call(`/v1/policies/${a.id}`, { token: org.token })).json.status).toBe("draft");

    const third = await activate(org, c.id);
    expect(third.json).toMatchObject({ id: c.id, status: "active", version: 3 });

    // Re-activating an old one gets a new version.
    const again = await activate(org, a.id);
    expect(again.json).toMatchObject({ id: a.id, status: "active", version: 4 });

    const active = await call("/v1/policies?status=active", { token: org.token });
    expect(active.status).toBe(200);
    expect(active.json.data.map((p: Json) => p.id)).toEqual([a.id]);
    const [row] = (await ownerSql`select count(*)::int as n from policies
      where org_id = ${org.id} and status = 'active'`) as [Json];
    expect(row.n).toBe(1);
  });

  it("activating the active policy changes nothing", async () => {
    const org = await newOrg();
    const a = await draft(org);
    const first = await activate(org, a.id);
    const again = await activate(org, a.id);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
  });

  it("creating with activate true replaces the active one", async () => {
    const org = await newOrg();
    const a = (await create(org, { name: "a", rules: {}, activate: true })).json;
    const b = (await create(org, { name: "b", rules: {}, activate: true })).json;
    expect(a.version).toBe(1);
    expect(b.version).toBe(2);
    expect((await call(`/v1/policies/${a.id}`, { token: org.token })).json.status).toBe("draft");
  });

  it("versions are per organization", async () => {
    const one = await newOrg();
    const two = await newOrg();
    await create(one, { name: "a", rules: {}, activate: true });
    await create(one, { name: "b", rules: {}, activate: true });
    const res = await create(two, { name: "a", rules: {}, activate: true });
    expect(res.json.version).toBe(1);
  });

  it("concurrent activations leave exactly one active policy, with distinct versions", async () => {
    const org = await newOrg();
    const drafts = await Promise.all([draft(org), draft(org), draft(org), draft(org)]);
    const answers = await Promise.all(drafts.map((d) => activate(org, d.id)));
    for (const a of answers) {
      expect([200, 409]).toContain(a.status);
      if (a.status === 409) expect(a.error.error).toBe("policy_activation_conflict");
    }
    const winners = answers.filter((a) => a.status === 200).map((a) => a.json.version);
    expect(new Set(winners).size).toBe(winners.length);
    const [row] = (await ownerSql`select count(*)::int as n from policies
      where org_id = ${org.id} and status = 'active'`) as [Json];
    expect(row.n).toBe(1);
  });

  it("concurrent creations with activate true leave one active policy and no stray draft", async () => {
    const org = await newOrg();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        create(org, { name: `p${i}`, rules: {}, activate: true }),
      ),
    );
    for (const a of answers) {
      expect([201, 409]).toContain(a.status);
      if (a.status === 201) expect(a.json.status).toBe("active");
      else expect(a.error.error).toBe("policy_activation_conflict");
    }
    const created = answers.filter((a) => a.status === 201).map((a) => a.json.id as string);
    const rows =
      (await ownerSql`select id, status from policies where org_id = ${org.id}`) as Json[];
    // Every stored policy is one a 201 answered: a lost race stored nothing.
    expect(rows.map((r) => r.id).sort()).toEqual(created.sort());
    expect(rows.filter((r) => r.status === "active")).toHaveLength(1);
  });

  it("a create with activate true that loses its activation stores nothing and records nothing", async () => {
    const org = await newOrg();
    // The partial unique index's answer to a concurrent activation, made deterministic: this
    // org's policies cannot become active while the trigger stands.
    const trigger = `lose_activation_${org.id.replaceAll("-", "")}`;
    await ownerSql.query(`create function ${trigger}() returns trigger language plpgsql as $$
      begin
        if new.org_id = '${org.id}' and new.status = 'active' then
          raise unique_violation using message = 'simulated concurrent activation';
        end if;
        return new;
      end $$`);
    await ownerSql.query(`create trigger ${trigger} before insert or update on policies
      for each row execute function ${trigger}()`);
    try {
      const res = await create(org, { name: "loser", rules: {}, activate: true });
      expect(res.status).toBe(409);
      expect(res.error.error).toBe("policy_activation_conflict");
    } finally {
      await ownerSql.query(`drop trigger ${trigger} on policies`);
      await ownerSql.query(`drop function ${trigger}()`);
    }
    const [row] = (await ownerSql`select count(*)::int as n from policies
      where org_id = ${org.id}`) as [Json];
    expect(row.n).toBe(0);
    const entries = (await ownerSql`select type from audit_entries
      where org_id = ${org.id} and type like 'policy.%'`) as Json[];
    expect(entries).toEqual([]);
  });

  it("records policy.created and policy.activated in the ledger", async () => {
    const org = await newOrg();
    const a = await draft(org);
    await activate(org, a.id);
    const rows = (await ownerSql`select type from audit_entries
      where org_id = ${org.id} and type like 'policy.%' order by sequence`) as [Json];
    expect(rows.map((r) => r.type)).toEqual(["policy.created", "policy.activated"]);
  });
});

describe("GET /v1/policies", () => {
  it("lists newest first in the list envelope, filtered by status", async () => {
    const org = await newOrg();
    const a = await draft(org);
    const b = await draft(org);
    await activate(org, a.id);
    const all = await call("/v1/policies", { token: org.token });
    expect(all.status).toBe(200);
    expect(all.json).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    expect(all.json.data.map((p: Json) => p.id)).toEqual([b.id, a.id]);
    const drafts = await call("/v1/policies?status=draft", { token: org.token });
    expect(drafts.json.data.map((p: Json) => p.id)).toEqual([b.id]);
    expect((await call("/v1/policies?status=bogus", { token: org.token })).status).toBe(400);
  });
});

describe("404s and tenancy", () => {
  it("another org's policy is a 404 on get and activate, and absent from its list", async () => {
    const owner = await newOrg();
    const other = await newOrg();
    const p = await draft(owner);
    expect((await call(`/v1/policies/${p.id}`, { token: other.token })).status).toBe(404);
    const stolen = await activate(other, p.id);
    expect(stolen.status).toBe(404);
    expect(stolen.error.error).toBe("not_found");
    expect((await call("/v1/policies", { token: other.token })).json.data).toEqual([]);
    expect((await call(`/v1/policies/${p.id}`, { token: owner.token })).json.status).toBe("draft");
  });

  it("an unknown or malformed id is a 404", async () => {
    const org = await newOrg();
    for (const id of [crypto.randomUUID(), "not-a-uuid", "1"]) {
      expect((await call(`/v1/policies/${id}`, { token: org.token })).status).toBe(404);
      expect((await activate(org, id)).status).toBe(404);
    }
  });
});

describe("scopes", () => {
  it("policy:write creates and activates, policy:read reads, neither does the other", async () => {
    const { org } = await orgWithKey();
    const { key: writer } = await org.key(["policy:write"]);
    const { key: reader } = await org.key(["policy:read"]);
    const { key: assessor } = await org.key(["assess:write", "assess:read"]);

    const created = await create(org, { name: "p", rules: {} }, writer);
    expect(created.status).toBe(201);
    expect((await activate(org, created.json.id, writer)).status).toBe(200);

    expect((await call("/v1/policies", { key: reader })).status).toBe(200);
    expect((await call(`/v1/policies/${created.json.id}`, { key: reader })).status).toBe(200);

    const denied = await create(org, { name: "p", rules: {} }, reader);
    expect(denied.status).toBe(403);
    expect(denied.error.error).toBe("insufficient_scope");
    expect((await activate(org, created.json.id, reader)).status).toBe(403);

    expect((await call("/v1/policies", { key: assessor })).status).toBe(403);
    expect((await create(org, { name: "p", rules: {} }, assessor)).status).toBe(403);
    expect((await call("/v1/policies", { key: writer })).status).toBe(403);
  });

  it("401 without a credential", async () => {
    expect((await call("/v1/policies")).status).toBe(401);
    expect(
      (await call("/v1/policies", { method: "POST", body: { name: "p", rules: {} } })).status,
    ).toBe(401);
  });
});
