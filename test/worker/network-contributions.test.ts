import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import type { Env } from "../../src/env";
import { contributeStep } from "../../src/network/contributions";
import { type NetworkKind, networkDigest, networkKeys } from "../../src/network/keys";
import worker from "../../workers/main";
import { call, newOrg, type TestOrg } from "./support/api";
import { assessOk, payment } from "./support/assess";
import { appSql, ownerSql } from "./support/db";
import { newAgent, registerKey } from "./support/identity";
import { eventually } from "./support/webhooks";

// Contributions to the network (docs/network.md): labels from the feedback API and from history
// imports reach, through the queue, counts that another org reads with network_signals, as the
// assess path will; one org moves a count by one; leaving deletes; test mode stays apart.

const DAY = 86_400_000;
const [readKey] = networkKeys(env) ?? [];
if (!readKey) throw new Error("the suite's NETWORK_KEYS is missing");

type Mode = "live" | "test";

interface Member {
  org: TestOrg;
  key: string;
  agentId: string;
}

async function member(): Promise<Member> {
  const org = await newOrg();
  const [{ key }, agent] = await Promise.all([org.key(), newAgent(org)]);
  return { org, key, agentId: agent.id as string };
}

async function join(org: TestOrg, mode: Mode, body: { contribute: boolean; consume: boolean }) {
  const res = await call("/v1/network-settings", {
    method: "POST",
    token: org.token,
    headers: { "x-mode": mode },
    body,
  });
  expect(res.status).toBe(200);
}

/** A payee's digest as the network holds it: the key's HMAC of the org's counterparty digest. */
function payeeDigest(payee: string) {
  return networkDigest(readKey as NonNullable<typeof readKey>, "payee", payloadDigest(payee));
}

/** What `org` reads of some digests, as the assess path reads it (null: it does not consume). */
async function signals(org: TestOrg, mode: Mode, digests: [NetworkKind, string][]) {
  const [, rows] = await appSql.transaction((sql) => [
    sql`select set_config('app.org_id', ${org.id}, true)`,
    sql`select network_signals(${mode === "live"}, now(), 3, ${readKey?.kid}, ${JSON.stringify(digests)}::json) as s`,
  ]);
  const value = (rows as { s: unknown }[])[0]?.s;
  return (typeof value === "string" ? JSON.parse(value) : value) as
    | { kind: string; digest: string; orgs: number; fraud_orgs: number; legitimate_orgs: number }[]
    | null;
}

/** Waits until `org` reads exactly `counts` for the payee. */
function counted(org: TestOrg, mode: Mode, payee: string, counts: Record<string, number>) {
  const digest = payeeDigest(payee);
  const expected = [{ kind: "payee", digest, ...counts }];
  return eventually(
    async () => {
      const read = await signals(org, mode, [["payee", digest]]);
      return JSON.stringify(read) === JSON.stringify(expected) ? read : undefined;
    },
    20_000,
    `${payee} to read ${JSON.stringify(counts)}`,
  );
}

/** Two in the morning (UTC) `daysAgo` days ago: a label an hour later is known the same day. */
function morning(daysAgo: number) {
  return Math.floor(Date.now() / DAY) * DAY - daysAgo * DAY + 2 * 3_600_000;
}

function record(m: Member, payee: string, daysAgo: number, label?: string) {
  const occurred = morning(daysAgo);
  return {
    id: `txn-${crypto.randomUUID()}`,
    occurred_at: new Date(occurred).toISOString(),
    agent_id: m.agentId,
    payee: { id: payee },
    amount: { amount: 2_500, currency: "USD" },
    ...(label
      ? { label: { label, labeled_at: new Date(occurred + 3_600_000).toISOString() } }
      : {}),
  };
}

async function importRecords(m: Member, records: unknown[], mode: Mode = "live") {
  const res = await call("/v1/history/transactions", {
    method: "POST",
    token: m.org.token,
    headers: { "x-mode": mode },
    raw: true,
    body: { records },
  });
  expect(res.status, res.text).toBe(201);
}

/** Waits until the consumer has run for the org's live mode (its cursors moved). */
function swept(org: TestOrg) {
  return eventually(
    async () => {
      const [row] = await ownerSql`select labels_through from network_members
        where org_id = ${org.id} and livemode = true`;
      return row?.labels_through ? true : undefined;
    },
    20_000,
    `the network consumer to run for ${org.id}`,
  );
}

const NONE = { orgs: 0, fraud_orgs: 0, legitimate_orgs: 0 };

describe("contributions to the network", () => {
  let a: Member;
  let b: Member;
  let c: Member;
  let reader: Member;

  beforeAll(async () => {
    [a, b, c, reader] = await Promise.all([member(), member(), member(), member()]);
    for (const m of [a, b, c]) await join(m.org, "live", { contribute: true, consume: false });
    await join(reader.org, "live", { contribute: true, consume: true });
    // Joining sends a message: once it is consumed, what the tests add is contributed only by
    // the message its own label or import sends.
    for (const m of [a, b, c, reader]) await swept(m.org);
  });

  it("counts labels from the feedback API and from imports, for another org to read", async () => {
    const payee = `merchant-${crypto.randomUUID()}`;
    const assessed = await assessOk(a.key, {
      mandate: payment({ payee: { id: payee, name: "Shop" } }),
    });
    const labelled = await call(`/v1/assessments/${assessed.assessmentId}/feedback`, {
      method: "POST",
      key: a.key,
      body: { label: "fraud" },
    });
    expect(labelled.status).toBe(201);
    // B's agent has a key: an imported payment contributes its agent's key thumbprints.
    const agentKey = await registerKey(b.org, b.agentId);
    await importRecords(b, [record(b, payee, 2, "chargeback")]);
    await importRecords(c, [record(c, payee, 3, "legitimate")]);

    await counted(reader.org, "live", payee, { orgs: 3, fraud_orgs: 2, legitimate_orgs: 1 });
    // An org that does not consume reads nothing.
    expect(await signals(a.org, "live", [["payee", payeeDigest(payee)]])).toBeNull();
    const keyDigest = networkDigest(readKey, "agent_key", agentKey.kid);
    const rows = await ownerSql`select kind, day::text, seen, fraud, legitimate
      from network_contributions where org_id = ${b.org.id} and digest = ${keyDigest}`;
    const day = new Date(morning(2)).toISOString().slice(0, 10);
    expect(rows).toEqual([{ kind: "agent_key", day, seen: true, fraud: true, legitimate: false }]);
  });

  it("moves a count by one for a single org labelling a payee fraud a thousand times; leaving deletes", async () => {
    const payee = `terminal-${crypto.randomUUID()}`;
    for (const m of [a, b, c]) await importRecords(m, [record(m, payee, 5)]);
    await counted(reader.org, "live", payee, { ...NONE, orgs: 3 });

    const rival = await member();
    await join(rival.org, "live", { contribute: true, consume: false });
    const labels = Array.from({ length: 1_000 }, (_, i) =>
      record(rival, payee, 1 + (i % 20), "fraud"),
    );
    await importRecords(rival, labels);
    await counted(reader.org, "live", payee, { orgs: 4, fraud_orgs: 1, legitimate_orgs: 0 });
    const [flags] = await ownerSql`select count(*) filter (where fraud)::int as fraud_rows
      from network_contributions where org_id = ${rival.org.id} and digest = ${payeeDigest(payee)}`;
    // One row per day at most: a thousand labels over 20 days are 20 days' flags.
    expect(flags).toEqual({ fraud_rows: 20 });

    await join(rival.org, "live", { contribute: false, consume: false });
    const [left] = await ownerSql`select count(*)::int as n from network_contributions
      where org_id = ${rival.org.id}`;
    expect(left).toEqual({ n: 0 });
    await counted(reader.org, "live", payee, { ...NONE, orgs: 3 });
  });

  it("keeps test mode apart from live mode", async () => {
    const payee = `merchant-${crypto.randomUUID()}`;
    for (const m of [a, b, c]) await join(m.org, "test", { contribute: true, consume: false });
    await join(reader.org, "test", { contribute: true, consume: true });
    for (const m of [a, b, c]) await importRecords(m, [record(m, payee, 1, "fraud")], "test");
    await counted(reader.org, "test", payee, { orgs: 3, fraud_orgs: 3, legitimate_orgs: 0 });
    expect(await signals(reader.org, "live", [["payee", payeeDigest(payee)]])).toEqual([
      { kind: "payee", digest: payeeDigest(payee), ...NONE },
    ]);
  });
});

/** A queue that keeps what is sent to it, in place of NETWORK_QUEUE. */
function capturingQueue() {
  const sent: unknown[] = [];
  const queue = {
    send: async (body: unknown) => {
      sent.push(body);
    },
    sendBatch: async (messages: { body: unknown }[]) => {
      sent.push(...messages.map((m) => m.body));
    },
  };
  return { sent, queue: queue as unknown as Queue };
}

async function consume(bodies: unknown[], bindings: Env) {
  const batch = createMessageBatch(
    "network-contributions",
    bodies.map((body, i) => ({ id: `m${i + 1}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, bindings, ctx);
  return getQueueResult(batch, ctx);
}

/**
 * An org contributing in live mode, made a member in the database (no settings call, so no
 * message is sent for it) and swept just now (so no sweep sends one either), with `payees`
 * payments written in one statement, as one import writes them: one `created_at` for all.
 */
async function quietMember(payees: number) {
  const org = await newOrg();
  await ownerSql`insert into network_members (org_id, livemode, contribute, swept_at)
    values (${org.id}, true, true, now())`;
  await ownerSql`insert into payments (id, org_id, livemode, external_id, kind, counterparty,
      occurred_at)
    select gen_random_uuid(), ${org.id}, true, 'q-' || i, 'payment', 'payee-' || i,
      now() - interval '1 day'
    from generate_series(1, ${payees}) i`;
  return org;
}

async function contributed(org: TestOrg) {
  const [row] = await ownerSql`select count(*)::int as n from network_contributions
    where org_id = ${org.id}`;
  return row?.n as number;
}

describe("the network queue's consumer", () => {
  it("contributes nothing without a network key, and acknowledges", async () => {
    const org = await quietMember(1);
    const result = await consume([{ org_id: org.id, livemode: true }], {
      ...env,
      NETWORK_KEYS: undefined,
    });
    expect(result.ackAll).toBe(true);
    expect(await contributed(org)).toBe(0);
    const [cursors] = await ownerSql`select payments_through from network_members
      where org_id = ${org.id}`;
    expect(cursors).toEqual({ payments_through: null });
  });

  it("reads a page past its size when its rows share one created_at, and asks for the next", async () => {
    const org = await quietMember(1_001);
    const { sent, queue } = capturingQueue();
    const message = { org_id: org.id, livemode: true };
    const bindings = { ...env, NETWORK_QUEUE: queue } as Env;
    const first = await consume([message, message, { org_id: "x' or 1=1" }], bindings);
    expect(first.explicitAcks).toEqual(["m1", "m2", "m3"]);
    // Every payee, none lost at the page's edge; the page was full, so the next is asked for.
    expect(await contributed(org)).toBe(1_001);
    expect(sent).toEqual([message]);
    const next = await consume([message], bindings);
    expect(next.explicitAcks).toEqual(["m1"]);
    expect(sent).toEqual([message]);
    expect(await contributed(org)).toBe(1_001);
  });

  it("writes a large step in requests of a bounded size, moving the cursors with the last", async () => {
    const org = await quietMember(1_001);
    const keys = networkKeys(env) ?? [];
    const through = async () =>
      (await call("/v1/network-settings", { token: org.token })).json.contributed_through;
    expect(await through()).toBeNull();
    const step = await contributeStep(env, keys, { org_id: org.id, livemode: true }, 400);
    expect(step).toEqual({ more: true, written: 1_001 });
    expect(await contributed(org)).toBe(1_001);
    const [member] = await ownerSql`select payments_through is not null as moved
      from network_members where org_id = ${org.id}`;
    expect(member).toEqual({ moved: true });
    // A full page: the payments are past it, the labels at the read's bound; still under way
    // until the pass that finds nothing more, whose bound is the earlier of the two cursors.
    const [cursors] = await ownerSql`select least(payments_through, labels_through) as at
      from network_members where org_id = ${org.id}`;
    const partial = new Date((cursors as { at: string | Date }).at).toISOString();
    expect(await through()).toBe(partial);
    const before = Date.now();
    expect(await contributeStep(env, keys, { org_id: org.id, livemode: true }, 400)).toEqual({
      more: false,
      written: 0,
    });
    const done = Date.parse(String(await through()));
    expect(done).toBeGreaterThan(Date.parse(partial));
    expect(done).toBeLessThanOrEqual(before + 1000);
    // Leaving: nothing contributed, nothing to show.
    await ownerSql`update network_members set contribute = false where org_id = ${org.id}`;
    expect(await through()).toBeNull();
  });
});

describe("the network's Cron sweep", () => {
  it("sends a message for each member due, and ages out contributions past 180 days hourly", async () => {
    const org = await quietMember(1);
    await ownerSql`update network_members set swept_at = null where org_id = ${org.id}`;
    await ownerSql`insert into network_contributions (livemode, key_id, kind, digest, day, org_id,
        seen)
      values (true, 'old', 'payee', 'aged', current_date - 200, ${org.id}, true),
             (true, 'old', 'payee', 'kept', current_date - 10, ${org.id}, true)`;
    const { sent, queue } = capturingQueue();
    const bindings = { ...env, NETWORK_QUEUE: queue } as Env;
    const sweep = async (scheduledTime: number) => {
      const ctx = createExecutionContext();
      await worker.scheduled(createScheduledController({ scheduledTime }), bindings, ctx);
      await waitOnExecutionContext(ctx);
    };
    await sweep(Date.parse("2026-12-01T10:01:00Z"));
    expect(sent).toContainEqual({ org_id: org.id, livemode: true });
    const digests = async () =>
      (
        await ownerSql`select digest from network_contributions
          where org_id = ${org.id} and key_id = 'old' order by digest`
      ).map((r) => r.digest);
    // Not the hour's first minute: no upkeep yet. Swept: not due again for five minutes.
    expect(await digests()).toEqual(["aged", "kept"]);
    sent.length = 0;
    await sweep(Date.parse("2026-12-01T11:00:00Z"));
    expect(sent).not.toContainEqual({ org_id: org.id, livemode: true });
    expect(await digests()).toEqual(["kept"]);
  });
});
