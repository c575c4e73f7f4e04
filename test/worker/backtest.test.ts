import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { normalizeRules, PolicyRules } from "../../src/assess/policy";
import {
  type HistoryRow,
  historyPage,
  replayRow,
  backtest as runBacktest,
} from "../../src/policies/backtest";
import { type Claims, RANGE } from "../support/ap2-chains";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey, payment } from "./support/assess";
import { consentOrg } from "./support/consents";
import { provenAgentOrg } from "./support/credentials";
import { appSql, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newPrincipal } from "./support/identity";

// docs/rules.md (Backtest): POST /v1/policies/{id}/backtest replays a policy over the org's
// history from the inputs recorded at the time. The expected changes below are worked out by
// hand from the rules and the history, not by running the model.

const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

function backtest(org: TestOrg, policyId: string, body: Json = {}, key?: string) {
  return call(`/v1/policies/${policyId}/backtest`, {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    body,
  });
}

const DRAFT_RULES = {
  grammar: 1,
  rules: [
    { id: "blocked", action: "deny", when: c("payee.id", "eq", "merchant_blocked") },
    { id: "big", action: "review", when: c("amount", "gte", 50_000) },
    { id: "third-in-hour", action: "review", when: c("count.agent.1h", "gte", 2) },
    { id: "unknown-ok", action: "approve", when: c("agent.identified", "eq", false) },
  ],
};

/**
 * Six assessments under no policy, oldest first, each with what it was and what the draft
 * makes of it:
 *
 *   1. A pays 19900 USD to merchant_1     approve; count 0, no rule          → approve
 *   2. A pays 60000 USD to merchant_2     approve; "big"                     → review
 *   3. B pays 19900 EUR to merchant_1     approve; count 0, no rule          → approve
 *   4. A pays 500 USD to merchant_blocked approve; "blocked"                 → deny
 *   5. an unidentified agent pays 19900   review (agent_unknown 30 + trust 20 = 50);
 *                                         no count without an agent; "unknown-ok" would
 *                                         approve, but agent_unknown bars approve rules → review
 *   6. A pays 19900 USD to merchant_1     approve; A's count in the hour is 3: "third-in-hour" → review
 */
async function seeded() {
  // A and B prove themselves with verified credentials (a claim earns no trust, docs/assess.md).
  const { org, key, body: a, holder } = await provenAgentOrg();
  const { body: b } = await holder();
  type Proven = typeof a;
  const pay = async (agent: Proven | null, amount: number, currency: string, payee: string) => {
    const closed = { payment_amount: { amount, currency }, payee: { id: payee, name: payee } };
    return agent ? await agent(closed) : { mandate: payment(closed) };
  };
  const bodies = [
    await pay(a, 19_900, "USD", "merchant_1"),
    await pay(a, 60_000, "USD", "merchant_2"),
    await pay(b, 19_900, "EUR", "merchant_1"),
    await pay(a, 500, "USD", "merchant_blocked"),
    await pay(null, 19_900, "USD", "merchant_1"),
    await pay(a, 19_900, "USD", "merchant_1"),
  ];
  const made: Json[] = [];
  for (const body of bodies) made.push(await assessOk(key, body));
  expect(made.map((m) => m.decision)).toEqual([
    "approve",
    "approve",
    "approve",
    "approve",
    "review",
    "approve",
  ]);
  const draft = await createPolicy(org, DRAFT_RULES, { activate: false });
  return { org, key, made, draft };
}

function unlabeled(fireRate: number) {
  return {
    labeled: 0,
    fraud_caught: 0,
    fraud_missed: 0,
    legitimate_blocked: 0,
    legitimate_approved: 0,
    precision: null,
    recall: null,
    fire_rate: fireRate,
  };
}

describe("POST /v1/policies/{id}/backtest", () => {
  it("replays a draft over the history: changes, matrix, rule hits and samples", async () => {
    const { org, made, draft } = await seeded();
    const res = await backtest(org, draft.id);
    expect(res.status).toBe(200);
    const ids = made.map((m) => m.assessmentId);
    expect(res.json).toEqual({
      object: "policy_backtest",
      policy: { id: draft.id, status: "draft", version: null },
      risk_model: null,
      livemode: true,
      from: null,
      to: null,
      limit: 10_000,
      replayed: 6,
      skipped: 0,
      changed: 3,
      has_more: false,
      truncated: false,
      limits: {
        rows: 10_000,
        max_rows: 100_000,
        aggregates: 1,
        max_aggregate_evaluations: 500_000,
      },
      matrix: {
        approve: { approve: 2, review: 2, deny: 1 },
        review: { approve: 0, review: 1, deny: 0 },
        deny: { approve: 0, review: 0, deny: 0 },
      },
      rules: [
        { id: "blocked", action: "deny", hits: 1 },
        { id: "big", action: "review", hits: 1 },
        { id: "third-in-hour", action: "review", hits: 1 },
        { id: "unknown-ok", action: "approve", hits: 0 },
      ],
      unmatched: 3,
      samples: [
        sample(made[5], "approve", "review", "third-in-hour"),
        sample(made[3], "approve", "deny", "blocked"),
        sample(made[1], "approve", "review", "big"),
      ],
      // Nothing is labeled: only the fire rates count (recorded 1 of 6 flagged, replayed 4).
      labeled: { recorded: unlabeled(0.1667), policy: unlabeled(0.6667) },
    });
    expect(res.json.samples.map((s: Json) => s.assessment_id)).toEqual([ids[5], ids[3], ids[1]]);
  });

  it("limit takes the newest, and says there is more", async () => {
    const { org, draft } = await seeded();
    const res = await backtest(org, draft.id, { limit: 2, samples: 1 });
    expect(res.json).toMatchObject({ replayed: 2, changed: 1, has_more: true, limit: 2 });
    // The answer says the call stopped at its cap, with more of the range left.
    expect(res.json).toMatchObject({ truncated: true, limits: { rows: 2, max_rows: 100_000 } });
    expect(res.json.samples).toHaveLength(1);
    expect(res.json.matrix.approve.review).toBe(1);
    expect(res.json.matrix.review.review).toBe(1);
  });

  it("from and to bound the range (inclusive)", async () => {
    const { org, made, draft } = await seeded();
    const res = await backtest(org, draft.id, { to: made[3]?.outcome.created });
    // 1 to 4: "big" and "blocked" change; 1 and 3 do not.
    expect(res.json).toMatchObject({ replayed: 4, changed: 2, has_more: false });
    expect(res.json.matrix.approve).toEqual({ approve: 2, review: 1, deny: 1 });
    const later = await backtest(org, draft.id, { from: made[4]?.outcome.created });
    expect(later.json).toMatchObject({ replayed: 2, changed: 1 });
  });

  it("skips assessments without recorded inputs", async () => {
    const { org, made, draft } = await seeded();
    await ownerSql`update assessments set inputs = null where id = ${made[2]?.assessmentId}`;
    const res = await backtest(org, draft.id);
    expect(res.json).toMatchObject({ replayed: 5, skipped: 1, changed: 3, unmatched: 2 });
  });

  it("replaying the active policy over what it decided changes nothing", async () => {
    const { org, key, body } = await provenAgentOrg();
    const active = await createPolicy(org, {
      currencies: ["USD"],
      grammar: 1,
      rules: [{ id: "second", action: "review", when: c("count.agent.1h", "gte", 1) }],
    });
    const decisions = [];
    for (const currency of ["USD", "USD", "EUR"]) {
      const proven = await body({ payment_amount: { amount: 1_000, currency } });
      decisions.push((await assessOk(key, proven)).decision);
    }
    expect(decisions).toEqual(["approve", "review", "deny"]);
    const res = await backtest(org, active.id);
    expect(res.json).toMatchObject({
      policy: { id: active.id, status: "active", version: 1 },
      replayed: 3,
      changed: 0,
      matrix: {
        approve: { approve: 1, review: 0, deny: 0 },
        review: { approve: 0, review: 1, deny: 0 },
        deny: { approve: 0, review: 0, deny: 1 },
      },
      rules: [{ id: "second", action: "review", hits: 2 }],
      unmatched: 1,
      samples: [],
    });
  });

  it("counts every kind of window aggregate as the live assessments did", async () => {
    // Live, the database function assess_context counts the aggregates; a backtest counts them
    // with src/assess/rules/aggregates.ts. Replaying the active policy over its own decisions must
    // change nothing, rule by rule, whatever the subject (agent, principal, payee) and measure.
    const { org, key, holder } = await provenAgentOrg();
    const principalId = await newPrincipal(org);
    const first = await holder({ principal_id: principalId });
    const sibling = await holder({ principal_id: principalId });
    const active = await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "busy-payee", action: "deny", when: c("count.payee.1h", "gte", 3) },
        { id: "principal-sum", action: "review", when: c("sum.principal.1d", "gte", 30_000) },
        { id: "agent-sum", action: "review", when: c("sum.agent.1h", "gte", 21_000) },
        { id: "agent-count", action: "review", when: c("count.agent.1h", "gte", 3) },
      ],
    });
    type Agent = typeof first;
    const pay = (agent: Agent, amount: number, currency: string, payee: string) =>
      agent.body({ payment_amount: { amount, currency }, payee: { id: payee, name: payee } });
    // Sums are of the principal's (or agent's) payments in the request's currency, before it.
    const sequence: [Agent, number, string, string][] = [
      [first, 19_900, "USD", "m-1"],
      [sibling, 50_000, "EUR", "m-2"], // another currency: adds to no USD sum
      [sibling, 5_000, "USD", "m-1"], // the principal: 19,900
      [first, 2_000, "USD", "m-3"], // the principal: 24,900; the first agent: 19,900
      [sibling, 1_000, "USD", "m-3"], // the principal: 26,900
      [first, 2_500, "USD", "m-2"], // the first agent: 21,900: agent-sum
      [sibling, 700, "USD", "m-1"], // the principal: 30,400: principal-sum
      [first, 300, "USD", "m-1"], // m-1 paid 3 times before it: busy-payee
    ];
    const live: Json[] = [];
    for (const [agent, amount, currency, payee] of sequence) {
      live.push(await assessOk(key, await pay(agent, amount, currency, payee)));
    }
    const ruleOf = (made: Json) =>
      /policy rule "([^"]+)"/.exec(String(made.outcome.outcome.reason))?.[1] ?? null;
    const liveRules = live.map(ruleOf);
    expect(liveRules.slice(-3)).toEqual(["agent-sum", "principal-sum", "busy-payee"]);
    const res = await backtest(org, active.id);
    expect(res.status).toBe(200);
    const hits = (id: string) => liveRules.filter((rule) => rule === id).length;
    expect(res.json).toMatchObject({
      replayed: sequence.length,
      changed: 0,
      rules: ["busy-payee", "principal-sum", "agent-sum", "agent-count"].map((id) => ({
        id,
        hits: hits(id),
      })),
      unmatched: liveRules.filter((rule) => rule === null).length,
    });
  });

  it("replays a create-shape policy too, velocity counted as of each assessment", async () => {
    const { org, key, body } = await provenAgentOrg();
    for (let i = 0; i < 3; i++) await assessOk(key, await body());
    const draft = await createPolicy(
      org,
      { velocity: { window: "1h", max: 2 } },
      { activate: false },
    );
    const res = await backtest(org, draft.id);
    // The third is the agent's third within the hour: velocity_exceeded denies it.
    expect(res.json).toMatchObject({ replayed: 3, changed: 1, rules: [], unmatched: 3 });
    expect(res.json.matrix.approve).toEqual({ approve: 2, review: 0, deny: 1 });
  });

  it("reads the credential's mode only: a test key replays test assessments", async () => {
    const { org, draft } = await seeded();
    const { key } = await org.key(["policy:read"], "test");
    const res = await backtest(org, draft.id, {}, key);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ livemode: false, replayed: 0, changed: 0 });
  });

  it("policy:read is enough; it writes nothing", async () => {
    const { org, draft } = await seeded();
    const { key } = await org.key(["policy:read"]);
    const before =
      await ownerSql`select count(*)::int as n from audit_entries where org_id = ${org.id}`;
    const res = await backtest(org, draft.id, {}, key);
    expect(res.status).toBe(200);
    const after =
      await ownerSql`select count(*)::int as n from audit_entries where org_id = ${org.id}`;
    expect(after).toEqual(before);
  });

  it.each<[string, Json, string]>([
    ["from after to", { from: "2026-05-01T00:00:00Z", to: "2026-04-01T00:00:00Z" }, "from"],
    ["a limit of 0", { limit: 0 }, "limit"],
    ["a limit beyond 100000", { limit: 100_001 }, "limit"],
    ["too many samples", { samples: 101 }, "samples"],
    ["an unknown field", { until: "2026-05-01T00:00:00Z" }, ""],
    ["a date without an offset", { from: "2026-05-01T00:00:00" }, "from"],
  ])("refuses %s with 400", async (_, body, path) => {
    const { org } = await orgWithKey();
    const draft = await createPolicy(org, {}, { activate: false });
    const res = await backtest(org, draft.id, body);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details[0].path).toBe(path);
  });

  it("another org's policy is a 404", async () => {
    const { draft } = await seeded();
    const { org: intruder } = await orgWithKey();
    const res = await backtest(intruder, draft.id);
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });
});

// What was true when an assessment was made holds in every replay, whatever the policy says
// (docs/rules.md, "What a replay holds"): a credential refused, a consent already spent, a
// budget exhausted, a revoked or suspended agent. A draft with nothing but a generous
// `max_amount` approves each of these payments on its own terms: only the facts refuse them.
describe("facts of history hold in the replay", () => {
  const PERMISSIVE = { max_amount: 1_000_000 };

  /** The answer's summary for a history of one approval, then `held` (its recorded decision). */
  function heldSummary(held: "deny" | "review") {
    const row = () => ({ approve: 0, review: 0, deny: 0 });
    return {
      replayed: 2,
      skipped: 0,
      changed: 0,
      matrix: {
        approve: { ...row(), approve: 1 },
        review: row(),
        deny: row(),
        [held]: { ...row(), [held]: 1 },
      },
      rules: [],
      unmatched: 2,
      samples: [],
      // One of two flagged, as recorded.
      labeled: { recorded: unlabeled(0.5), policy: unlabeled(0.5) },
    };
  }

  async function backtestDraft(org: TestOrg) {
    const draft = await createPolicy(org, PERMISSIVE, { activate: false });
    const res = await backtest(org, draft.id);
    expect(res.status).toBe(200);
    return res.json;
  }

  /**
   * Each assessment's replay under the permissive draft, in a sample's fields (the answer lists
   * only changed ones): the route's own page query, as the org reads it, through `replayRow`.
   */
  async function replays(org: TestOrg) {
    const rules = normalizeRules(PolicyRules.parse(PERMISSIVE));
    const page = historyPage(rules, { livemode: true, from: null, to: null }, null, 10);
    const query = new PgDialect().sqlToQuery(page);
    const [, rows] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${org.id}, true)`,
      sql.query(query.sql, query.params),
    ]);
    return (rows as HistoryRow[]).map((row) => {
      const replayed = replayRow(rules, row);
      return {
        assessment_id: row.id,
        created: new Date(row.created).toISOString(),
        decision: row.decision,
        replayed_decision: replayed?.decision,
        rule: replayed?.rule?.id ?? null,
        reason: replayed?.reason,
      };
    });
  }

  /** The replay of `made` states the decision and the reason it was given. */
  function heldReplay(made: Json) {
    return {
      assessment_id: made.assessmentId,
      created: made.outcome.created,
      decision: made.decision,
      replayed_decision: made.decision,
      rule: null,
      reason: made.outcome.outcome.reason,
    };
  }

  it("a consent already spent: the second payment of one transaction stays denied", async () => {
    const { org, pay } = await consentOrg();
    const first = await pay({ transaction_id: "tx-once" });
    const again = await pay({ transaction_id: "tx-once" });
    expect(first.decision).toBe("approve");
    expect(again.decision).toBe("deny");
    expect(again.outcome.credential).toMatchObject({
      verified: false,
      failure: "already_consumed",
    });
    expect(again.outcome.outcome.reason).toBe(
      "Denied: the credential is refused (already_consumed): " +
        "transaction tx-once was already approved under this consent.",
    );
    expect(await backtestDraft(org)).toMatchObject(heldSummary("deny"));
    expect((await replays(org))[0]).toEqual(heldReplay(again));

    // Labeled fraud, the double spend is fraud the replayed policy catches, as it was caught.
    const labeled = await call(`/v1/assessments/${again.assessmentId}/feedback`, {
      method: "POST",
      token: org.token,
      body: { label: "fraud" },
    });
    expect(labeled.status).toBe(201);
    const caught = {
      labeled: 1,
      fraud_caught: 1,
      fraud_missed: 0,
      legitimate_blocked: 0,
      legitimate_approved: 0,
      precision: 1,
      recall: 1,
      fire_rate: 0.5,
    };
    expect((await backtestDraft(org)).labeled).toEqual({ recorded: caught, policy: caught });
  });

  it("a budget exhausted: the payment past it stays denied", async () => {
    // 60.00 CAD twice under a budget of 100.00 CAD (major units, as the SDK reads it).
    const { org, pay } = await consentOrg({
      constraints: [RANGE, { type: "payment.budget", max: 100, currency: "CAD" }],
    });
    const amount = { payment_amount: { amount: 6000, currency: "CAD" } };
    const first = await pay({ ...amount, transaction_id: "tx-1" });
    const past = await pay({ ...amount, transaction_id: "tx-2" });
    expect(first.decision).toBe("approve");
    expect(past.decision).toBe("deny");
    expect(past.outcome.credential).toMatchObject({ verified: false, failure: "budget_exceeded" });
    expect(past.outcome.outcome.reason).toBe(
      "Denied: the credential is refused (budget_exceeded): this payment would take the open " +
        "mandate past its budget, a period cap or its number of payments.",
    );
    expect(await backtestDraft(org)).toMatchObject(heldSummary("deny"));
    expect((await replays(org))[0]).toEqual(heldReplay(past));
  });

  it.each<[string, boolean, Claims, string]>([
    ["an untrusted issuer", false, {}, "untrusted_issuer"],
    ["an expired mandate", true, { exp: Math.floor(Date.now() / 1000) - 3600 }, "expired"],
  ])("a credential refused (%s) stays denied", async (_, trusted, closed, failure) => {
    const { org, pay } = await consentOrg({ trusted });
    const refused = await pay({ transaction_id: "tx-1", ...closed });
    expect(refused.decision).toBe("deny");
    expect(refused.outcome.credential).toMatchObject({ verified: false, failure });
    const res = await backtestDraft(org);
    const row = () => ({ approve: 0, review: 0, deny: 0 });
    expect(res).toMatchObject({
      replayed: 1,
      changed: 0,
      matrix: { approve: row(), review: row(), deny: { ...row(), deny: 1 } },
      samples: [],
      labeled: { recorded: unlabeled(1), policy: unlabeled(1) },
    });
    expect(await replays(org)).toEqual([heldReplay(refused)]);
  });

  it("an assessment whose inputs hold no credential evidence replays its stored refusal", async () => {
    // As if recorded before the inputs carried the credential: the stored outcome says it.
    const { org, pay } = await consentOrg({ trusted: false });
    const refused = await pay({ transaction_id: "tx-1" });
    expect(refused.outcome.credential).toMatchObject({ failure: "untrusted_issuer" });
    await ownerSql`update assessments set inputs = inputs - 'credential'
      where id = ${refused.assessmentId}`;
    expect(await backtestDraft(org)).toMatchObject({ replayed: 1, changed: 0, samples: [] });
    expect(await replays(org)).toEqual([heldReplay(refused)]);
  });

  it.each<["revoked" | "suspended", "deny" | "review", string]>([
    ["revoked", "deny", "Denied: agent {id} is revoked."],
    ["suspended", "review", "Review: agent {id} is suspended."],
  ])("an agent %s at the time stays %s", async (status, held, reason) => {
    const { org, agentId, pay } = await consentOrg();
    const first = await pay({ transaction_id: "tx-1" });
    const res = await call(`/v1/agents/${agentId}`, {
      method: "PATCH",
      token: org.token,
      body: { status },
    });
    expect(res.status).toBe(200);
    const after = await pay({ transaction_id: "tx-2" });
    expect(first.decision).toBe("approve");
    expect(after.decision).toBe(held);
    expect(after.outcome.outcome.reason).toBe(reason.replace("{id}", agentId));
    expect(await backtestDraft(org)).toMatchObject(heldSummary(held));
    expect((await replays(org))[0]).toEqual(heldReplay(after));
  });
});

function sample(made: Json | undefined, decision: string, replayed: string, rule: string) {
  return {
    assessment_id: made?.assessmentId,
    created: made?.outcome.created,
    decision,
    replayed_decision: replayed,
    rule,
    reason: expect.stringMatching(new RegExp(`policy rule "${rule}" matched`)),
  };
}

describe("paging (the replay loop itself)", () => {
  // Rows without recorded inputs are skipped: enough to count what the loop reads.
  const rows = Array.from({ length: 7 }, (_, i) => ({
    id: `row-${String(9 - i).padStart(2, "0")}`,
    created: new Date(Date.UTC(2026, 0, 1, 0, 0, 9 - i)).toISOString(),
    kind: "ap2_payment" as const,
    decision: "approve" as const,
    has_counterparty: true,
    inputs: null,
    credential_failure: null,
    credential_reason: null,
    counted: null,
    label: null,
  }));
  function reader() {
    const pages: number[] = [];
    const read = async (cursor: string | null, size: number) => {
      const start = cursor === null ? 0 : rows.findIndex((r) => r.id === cursor) + 1;
      pages.push(size);
      return rows.slice(start, start + size);
    };
    return { read, pages };
  }
  const rules = normalizeRules(PolicyRules.parse({ max_amount: 1 }));

  it.each([
    [3, 3, true],
    [6, 6, true],
    [7, 7, false],
    [50, 7, false],
    [1, 1, true],
  ])("limit %i: %i read, has_more %s, in pages of at most 2", async (limit, read, more) => {
    const { read: readPage, pages } = reader();
    const result = await runBacktest(rules, readPage, { limit, samples: 0, pageSize: 2 });
    expect(result.skipped).toBe(read);
    expect(result.replayed).toBe(0);
    expect(result.has_more).toBe(more);
    expect(Math.max(...pages)).toBeLessThanOrEqual(2);
  });
});
