import { describe, expect, it } from "vitest";
import { call, callRaw, newOrg, type TestOrg } from "./support/api";
import {
  assessOk,
  createPolicy,
  type Json,
  jcs,
  orgWithKey,
  reasonKeys,
  sha256Hex,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";

// docs/history.md: POST /v1/history/transactions and GET /v1/history/imports.

const HOUR = 3_600_000;

/** A valid record of `agentId`, `changes` over it; its time a given number of hours ago. */
function record(agentId: string, id: string, changes: Json = {}, hoursAgo = 24): Json {
  return {
    id,
    occurred_at: new Date(Date.now() - hoursAgo * HOUR).toISOString(),
    agent_id: agentId,
    payee: { id: "merchant_7731", name: "Nimbus Books" },
    amount: { amount: 4_599, currency: "USD" },
    ...changes,
  };
}

function importJson(key: string, records: unknown[]) {
  return call("/v1/history/transactions", { method: "POST", key, raw: true, body: { records } });
}

function importNdjson(key: string, text: string) {
  return callRaw("/v1/history/transactions", {
    method: "POST",
    key,
    body: text,
    headers: { "content-type": "application/x-ndjson" },
  });
}

function listImports(key: string, query = "") {
  return call(`/v1/history/imports?${query}`, { key });
}

/** An org with a key holding every data scope in `mode`, and one of its agents. */
async function orgWithAgent(mode: "live" | "test" = "live") {
  const { org, key } = await orgWithKey(mode);
  const agent = await newAgent(org);
  return { org, key, agentId: agent.id as string };
}

async function storedPayments(org: TestOrg) {
  return ownerSql`select external_id, livemode, agent_id, kind, counterparty, amount, currency,
      decision, assessment_id, import_id, to_json(occurred_at) #>> '{}' as occurred_at, record
    from payments where org_id = ${org.id} and external_id is not null order by external_id`;
}

async function storedLabels(org: TestOrg) {
  return ownerSql`select p.external_id, l.label, to_json(l.known_at) #>> '{}' as known_at, l.source, l.livemode, l.feedback_id
    from payment_labels l join payments p on p.id = l.payment_id
    where l.org_id = ${org.id} order by p.external_id`;
}

async function entries(org: TestOrg) {
  return ownerSql`select id, type, subject_type, subject_id, digest from audit_entries
    where org_id = ${org.id} and type = 'history.imported' order by sequence`;
}

const digestOf = async (value: unknown) => `sha256:${await sha256Hex(jcs(value))}`;

const NO_LABELS = { fraud: 0, chargeback: 0, legitimate: 0, refund: 0 };

describe("POST /v1/history/transactions", () => {
  it("stores JSON records as payments with their labels, and answers the import", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const first = record(agentId, "txn_1", {
      occurred_at: "2026-03-01T10:00:00+01:00",
      amount: { amount: 1_250, currency: "eur" },
      label: { label: "chargeback", labeled_at: "2026-03-09T00:00:00Z" },
    });
    const second = record(agentId, "txn_2", {
      occurred_at: "2026-03-02T12:30:00.123Z",
      payee: { id: "merchant_9" },
      kind: "refund_payout",
    });
    const res = await importJson(key, [first, second]);
    expect(res.status).toBe(201);
    const stored1 = {
      id: "txn_1",
      occurred_at: "2026-03-01T09:00:00.000Z",
      agent_id: agentId,
      payee: { id: "merchant_7731", name: "Nimbus Books" },
      amount: { amount: 1_250, currency: "EUR" },
      kind: "payment",
      label: { label: "chargeback", labeled_at: "2026-03-09T00:00:00.000Z" },
    };
    const stored2 = {
      id: "txn_2",
      occurred_at: "2026-03-02T12:30:00.123Z",
      agent_id: agentId,
      payee: { id: "merchant_9" },
      amount: { amount: 4_599, currency: "USD" },
      kind: "refund_payout",
    };
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: "history_import",
      livemode: true,
      created: expect.any(String),
      records: 2,
      inserted: 2,
      unchanged: 0,
      labels: { ...NO_LABELS, chargeback: 1 },
      first_occurred_at: "2026-03-01T09:00:00.000Z",
      last_occurred_at: "2026-03-02T12:30:00.123Z",
      digest: await digestOf([stored1, stored2]),
      audit_entry_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(await storedPayments(org)).toEqual([
      {
        external_id: "txn_1",
        livemode: true,
        agent_id: agentId,
        kind: "payment",
        // The digest the assess path matches a payee by (assess/pipeline.ts, counterpartyKey).
        counterparty: await digestOf("merchant_7731"),
        amount: "1250",
        currency: "EUR",
        decision: null,
        assessment_id: null,
        import_id: res.json.id,
        occurred_at: "2026-03-01T09:00:00+00:00",
        record: stored1,
      },
      {
        external_id: "txn_2",
        livemode: true,
        agent_id: agentId,
        kind: "refund_payout",
        counterparty: await digestOf("merchant_9"),
        amount: "4599",
        currency: "USD",
        decision: null,
        assessment_id: null,
        import_id: res.json.id,
        occurred_at: "2026-03-02T12:30:00.123+00:00",
        record: stored2,
      },
    ]);
    expect(await storedLabels(org)).toEqual([
      {
        external_id: "txn_1",
        label: "chargeback",
        known_at: "2026-03-09T00:00:00+00:00",
        source: "import",
        livemode: true,
        feedback_id: null,
      },
    ]);
  });

  it("takes NDJSON, a record a line, blank lines skipped", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const lines = [
      JSON.stringify(record(agentId, "n1")),
      "",
      JSON.stringify(record(agentId, "n2", { label: labelAfter(record(agentId, "n2"), "fraud") })),
      "",
    ].join("\n");
    const res = await importNdjson(key, lines);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      records: 2,
      inserted: 2,
      unchanged: 0,
      labels: { ...NO_LABELS, fraud: 1 },
    });
    expect((await storedPayments(org)).map((p) => p.external_id)).toEqual(["n1", "n2"]);
  });

  it("answers a line that is not JSON by its index, and stores nothing", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const text = `${JSON.stringify(record(agentId, "ok"))}\n{"id": "broken"\n`;
    const res = await importNdjson(key, text);
    expect(res.status).toBe(400);
    expect(res.error).toEqual(
      errorBody("invalid_request", [
        {
          index: 1,
          id: null,
          path: "records.1",
          message: "the line is not JSON",
          code: "invalid_json",
        },
      ]),
    );
    expect(await storedPayments(org)).toEqual([]);
  });

  it("is idempotent by id: the same records again are unchanged, counted and not stored", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const records = [
      record(agentId, "r1", { label: labelAfter(record(agentId, "r1"), "fraud") }),
      record(agentId, "r2"),
    ];
    const first = await importJson(key, records);
    expect(first.json).toMatchObject({ inserted: 2, unchanged: 0 });
    // The same content, written differently (another offset, lower-case currency, the default kind).
    const again = records.map((r) => ({
      ...r,
      occurred_at: new Date(r.occurred_at as string).toISOString().replace("Z", "+00:00"),
      amount: { amount: 4_599, currency: "usd" },
      kind: "payment",
    }));
    const replay = await importJson(key, [...again, record(agentId, "r3")]);
    expect(replay.status).toBe(201);
    expect(replay.json).toMatchObject({
      records: 3,
      inserted: 1,
      unchanged: 2,
      labels: NO_LABELS,
    });
    expect((await storedPayments(org)).map((p) => p.external_id)).toEqual(["r1", "r2", "r3"]);
    expect(await storedLabels(org)).toHaveLength(1);
    const whole = await importJson(key, records);
    expect(whole.json).toMatchObject({ records: 2, inserted: 0, unchanged: 2, labels: NO_LABELS });
    // Each call is an import and an entry of its own.
    expect((await listImports(key)).json.data).toHaveLength(3);
    expect(await entries(org)).toHaveLength(3);
  });

  it("stores each record once when the same call races itself", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const records = Array.from({ length: 200 }, (_, i) => record(agentId, `race-${i}`));
    const answers = await Promise.all([1, 2, 3, 4].map(() => importJson(key, records)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    const inserted = answers.map((a) => a.json.inserted);
    expect(inserted.reduce((a, b) => a + b, 0)).toBe(200);
    for (const a of answers) expect(a.json.inserted + a.json.unchanged).toBe(200);
    const [count] = await ownerSql`select count(*)::int as n from payments
      where org_id = ${org.id} and external_id like 'race-%'`;
    expect(count).toEqual({ n: 200 });
  });

  it("answers 409 naming each id stored with other content, and stores nothing of the call", async () => {
    const { org, key, agentId } = await orgWithAgent();
    await importJson(key, [record(agentId, "c1"), record(agentId, "c2")]);
    const res = await importJson(key, [
      record(agentId, "fresh"),
      record(agentId, "c2", { amount: { amount: 1, currency: "USD" } }),
      record(agentId, "c1", { label: labelAfter(record(agentId, "c1"), "legitimate") }),
    ]);
    expect(res.status).toBe(409);
    expect(res.error).toEqual(
      errorBody("history_record_conflict", [
        {
          index: 1,
          id: "c2",
          path: "records.1",
          message: "this id is stored with other content: a stored record never changes",
          code: "conflict",
        },
        {
          index: 2,
          id: "c1",
          path: "records.2",
          message: "this id is stored with other content: a stored record never changes",
          code: "conflict",
        },
      ]),
    );
    expect((await storedPayments(org)).map((p) => p.external_id)).toEqual(["c1", "c2"]);
    expect(await entries(org)).toHaveLength(1);
  });

  it("answers 400 listing every bad record by index, and stores nothing of the call", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const good = record(agentId, "good");
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    const res = await importJson(key, [
      good,
      record(agentId, "b1", { amount: { amount: 10, currency: "US" } }),
      record(agentId, "b2", { occurred_at: future }),
      record(agentId, "b3", {
        occurred_at: "2026-03-02T00:00:00Z",
        label: { label: "fraud", labeled_at: "2026-03-01T00:00:00Z" },
      }),
      record(agentId, "good"),
      { ...record(agentId, "b5"), amount: { amount: -1, currency: "USD" }, extra: true },
      "not a record",
    ]);
    expect(res.status).toBe(400);
    expect(res.error).toEqual(
      errorBody("invalid_request", [
        {
          index: 1,
          id: "b1",
          path: "records.1.amount.currency",
          message: "must be an ISO 4217 code of 3 letters",
          code: "invalid_format",
        },
        {
          index: 2,
          id: "b2",
          path: "records.2.occurred_at",
          message: "must not be more than 5 minutes in the future",
          code: "custom",
        },
        {
          index: 3,
          id: "b3",
          path: "records.3.label.labeled_at",
          message: "must not be before occurred_at",
          code: "custom",
        },
        {
          index: 4,
          id: "good",
          path: "records.4.id",
          message: "repeats the id of records.0: an id is one record",
          code: "custom",
        },
        {
          index: 5,
          id: "b5",
          path: "records.5.amount.amount",
          message: "Too small: expected number to be >=0",
          code: "too_small",
        },
        {
          index: 5,
          id: "b5",
          path: "records.5",
          message: 'Unrecognized key: "extra"',
          code: "unrecognized_keys",
        },
        {
          index: 6,
          id: null,
          path: "records.6",
          message: expect.any(String),
          code: "invalid_type",
        },
      ]),
    );
    expect(await storedPayments(org)).toEqual([]);
    expect(await entries(org)).toEqual([]);
  });

  it("refuses an agent it does not know, another org's included, by index", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const other = await orgWithAgent();
    const made = "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e";
    const res = await importJson(key, [
      record(agentId, "mine"),
      record(other.agentId, "theirs"),
      record(made, "made-up"),
    ]);
    expect(res.status).toBe(400);
    const unknown = (index: number, id: string) => ({
      index,
      id,
      path: `records.${index}.agent_id`,
      message: "names no agent of this organization",
      code: "unknown_agent",
    });
    expect(res.error).toEqual(
      errorBody("invalid_request", [unknown(1, "theirs"), unknown(2, "made-up")]),
    );
    expect(await storedPayments(org)).toEqual([]);
    expect(await storedPayments(other.org)).toEqual([]);
  });

  it("answers 400 to a body that is not {records: [...]}, or holds none, or too many", async () => {
    const { key, agentId } = await orgWithAgent();
    const cases: [unknown, Json[]][] = [
      [
        { records: "no" },
        [{ path: "records", message: "the body must be {records: [...]}", code: "invalid_type" }],
      ],
      [
        [record(agentId, "x")],
        [{ path: "records", message: "the body must be {records: [...]}", code: "invalid_type" }],
      ],
      [
        { records: [record(agentId, "x")], dry_run: true },
        [{ path: "dry_run", message: "is not a member of the body", code: "unrecognized_keys" }],
      ],
      [
        { records: [] },
        [{ path: "records", message: "must hold at least 1 record", code: "too_small" }],
      ],
      [
        { records: new Array(10_001).fill(0) },
        [
          {
            path: "records",
            message: "must hold at most 10000 records (send more in further calls)",
            code: "too_big",
          },
        ],
      ],
    ];
    for (const [body, details] of cases) {
      const res = await call("/v1/history/transactions", { method: "POST", key, raw: true, body });
      expect(res.status, JSON.stringify(details)).toBe(400);
      expect(res.error).toEqual(errorBody("invalid_request", details));
    }
    const text = await callRaw("/v1/history/transactions", {
      method: "POST",
      key,
      body: "id,amount",
      headers: { "content-type": "text/csv" },
    });
    expect(text.status).toBe(400);
    expect(text.error).toEqual(
      errorBody("invalid_request", [
        { path: "content-type", message: "must be application/json or application/x-ndjson" },
      ]),
    );
  });

  it("takes a body past the 256 KiB of other routes: 2,000 records in one call", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const records = Array.from({ length: 2_000 }, (_, i) =>
      record(agentId, `bulk-${String(i).padStart(4, "0")}`, {}, 24 + i / 100),
    );
    expect(JSON.stringify({ records }).length).toBeGreaterThan(256 * 1024);
    const res = await importJson(key, records);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ records: 2_000, inserted: 2_000, unchanged: 0 });
    const [count] = await ownerSql`select count(*)::int as n from payments
      where org_id = ${org.id} and import_id = ${res.json.id}`;
    expect(count).toEqual({ n: 2_000 });
  });

  it("refuses a body over its own limit of 16 MiB, unread, with that limit", async () => {
    const { key } = await orgWithAgent();
    const res = await callRaw("/v1/history/transactions", {
      method: "POST",
      key,
      body: "x".repeat(16 * 1024 * 1024 + 1),
    });
    expect(res.status).toBe(413);
    expect(res.error).toEqual(
      errorBody(
        "request_too_large",
        { max_bytes: 16 * 1024 * 1024 },
        "The request body is larger than 16 MiB: send a smaller body.",
      ),
    );
  });

  it("audits each call as one history.imported entry stating the import's digest", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const res = await importJson(key, [record(agentId, "a1"), record(agentId, "a2")]);
    const { audit_entry_id, ...payload } = res.json;
    expect(await entries(org)).toEqual([
      {
        id: audit_entry_id,
        type: "history.imported",
        subject_type: "history_import",
        subject_id: res.json.id,
        digest: await digestOf(payload),
      },
    ]);
    const audit = await call("/v1/audit?type=history.imported", { key });
    expect(audit.json.data.map((e) => e.id)).toEqual([audit_entry_id]);
  });

  it("keeps test and live history apart: one id in each mode, each mode's list its own", async () => {
    const { org, key, agentId } = await orgWithAgent("live");
    const { key: testKey } = await org.key(undefined, "test");
    const live = await importJson(key, [record(agentId, "same-id")]);
    const test = await importJson(testKey, [
      record(agentId, "same-id", { amount: { amount: 1, currency: "USD" } }),
    ]);
    expect(live.status).toBe(201);
    expect(test.status).toBe(201);
    expect(test.json).toMatchObject({ livemode: false, inserted: 1 });
    const stored = (await storedPayments(org)).map((p) => `${p.external_id} ${p.livemode}`);
    expect(stored.sort()).toEqual(["same-id false", "same-id true"]);
    expect((await listImports(key)).json.data.map((i) => i.id)).toEqual([live.json.id]);
    expect((await listImports(testKey)).json.data.map((i) => i.id)).toEqual([test.json.id]);
  });

  it("answers a record whose payee an erasure cleared, sent again, as unchanged", async () => {
    const { org, key, agentId } = await orgWithAgent();
    const agent = await call(`/v1/agents/${agentId}`, { key });
    const principalId = agent.json.principal_id as string;
    const call1 = record(agentId, "m1", { kind: "message_send", payee: { id: "+15550100" } });
    await importJson(key, [call1]);
    const erased = await call(`/v1/principals/${principalId}/erase`, { method: "POST", key });
    expect(erased.status).toBe(200);
    const [stored] = await storedPayments(org);
    expect(stored).toMatchObject({ counterparty: null, record: { payee: null } });
    const again = await importJson(key, [call1]);
    expect(again.status).toBe(201);
    expect(again.json).toMatchObject({ inserted: 0, unchanged: 1 });
    // Another content under the id is still a conflict.
    const changed = await importJson(key, [{ ...call1, amount: { amount: 1, currency: "USD" } }]);
    expect(changed.status).toBe(409);
  });

  it("never shows history as assessments", async () => {
    const { key, agentId } = await orgWithAgent();
    await importJson(key, [record(agentId, "h1"), record(agentId, "h2")]);
    const list = await call("/v1/assessments", { key });
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([]);
  });
});

describe("GET /v1/history/imports", () => {
  it("lists the org's imports newest first, a page at a time", async () => {
    const { key, agentId } = await orgWithAgent();
    const made = [];
    for (const i of [1, 2, 3]) made.push((await importJson(key, [record(agentId, `p${i}`)])).json);
    const page1 = await listImports(key, "limit=2");
    expect(page1.status).toBe(200);
    expect(page1.json).toEqual({
      object: "list",
      data: [made[2], made[1]],
      has_more: true,
      next_cursor: expect.any(String),
    });
    const page2 = await listImports(key, `limit=2&cursor=${page1.json.next_cursor}`);
    expect(page2.json).toEqual({
      object: "list",
      data: [made[0]],
      has_more: false,
      next_cursor: null,
    });
  });

  it("shows no other org's imports", async () => {
    const { key, agentId } = await orgWithAgent();
    await importJson(key, [record(agentId, "private")]);
    const stranger = await newOrg();
    const { key: strangerKey } = await stranger.key();
    const list = await listImports(strangerKey);
    expect(list.json).toEqual({ object: "list", data: [], has_more: false, next_cursor: null });
  });
});

describe("imported history feeds the assess path", () => {
  const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

  it("counts in the agent's and the payee's window aggregates as assessed payments do", async () => {
    const { org, key, agentId, body, holder } = await provenAgentOrg();
    const other = await holder();
    const payer = await holder();
    await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "busy-agent", action: "deny", when: c("count.agent.1h", "gte", 3) },
        { id: "hot-payee", action: "review", when: c("count.payee.1h", "gte", 2) },
      ],
    });
    const fresh = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    // Before any history both agents are approved.
    expect((await assessOk(key, await body())).decision).toBe("approve");
    const imported = await importJson(key, [
      // Three of the agent's payments within the hour (one of them earlier than the window).
      record(agentId, "w1", { occurred_at: fresh(10) }),
      record(agentId, "w2", { occurred_at: fresh(20) }),
      record(agentId, "w3", { occurred_at: fresh(90) }),
      // Two payments to one payee within the hour, by a third agent.
      record(payer.agentId, "p1", { occurred_at: fresh(5), payee: { id: "m-hist" } }),
      record(payer.agentId, "p2", { occurred_at: fresh(15), payee: { id: "m-hist" } }),
    ]);
    expect(imported.status).toBe(201);
    // The agent's hour: its assessment and two imported payments make three.
    const busy = await assessOk(key, await body());
    expect(busy.decision).toBe("deny");
    expect(busy.outcome.outcome.reason).toContain("busy-agent");
    // The other agent paying the payee of the imported payments: the payee's hour counts them.
    const hot = await assessOk(key, await other.body({ payee: { id: "m-hist", name: "m-hist" } }));
    expect(hot.decision).toBe("review");
    expect(hot.outcome.outcome.reason).toBe('Review: policy rule "hot-payee" matched.');
    // Another payee: nothing of the imported payments counts.
    const cold = await assessOk(key, await other.body({ payee: { id: "m-cold", name: "m-cold" } }));
    expect(cold.decision).toBe("approve");
  });

  it("counts in the policy's velocity limit: imported payments use up the window", async () => {
    const { org, key, agentId, body } = await provenAgentOrg();
    await createPolicy(org, { velocity: { window: "1h", max: 2 } });
    const recent = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const imported = await importJson(key, [
      record(agentId, "v1", { occurred_at: recent(30) }),
      record(agentId, "v2", { occurred_at: recent(40) }),
    ]);
    expect(imported.status).toBe(201);
    const first = await assessOk(key, await body());
    expect(first.decision).toBe("deny");
    expect(reasonKeys(first.outcome)).toContain("velocity_exceeded");
  });

  it("counts nothing of the other mode's history", async () => {
    const { org, key, agentId, body } = await provenAgentOrg();
    const { key: testKey } = await org.key(undefined, "test");
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "busy-agent", action: "deny", when: c("count.agent.1h", "gte", 1) }],
    });
    const recent = new Date(Date.now() - 60_000).toISOString();
    const res = await importJson(testKey, [record(agentId, "t1", { occurred_at: recent })]);
    expect(res.status).toBe(201);
    expect((await assessOk(key, await body())).decision).toBe("approve");
  });
});

/** A label known a day after the record's time. */
function labelAfter(of: Json, label: string) {
  return {
    label,
    labeled_at: new Date(Date.parse(of.occurred_at as string) + 24 * HOUR).toISOString(),
  };
}
