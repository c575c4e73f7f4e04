import { describe, expect, it } from "vitest";
import { inAnHour, type Json, newMandate } from "./support/action";
import { call, newOrg, type TestOrg } from "./support/api";
import { appSql, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";

// Action mandates (docs/action-authority.md): create, read, list, revoke.

const isoDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function create(org: TestOrg, body: Json) {
  return call("/v1/action-mandates", { method: "POST", token: org.token, raw: true, body });
}

describe("POST /v1/action-mandates", () => {
  it("creates bounded authority: 201, the mandate, and its ledger entry", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const body = {
      agent_id: agent.id,
      principal_id: agent.principal_id,
      action: "payment.capture",
      resource: "merchant:acme/*",
      not_before: "2026-01-01T00:00:00Z",
      expires_at: "2099-01-01T00:00:00.000+01:00",
      currency: "EUR",
      max_amount_per_use: 5000,
      max_amount_total: 20000,
      max_uses: 10,
      metadata: { ticket: "T-1" },
    };
    const res = await create(org, body);
    expect(res.status).toBe(201);
    const [entry] = await ownerSql`select id, sequence, subject_id from audit_entries
      where org_id = ${org.id} and type = 'action_mandate.created'`;
    expect(res.json).toEqual({
      object: "action_mandate",
      id: expect.stringMatching(uuid),
      agent_id: agent.id,
      principal_id: agent.principal_id,
      action: "payment.capture",
      resource: "merchant:acme/*",
      not_before: "2026-01-01T00:00:00.000Z",
      expires_at: "2098-12-31T23:00:00.000Z",
      currency: "EUR",
      max_amount_per_use: 5000,
      max_amount_total: 20000,
      max_uses: 10,
      metadata: { ticket: "T-1" },
      created: expect.stringMatching(isoDate),
      status: "active",
      uses: 0,
      amount_used: 0,
      revoked_at: null,
      audit: { entry_id: entry?.id, sequence: Number(entry?.sequence) },
    });
    expect(entry?.subject_id).toBe(res.json.id);
    const read = await call(`/v1/action-mandates/${res.json.id}`, { token: org.token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);
  });

  it("needs only an agent, an action, a resource and an expiry: no limits, valid from now", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const res = await create(org, {
      agent_id: agent.id,
      action: "email.send",
      resource: "mailbox:support",
      expires_at: inAnHour(),
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      principal_id: null,
      currency: null,
      max_amount_per_use: null,
      max_amount_total: null,
      max_uses: null,
      metadata: {},
    });
    expect(res.json.not_before).toBe(res.json.created);
  });

  it.each<[string, Json]>([
    ["an unknown field", { colour: "red" }],
    ["no expiry", { expires_at: undefined }],
    ["an expiry that is not a date", { expires_at: "tomorrow" }],
    [
      "an expiry before not_before",
      { not_before: "2098-01-02T00:00:00Z", expires_at: "2098-01-01T00:00:00Z" },
    ],
    [
      "an expiry in the past",
      { not_before: "2020-01-01T00:00:00Z", expires_at: "2021-01-01T00:00:00Z" },
    ],
    ["an amount limit without a currency", { currency: undefined }],
    ["a currency that is not ISO 4217", { currency: "usd" }],
    ["a negative limit", { max_amount_per_use: -1 }],
    ["a fractional limit", { max_amount_total: 10.5 }],
    ["zero uses", { max_uses: 0 }],
    ["a '*' inside the resource pattern", { resource: "merchant:*/orders" }],
    ["an empty action", { action: "" }],
    ["a control character in the action", { action: "pay\nment" }],
    ["an agent id that is not a uuid", { agent_id: "agent-1" }],
  ])("refuses %s: 400 invalid_request", async (_, change) => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const body = {
      agent_id: agent.id,
      action: "payment.capture",
      resource: "merchant:acme/*",
      expires_at: inAnHour(),
      currency: "USD",
      max_amount_per_use: 100,
      ...change,
    };
    const res = await create(org, body);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(await ownerSql`select id from action_mandates where org_id = ${org.id}`).toEqual([]);
  });

  it("refuses an agent that is not the org's: 400 naming agent_id", async () => {
    const org = await newOrg();
    const other = await newAgent(await newOrg());
    const res = await create(org, {
      agent_id: other.id,
      action: "a",
      resource: "r",
      expires_at: inAnHour(),
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "agent_id", message: "no such agent" }]),
    );
  });

  it("refuses a principal the agent does not act for", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    const someoneElse = await newAgent(org);
    const res = await create(org, {
      agent_id: agent.id,
      principal_id: someoneElse.principal_id,
      action: "a",
      resource: "r",
      expires_at: inAnHour(),
    });
    expect(res.status).toBe(400);
    expect(res.error.details).toEqual([
      { path: "principal_id", message: "the agent does not act for this principal" },
    ]);
  });

  it("refuses a revoked agent: 409 agent_revoked", async () => {
    const org = await newOrg();
    const agent = await newAgent(org);
    await call(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "revoked" },
    });
    const res = await create(org, {
      agent_id: agent.id,
      action: "a",
      resource: "r",
      expires_at: inAnHour(),
    });
    expect(res.status).toBe(409);
    expect(res.error.error).toBe("agent_revoked");
  });
});

describe("GET /v1/action-mandates", () => {
  it("lists newest first, filters by status and agent, and pages", async () => {
    const org = await newOrg();
    const first = await newMandate(org);
    const second = await newMandate(org);
    const third = await newMandate(org, { agent_id: second.agent_id });
    await call(`/v1/action-mandates/${first.id}/revoke`, { method: "POST", token: org.token });

    const all = await call("/v1/action-mandates", { token: org.token });
    expect(all.json.data.map((m: Json) => m.id)).toEqual([third.id, second.id, first.id]);
    const active = await call("/v1/action-mandates?status=active", { token: org.token });
    expect(active.json.data.map((m: Json) => m.id)).toEqual([third.id, second.id]);
    const ofAgent = await call(`/v1/action-mandates?agent_id=${second.agent_id}`, {
      token: org.token,
    });
    expect(ofAgent.json.data.map((m: Json) => m.id)).toEqual([third.id, second.id]);

    const page1 = await call("/v1/action-mandates?limit=2", { token: org.token });
    expect(page1.json).toMatchObject({ object: "list", has_more: true });
    const page2 = await call(`/v1/action-mandates?limit=2&cursor=${page1.json.next_cursor}`, {
      token: org.token,
    });
    expect(page2.json).toMatchObject({ has_more: false, next_cursor: null });
    expect(page2.json.data.map((m: Json) => m.id)).toEqual([first.id]);
  });

  it("answers 404 for an unknown mandate id", async () => {
    const org = await newOrg();
    const res = await call("/v1/action-mandates/0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", {
      token: org.token,
    });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });
});

describe("POST /v1/action-mandates/{id}/revoke", () => {
  it("revokes once: the same answer again, and one ledger entry", async () => {
    const org = await newOrg();
    const mandate = await newMandate(org);
    const path = `/v1/action-mandates/${mandate.id}/revoke` as const;
    const first = await call(path, { method: "POST", token: org.token });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      ...mandate,
      status: "revoked",
      revoked_at: expect.stringMatching(isoDate),
    });
    const again = await call(path, { method: "POST", token: org.token });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    const entries = await ownerSql`select subject_id from audit_entries
      where org_id = ${org.id} and type = 'action_mandate.revoked'`;
    expect(entries).toEqual([{ subject_id: mandate.id }]);
  });
});

describe("row-level security on the action-authority tables", () => {
  const TABLES = ["action_mandates", "action_decisions", "action_redemptions"];

  it("is enabled and forced, and the application role can never delete", async () => {
    const rows = await ownerSql`select relname, relrowsecurity, relforcerowsecurity,
        has_table_privilege('app_user', oid, 'DELETE') as can_delete,
        has_table_privilege('app_user', oid, 'UPDATE') as can_update
      from pg_class where relname = any(${TABLES}) order by relname`;
    expect(rows).toEqual([
      {
        relname: "action_decisions",
        relrowsecurity: true,
        relforcerowsecurity: true,
        can_delete: false,
        can_update: false,
      },
      {
        relname: "action_mandates",
        relrowsecurity: true,
        relforcerowsecurity: true,
        can_delete: false,
        can_update: true,
      },
      {
        relname: "action_redemptions",
        relrowsecurity: true,
        relforcerowsecurity: true,
        can_delete: false,
        can_update: false,
      },
    ]);
  });

  it("shows the application role only the current org's rows, and none without an org", async () => {
    const a = await newOrg();
    const b = await newOrg();
    for (const org of [a, b]) {
      const mandate = await newMandate(org);
      await call(`/v1/action-mandates/${mandate.id}/decisions`, {
        method: "POST",
        token: org.token,
        body: {
          action: "payment.capture",
          resource: "merchant:acme/1",
          amount: 1,
          currency: "USD",
          grant: false,
        },
      });
    }
    const [, mandates, decisions] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`select org_id from action_mandates`,
      sql`select org_id from action_decisions`,
    ]);
    expect(mandates).toEqual([{ org_id: a.id }]);
    expect(decisions).toEqual([{ org_id: a.id }]);
    const [none] = await appSql.transaction((sql) => [sql`select id from action_mandates`]);
    expect(none).toEqual([]);
  });
});
