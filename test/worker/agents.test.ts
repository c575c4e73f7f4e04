import { describe, expect, it } from "vitest";
import { call, newOrg, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent, newPrincipal, registerKey } from "./support/identity";

async function setup() {
  const org = await newOrg();
  const { key } = await org.key();
  return { org, key };
}

function events(orgId: string) {
  return ownerSql`select type, data from events
    where org_id = ${orgId} and type like 'agent.%' order by id`;
}

async function patch(key: string, id: string, body: unknown) {
  return call(`/v1/agents/${id}`, { method: "PATCH", key, raw: true, body });
}

async function history(org: TestOrg, id: string) {
  const res = await call(`/v1/agents/${id}/trust-history?limit=100`, { token: org.token });
  return res.json.data;
}

describe("POST /v1/agents", () => {
  it("registers an agent for a principal, with the documented starting trust", async () => {
    const { org, key } = await setup();
    const principalId = await newPrincipal(org);
    const res = await call("/v1/agents", {
      method: "POST",
      key,
      body: {
        principal_id: principalId,
        name: "Checkout agent",
        description: "Buys groceries",
        metadata: { team: "growth" },
      },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      object: "agent",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      principal_id: principalId,
      name: "Checkout agent",
      description: "Buys groceries",
      metadata: { team: "growth" },
      status: "active",
      trust_score: 30,
      risk_tier: "high",
      evidence: {
        card_status: "unverified",
        active_keys: 0,
        approvals: 0,
        reviews: 0,
        denials: 0,
        suspensions: 0,
        confirmed_frauds: 0,
        confirmed_legitimate: 0,
      },
      card: null,
      created: expect.any(String),
      updated: expect.any(String),
      suspended_at: null,
      revoked_at: null,
      status_list: { idx: expect.any(Number), uri: expect.stringMatching(/\/v1\/status-lists\//) },
    });
    expect((await call(`/v1/agents/${res.json.id}`, { key })).json).toEqual(res.json);
    expect(await history(org, res.json.id)).toEqual([
      {
        object: "trust_event",
        id: expect.any(String),
        agent_id: res.json.id,
        reason: "registered",
        status: "active",
        trust_score: 30,
        risk_tier: "high",
        previous_score: null,
        previous_tier: null,
        created: expect.any(String),
      },
    ]);
    const [entry] = await ownerSql`select type, subject_id from audit_entries
      where org_id = ${org.id} and type = 'agent.created'`;
    expect(entry).toEqual({ type: "agent.created", subject_id: res.json.id });
  });

  it("takes the principal id in any case and answers it lowercase", async () => {
    const { org, key } = await setup();
    const principalId = await newPrincipal(org);
    const res = await call("/v1/agents", {
      method: "POST",
      key,
      body: { principal_id: principalId.toUpperCase(), name: "Loud agent" },
    });
    expect(res.status).toBe(201);
    expect(res.json.principal_id).toBe(principalId);
    const upper = await call(`/v1/agents/${res.json.id.toUpperCase()}`, { key });
    expect(upper.json.id).toBe(res.json.id);
  });

  it("refuses a principal of another org as if it did not exist", async () => {
    const { key } = await setup();
    const other = await newOrg();
    const foreign = await newPrincipal(other);
    const res = await call("/v1/agents", {
      method: "POST",
      key,
      body: { principal_id: foreign, name: "x" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "principal_id", message: "no such principal" }]),
    );
  });

  it.each([
    [{ name: "x" }, "principal_id"],
    [{ principal_id: "nope", name: "x" }, "principal_id"],
    [{ principal_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e" }, "name"],
    [{ principal_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", name: "x", trust_score: 100 }, ""],
  ])("refuses %j with 400 naming %s", async (body, path) => {
    const { key } = await setup();
    const res = await call("/v1/agents", { method: "POST", key, raw: true, body });
    expect(res.status).toBe(400);
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });
});

describe("GET /v1/agents", () => {
  it("filters by status, risk tier and principal, and pages by keyset", async () => {
    const { org, key } = await setup();
    const a = await newAgent(org);
    const b = await newAgent(org);
    const c = await newAgent(org, { principal_id: a.principal_id });
    await patch(key, b.id, { status: "suspended" });

    const ids = async (query: string) =>
      (await call(`/v1/agents?${query}`, { key })).json.data.map((x: { id: string }) => x.id);
    expect(await ids("")).toEqual([c.id, b.id, a.id]);
    expect(await ids("status=suspended")).toEqual([b.id]);
    expect(await ids("risk_tier=critical")).toEqual([b.id]);
    expect(await ids(`principal_id=${a.principal_id}`)).toEqual([c.id, a.id]);

    const first = await call("/v1/agents?limit=2", { key });
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/agents?limit=2&cursor=${first.json.next_cursor}`, { key });
    expect(second.json.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect(second.json.has_more).toBe(false);
  });

  it.each(["status=paused", "risk_tier=none", "principal_id=1", "limit=500"])(
    "refuses %s with 400",
    async (query) => {
      const { key } = await setup();
      expect((await call(`/v1/agents?${query}`, { key })).status).toBe(400);
    },
  );
});

describe("PATCH /v1/agents/{id}", () => {
  it("changes name and description, and merges metadata (empty string removes a key)", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org, { metadata: { a: "1", b: "2" } });
    const res = await patch(key, agent.id, {
      name: "Renamed",
      description: null,
      metadata: { b: "", c: "3" },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      name: "Renamed",
      description: null,
      metadata: { a: "1", c: "3" },
      trust_score: 30,
    });
    expect(Date.parse(res.json.updated)).toBeGreaterThanOrEqual(Date.parse(agent.updated));
    // A change that moves no trust adds nothing to the timeline.
    expect(await history(org, agent.id)).toHaveLength(1);
  });

  it("suspends and reactivates: trust drops and recovers less, events and timeline record it", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    await registerKey(org, agent.id);

    const suspended = await patch(key, agent.id, { status: "suspended" });
    expect(suspended.status).toBe(200);
    expect(suspended.json).toMatchObject({
      status: "suspended",
      trust_score: 10,
      risk_tier: "critical",
      suspended_at: expect.any(String),
      evidence: { suspensions: 1, active_keys: 1 },
    });
    const reactivated = await patch(key, agent.id, { status: "active" });
    expect(reactivated.json).toMatchObject({
      status: "active",
      trust_score: 35,
      risk_tier: "high",
      suspended_at: null,
    });

    const timeline = await history(org, agent.id);
    expect(timeline.map((e) => [e.reason, e.status, e.trust_score, e.risk_tier])).toEqual([
      ["reactivated", "active", 35, "high"],
      ["suspended", "suspended", 10, "critical"],
      ["key_registered", "active", 45, "high"],
      ["registered", "active", 30, "high"],
    ]);
    expect(timeline[0]).toMatchObject({ previous_score: 10, previous_tier: "critical" });

    // Events of one transaction carry no order among themselves; the set is what counts.
    const outbox = await events(org.id);
    expect(outbox.map((e) => e.type).sort()).toEqual([
      "agent.suspended",
      "agent.trust_changed",
      "agent.trust_changed",
    ]);
    expect(outbox.find((e) => e.type === "agent.suspended")?.data).toEqual({
      agent_id: agent.id,
      principal_id: agent.principal_id,
      status: "suspended",
      trust_score: 10,
      risk_tier: "critical",
      previous_score: 45,
      previous_tier: "high",
      reason: "suspended",
    });
    const ledger = await ownerSql`select type from audit_entries
      where org_id = ${org.id} and subject_id = ${agent.id} order by sequence`;
    expect(ledger.map((e) => e.type)).toEqual([
      "agent.created",
      "agent_key.registered",
      "agent.suspended",
      "agent.reactivated",
    ]);
  });

  it("revokes for good: score 0, an event, and every later change answers 409", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    const revoked = await patch(key, agent.id, { status: "revoked" });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({
      status: "revoked",
      trust_score: 0,
      risk_tier: "critical",
      revoked_at: expect.any(String),
    });
    expect((await events(org.id)).map((e) => e.type).sort()).toEqual([
      "agent.revoked",
      "agent.trust_changed",
    ]);
    for (const body of [{ status: "active" }, { status: "suspended" }, { name: "back" }]) {
      const res = await patch(key, agent.id, body);
      expect(res.status).toBe(409);
      expect(res.error.error).toBe("agent_revoked");
    }
    const key2 = await call(`/v1/agents/${agent.id}/keys`, {
      method: "POST",
      key,
      body: {
        jwk: { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
      },
    });
    expect(key2.status).toBe(409);
    expect(key2.error.error).toBe("agent_revoked");
    // Even the database refuses to bring it back.
    await expect(
      ownerSql`update agents set status = 'active' where id = ${agent.id}`,
    ).rejects.toThrow(/revocation is terminal/);
  });

  it("writes and records nothing for a PATCH that changes nothing", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org, { description: "d", metadata: { a: "1" } });
    const res = await patch(key, agent.id, {
      name: agent.name,
      description: "d",
      metadata: { a: "1", gone: "" },
      status: "active",
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(agent);
    const ledger = await ownerSql`select type from audit_entries
      where org_id = ${org.id} and subject_id = ${agent.id}`;
    expect(ledger.map((e) => e.type)).toEqual(["agent.created"]);
  });

  it("records a suspension with its write, and a repeat not at all", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    const ledger = async () =>
      (
        await ownerSql`select type from audit_entries
          where org_id = ${org.id} and subject_id = ${agent.id} order by sequence`
      ).map((e) => e.type);
    for (let i = 0; i < 3; i++) {
      const retry = await patch(key, agent.id, { status: "suspended" });
      expect(retry.status).toBe(200);
      expect(retry.json).toMatchObject({ status: "suspended", evidence: { suspensions: 1 } });
      expect(await ledger()).toEqual(["agent.created", "agent.suspended"]);
    }
    // A second suspension, after a reactivation, is a new entry.
    await patch(key, agent.id, { status: "active" });
    await patch(key, agent.id, { status: "active" });
    await patch(key, agent.id, { status: "suspended" });
    expect(await ledger()).toEqual([
      "agent.created",
      "agent.suspended",
      "agent.reactivated",
      "agent.suspended",
    ]);
  });

  it("answers a repeated revocation 200, recording it once", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    const first = await patch(key, agent.id, { status: "revoked" });
    const second = await patch(key, agent.id, { status: "revoked" });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    const ledger = await ownerSql`select type from audit_entries
      where org_id = ${org.id} and type = 'agent.revoked'`;
    expect(ledger).toHaveLength(1);
    const more = await patch(key, agent.id, { status: "revoked", name: "other" });
    expect(more.status).toBe(409);
  });

  it("merges concurrent metadata PATCHes in the database, losing neither", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org, { metadata: { base: "0" } });
    await Promise.all([
      patch(key, agent.id, { metadata: { a: "1" } }),
      patch(key, agent.id, { metadata: { b: "2" } }),
      patch(key, agent.id, { metadata: { base: "" } }),
    ]);
    const after = await call(`/v1/agents/${agent.id}`, { key });
    expect(after.json.metadata).toEqual({ a: "1", b: "2" });
  });

  it("keeps metadata to 50 keys after the merge", async () => {
    const { org, key } = await setup();
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    const agent = await newAgent(org, { metadata: fifty });
    const over = await patch(key, agent.id, { metadata: { k50: "v" } });
    expect(over.status).toBe(400);
    expect(over.error.details).toEqual([{ path: "metadata", message: "at most 50 keys" }]);
    const swap = await patch(key, agent.id, { metadata: { k0: "", k50: "v" } });
    expect(swap.status).toBe(200);
    expect(Object.keys(swap.json.metadata)).toHaveLength(50);
  });

  it.each([
    [{ metadata: { k: "a\u0000b" } }, "metadata.k"],
    [{ metadata: { k: "\ud800" } }, "metadata.k"],
    [{ name: "x\udc00" }, "name"],
  ])("refuses text Postgres cannot store: %j", async (body, path) => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    const res = await patch(key, agent.id, body);
    expect(res.status).toBe(400);
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it("refuses an empty body, unknown fields and unknown statuses", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    for (const body of [{}, { status: "deleted" }, { trust_score: 99 }, { name: "" }]) {
      const res = await patch(key, agent.id, body);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
  });
});

describe("GET /v1/agents/{id}/trust-history", () => {
  it("pages the timeline newest first", async () => {
    const { org, key } = await setup();
    const agent = await newAgent(org);
    await patch(key, agent.id, { status: "suspended" });
    await patch(key, agent.id, { status: "active" });
    const first = await call(`/v1/agents/${agent.id}/trust-history?limit=2`, { key });
    expect(first.json.data.map((e: { reason: string }) => e.reason)).toEqual([
      "reactivated",
      "suspended",
    ]);
    expect(first.json.has_more).toBe(true);
    const rest = await call(
      `/v1/agents/${agent.id}/trust-history?limit=2&cursor=${first.json.next_cursor}`,
      { key },
    );
    expect(rest.json.data.map((e: { reason: string }) => e.reason)).toEqual(["registered"]);
    expect(rest.json).toMatchObject({ has_more: false, next_cursor: null });
  });
});
