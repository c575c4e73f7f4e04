import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import { createPolicy, type Json, orgWithKey, payment } from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// docs/rules.md (Evaluation sets and evaluations): /v1/eval-sets, /v1/evals, /v1/evals/run.

/** Cases that read the time say when they happen: the run's own time would make them flaky. */
const NOON = "2026-04-28T12:00:00Z";
const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

const POLICY = {
  grammar: 1,
  rules: [
    { id: "big", action: "deny", when: c("amount", "gte", 100_000) },
    { id: "new-payee", action: "review", when: c("payee.first_seen", "eq", true) },
  ],
};

/**
 * A trusted agent (trust 100, proven by its key: no trust points; named by an id it would be a
 * claim, 20) paying a payee it paid before: the model approves.
 */
const PROVEN = { trust_score: 100, identified_by: "key" };
const TRUSTED = { agent: PROVEN, history: { payee_seen: true } };
const NEW_PAYEE = { agent: PROVEN, history: { payee_seen: false } };

function usd(amount: number) {
  return { mandate: payment({ payment_amount: { amount, currency: "USD" } }) };
}

/**
 * Eight cases and what the policy decides for each (worked out from the rules):
 *
 *   c1 150000, expected deny        → deny ("big")                 flagged, flagged: TP
 *   c2 500 new payee, fraud         → review ("new-payee")         TP
 *   c3 500 new payee, expected approve → review                    FP, and the decision is wrong
 *   c4 500, fraud                   → approve                      FN
 *   c5 500, expected approve        → approve                      TN
 *   c6 120000, not fraud            → deny                         FP
 *   c7 500 unidentified, expected review → review (score 50; "new-payee" is unknown) TP
 *   c8 99999, expected deny         → approve                      FN, and the decision is wrong
 */
const CASES = [
  { id: "c1", request: usd(150_000), context: TRUSTED, expected: "deny" },
  { id: "c2", request: usd(500), context: NEW_PAYEE, fraud: true },
  { id: "c3", request: usd(500), context: NEW_PAYEE, expected: "approve" },
  { id: "c4", request: usd(500), context: TRUSTED, fraud: true },
  { id: "c5", request: usd(500), context: TRUSTED, expected: "approve" },
  { id: "c6", request: usd(120_000), context: TRUSTED, fraud: false },
  { id: "c7", request: usd(500), context: { agent: null }, expected: "review" },
  { id: "c8", request: usd(99_999), context: TRUSTED, expected: "deny" },
];

async function newSet(org: TestOrg, cases: Json[] = CASES, name = "golden") {
  const res = await call("/v1/eval-sets", {
    method: "POST",
    token: org.token,
    raw: true,
    body: { name, cases },
  });
  if (res.status !== 201) throw new Error(`set creation failed: ${res.status} ${res.text}`);
  return res.json;
}

function runEval(org: TestOrg, body: Json, key?: string) {
  return call("/v1/evals/run", {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    raw: true,
    body,
  });
}

describe("/v1/eval-sets", () => {
  it("creates, lists, reads and deletes a set", async () => {
    const { org } = await orgWithKey();
    const created = await newSet(org);
    expect(created).toMatchObject({
      object: "eval_set",
      name: "golden",
      description: null,
      case_count: 8,
    });
    expect(created.cases[0]).toMatchObject({
      id: "c1",
      // As `POST /v1/assess` reads it: the default kind filled in.
      request: { kind: "ap2_payment", ...CASES[0]?.request },
      expected: "deny",
      context: {
        agent: { trust_score: 100, status: "active", identified_by: "key" },
        history: { payee_seen: true, burst: 0 },
        aggregates: {},
        conflict: false,
      },
    });
    const list = await call("/v1/eval-sets", { token: org.token });
    expect(list.json).toEqual({
      object: "list",
      data: [
        {
          object: "eval_set",
          id: created.id,
          name: "golden",
          description: null,
          case_count: 8,
          created: created.created,
        },
      ],
      has_more: false,
      next_cursor: null,
    });
    const read = await call(`/v1/eval-sets/${created.id}`, { token: org.token });
    expect(read.json).toEqual(created);

    const deleted = await call(`/v1/eval-sets/${created.id}`, {
      method: "DELETE",
      token: org.token,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ object: "eval_set", id: created.id, deleted: true });
    const gone = await call(`/v1/eval-sets/${created.id}`, { token: org.token });
    expect(gone.status).toBe(404);
    const again = await call(`/v1/eval-sets/${created.id}`, {
      method: "DELETE",
      token: org.token,
    });
    expect(again.status).toBe(404);
  });

  it.each<[string, Json, string]>([
    ["a case without a label", { request: usd(1) }, "cases.0.expected"],
    [
      "an invalid mandate",
      { request: { mandate: { vct: "mandate.payment.1" } }, fraud: true },
      "cases.0.request.mandate",
    ],
    [
      "an unknown mandate type",
      { request: { mandate: { vct: "x" } }, fraud: true },
      "cases.0.request.mandate.vct",
    ],
    [
      "an unknown aggregate",
      { request: usd(1), fraud: true, context: { aggregates: { "count.card.1h": 1 } } },
      "cases.0.context.aggregates.count.card.1h",
    ],
    [
      "a misspelt request member",
      { request: { ...usd(1), mandate_type: "payment" }, fraud: true },
      "cases.0.request",
    ],
    ["an unknown expected decision", { request: usd(1), expected: "block" }, "cases.0.expected"],
    ["a NUL in a case id", { id: "c\u0000", request: usd(1), fraud: true }, "cases.0.id"],
    [
      "a control character in a case id",
      { id: "c\t1", request: usd(1), fraud: true },
      "cases.0.id",
    ],
    [
      "a lone surrogate in a case id",
      { id: "c\uD83D", request: usd(1), fraud: true },
      "cases.0.id",
    ],
    [
      "an uppercase agent id",
      {
        request: usd(1),
        fraud: true,
        context: { agent: { id: "0190F5A2-7C1E-7000-8000-000000000001", trust_score: 50 } },
      },
      "cases.0.context.agent.id",
    ],
    [
      "a count that is not an integer",
      { request: usd(1), fraud: true, context: { aggregates: { "count.agent.1h": 1.5 } } },
      "cases.0.context.aggregates.count.agent.1h",
    ],
    [
      "a credential refused without its failure",
      { request: usd(1), fraud: true, context: { credential: { verified: false } } },
      "cases.0.context.credential.failure",
    ],
    [
      "a verified credential with a failure",
      {
        request: usd(1),
        fraud: true,
        context: { credential: { verified: true, failure: "expired" } },
      },
      "cases.0.context.credential.failure",
    ],
    [
      "an unknown credential failure",
      {
        request: usd(1),
        fraud: true,
        context: { credential: { verified: false, failure: "spent" } },
      },
      "cases.0.context.credential.failure",
    ],
  ])("refuses %s: 400 with the path", async (_, item, path) => {
    const { org } = await orgWithKey();
    const res = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      raw: true,
      body: { name: "bad", cases: [item] },
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details[0].path.startsWith(path)).toBe(true);
  });

  it("refuses an empty set", async () => {
    const { org } = await orgWithKey();
    const res = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      body: { name: "empty", cases: [] },
    });
    expect(res.status).toBe(400);
    expect(res.error.details[0].path).toBe("cases");
  });
});

describe("POST /v1/evals/run", () => {
  it("scores a policy against the set: metrics from the hand-computed confusion matrix", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org);
    const policy = await createPolicy(org, POLICY, { activate: false });
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    expect(res.status).toBe(201);
    // TP 3 (c1 c2 c7), FP 2 (c3 c6), TN 1 (c5), FN 2 (c4 c8).
    expect(res.json).toMatchObject({
      object: "eval",
      eval_set_id: set.id,
      eval_set_name: "golden",
      policy_id: policy.id,
      policy_rules: POLICY,
      positive: "review_or_deny",
      case_count: 8,
      metrics: {
        precision: 0.6, // 3 / (3 + 2)
        recall: 0.6, // 3 / (3 + 2)
        f1: 0.6,
        accuracy: 0.5, // (3 + 1) / 8
        approval_rate: 0.375, // c4 c5 c8
        decision_accuracy: 0.6, // c1 c5 c7 of c1 c3 c5 c7 c8
      },
      confusion: {
        tp: 3,
        fp: 2,
        tn: 1,
        fn: 2,
        decisions: {
          approve: { approve: 1, review: 1, deny: 0 },
          review: { approve: 0, review: 1, deny: 0 },
          deny: { approve: 1, review: 0, deny: 1 },
        },
      },
    });
    expect(res.json.misclassified).toEqual([
      miss(2, "c3", "approve", null, "review", "new-payee"),
      miss(3, "c4", null, true, "approve", null),
      miss(5, "c6", null, false, "deny", "big"),
      miss(7, "c8", "deny", null, "approve", null),
    ]);

    const read = await call(`/v1/evals/${res.json.id}`, { token: org.token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);
    // A list item is the summary: GET by id has the rules and the misclassified cases.
    const list = await call(`/v1/evals?eval_set_id=${set.id}`, { token: org.token });
    const { policy_rules: _rules, misclassified: _misclassified, ...summary } = res.json;
    expect(list.json.data).toEqual([summary]);
    const none = await call(`/v1/evals?policy_id=${crypto.randomUUID()}`, { token: org.token });
    expect(none.json.data).toEqual([]);
  });

  it("with positive deny, only a deny flags", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org);
    const policy = await createPolicy(org, POLICY, { activate: false });
    const res = await runEval(org, {
      eval_set_id: set.id,
      policy_id: policy.id,
      positive: "deny",
    });
    // Positives: c1 c8 (expected deny), c2 c4 (fraud). Flagged: c1 c6.
    // TP c1; FP c6; FN c2 c4 c8; TN c3 c5 c7.
    expect(res.json.confusion).toMatchObject({ tp: 1, fp: 1, tn: 3, fn: 3 });
    expect(res.json.metrics).toEqual({
      precision: 0.5,
      recall: 0.25,
      f1: 0.3333, // 2·1 / (2·1 + 1 + 3)
      accuracy: 0.5,
      approval_rate: 0.375,
      decision_accuracy: 0.6,
    });
    expect(res.json.misclassified.map((m: Json) => m.id)).toEqual(["c2", "c3", "c4", "c6", "c8"]);
  });

  it("a case states its credential: a refusal denies whatever the policy, as live", async () => {
    const { org } = await orgWithKey();
    const refused = {
      verified: false,
      failure: "already_consumed",
      detail: { message: "transaction tx-1 was already approved under this consent" },
    };
    const set = await newSet(
      org,
      [
        {
          id: "verified",
          request: usd(500),
          context: { ...TRUSTED, credential: { verified: true } },
        },
        {
          id: "spent",
          request: usd(500),
          context: { ...TRUSTED, credential: refused },
          fraud: false,
        },
      ].map((item) => ({ expected: "approve", ...item })),
    );
    // Stored with its defaults, as every context member.
    expect(set.cases.map((k: Json) => k.context.credential)).toEqual([
      { verified: true, failure: null, detail: null },
      refused,
    ]);
    const policy = await createPolicy(org, { max_amount: 1_000_000 }, { activate: false });
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    expect(res.status).toBe(201);
    expect(res.json.misclassified).toEqual([
      {
        index: 1,
        id: "spent",
        expected: "approve",
        fraud: false,
        decision: "deny",
        risk_score: expect.any(Number),
        rule: null,
        reason:
          "Denied: the credential is refused (already_consumed): " +
          "transaction tx-1 was already approved under this consent.",
      },
    ]);
  });

  it("a case states its window aggregates and its time", async () => {
    const { org } = await orgWithKey();
    const policy = await createPolicy(
      org,
      {
        grammar: 1,
        rules: [
          { id: "busy", action: "review", when: c("count.agent.1h", "gte", 3) },
          { id: "night", action: "deny", when: c("time.hour", "lt", 6) },
        ],
      },
      { activate: false },
    );
    const set = await newSet(org, [
      {
        id: "busy",
        request: usd(1),
        context: { ...TRUSTED, aggregates: { "count.agent.PT1H": 3 }, at: NOON },
        expected: "review",
      },
      {
        id: "calm",
        request: usd(1),
        context: { ...TRUSTED, aggregates: { "count.agent.PT1H": 2 }, at: NOON },
        expected: "approve",
      },
      {
        id: "night",
        request: usd(1),
        context: { ...TRUSTED, aggregates: { "count.agent.1h": 0 }, at: "2026-04-28T03:00:00Z" },
        expected: "deny",
      },
    ]);
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    expect(res.json.metrics.decision_accuracy).toBe(1);
    expect(res.json.misclassified).toEqual([]);
  });

  it("an empty policy approves everything a trusted agent does: precision is undefined, F1 0", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org, [
      { request: usd(1), context: TRUSTED, fraud: true },
      { request: usd(2), context: TRUSTED, fraud: false },
    ]);
    const policy = await createPolicy(org, {}, { activate: false });
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    // TP 0, FP 0, TN 1, FN 1: precision 0/0 is undefined, but F1 = 2·0 / (2·0 + 0 + 1) = 0.
    expect(res.json.confusion).toMatchObject({ tp: 0, fp: 0, tn: 1, fn: 1 });
    expect(res.json.metrics).toEqual({
      precision: null,
      recall: 0,
      f1: 0,
      accuracy: 0.5,
      approval_rate: 1,
      decision_accuracy: null,
    });
    expect(res.json.misclassified).toEqual([miss(0, null, null, true, "approve", null)]);
  });

  it("F1 is null only when no case is flagged or positive", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org, [{ request: usd(1), context: TRUSTED, fraud: false }]);
    const policy = await createPolicy(org, {}, { activate: false });
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    // TP 0, FP 0, FN 0: 2·TP + FP + FN is 0.
    expect(res.json.metrics).toMatchObject({ precision: null, recall: null, f1: null });
  });

  it("a case that omits an aggregate the policy reads is a 400 naming the case and the aggregate", async () => {
    const { org } = await orgWithKey();
    const policy = await createPolicy(
      org,
      {
        grammar: 1,
        velocity: { window: "P1D", max: 100 },
        rules: [
          { id: "busy", action: "review", when: c("count.agent.PT60M", "gte", 3) },
          { id: "payee", action: "review", when: c("sum.payee.15m", "gte", 3) },
        ],
      },
      { activate: false },
    );
    const stated = { "count.agent.1h": 1, "sum.payee.900s": 10, "count.agent.24h": 0 };
    const set = await newSet(org, [
      { id: "full", request: usd(1), context: { ...TRUSTED, aggregates: stated }, fraud: false },
      // Without an agent, the agent's counts are unknown as live: nothing to state.
      {
        request: usd(1),
        context: { agent: null, aggregates: { "sum.payee.15m": 0 } },
        fraud: false,
      },
      { id: "c3", request: usd(1), context: TRUSTED, fraud: false },
    ]);
    const res = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        {
          path: "cases.2.context.aggregates",
          message: 'case 2 ("c3") does not state count.agent.1h, which the policy reads',
        },
        {
          path: "cases.2.context.aggregates",
          message: 'case 2 ("c3") does not state sum.payee.15m, which the policy reads',
        },
        {
          path: "cases.2.context.aggregates",
          message: 'case 2 ("c3") does not state count.agent.1d, which the policy reads',
        },
      ]),
    );
    // Nothing was stored.
    expect((await call(`/v1/evals?eval_set_id=${set.id}`, { token: org.token })).json.data).toEqual(
      [],
    );
  });

  it("a case without `at` or `geo` is read at the set's creation, in the mandate's country, on every run", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org, [
      {
        id: "fr",
        request: { mandate: payment({ risk_data: { country: "fr" } }) },
        context: TRUSTED,
        expected: "deny",
      },
      { id: "stated", request: usd(1), context: { ...TRUSTED, geo: null, at: NOON }, fraud: false },
    ]);
    expect(set.cases[0]!.context).toMatchObject({ at: set.created, geo: "FR" });
    expect(set.cases[1]!.context).toMatchObject({ at: NOON, geo: null });
    expect((await call(`/v1/eval-sets/${set.id}`, { token: org.token })).json).toEqual(set);
    const hour = new Date(set.created).getUTCHours();
    const policy = await createPolicy(
      org,
      {
        grammar: 1,
        rules: [
          {
            id: "then-in-fr",
            action: "deny",
            when: { all: [c("time.hour", "eq", hour), c("geo.country", "eq", "FR")] },
          },
        ],
      },
      { activate: false },
    );
    const first = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    const second = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    expect(first.json.misclassified).toEqual([]);
    expect(second.json.metrics).toEqual(first.json.metrics);
  });

  it("records eval sets and runs in the audit ledger", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org);
    const policy = await createPolicy(org, POLICY, { activate: false });
    const run = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    await call(`/v1/eval-sets/${set.id}`, { method: "DELETE", token: org.token });
    const rows = (await ownerSql`select type, subject_id from audit_entries
      where org_id = ${org.id} and type like 'eval%' order by sequence`) as Json[];
    expect(rows).toEqual([
      { type: "eval_set.created", subject_id: set.id },
      { type: "eval.completed", subject_id: run.json.id },
      { type: "eval_set.deleted", subject_id: set.id },
    ]);
    // The evaluation outlives its set.
    const read = await call(`/v1/evals/${run.json.id}`, { token: org.token });
    expect(read.json.eval_set_name).toBe("golden");
  });

  it("another org's set or policy is a 404; reading needs policy:read, running policy:write", async () => {
    const { org } = await orgWithKey();
    const set = await newSet(org);
    const policy = await createPolicy(org, POLICY, { activate: false });
    const { org: other } = await orgWithKey();
    const theirs = await createPolicy(other, POLICY, { activate: false });
    const cross = await runEval(other, { eval_set_id: set.id, policy_id: theirs.id });
    expect(cross.status).toBe(404);
    expect(cross.json).toEqual(
      errorBody("not_found", [{ path: "eval_set_id", message: "no such set" }]),
    );
    const mixed = await runEval(org, { eval_set_id: set.id, policy_id: theirs.id });
    expect(mixed.status).toBe(404);

    const reader = (await org.key(["policy:read"])).key;
    const refused = await runEval(org, { eval_set_id: set.id, policy_id: policy.id }, reader);
    expect(refused.status).toBe(403);
    const made = await runEval(org, { eval_set_id: set.id, policy_id: policy.id });
    const read = await call(`/v1/evals/${made.json.id}`, { key: reader });
    expect(read.status).toBe(200);
    expect((await call(`/v1/evals/${made.json.id}`, { token: other.token })).status).toBe(404);
    expect((await call("/v1/evals", { token: other.token })).json.data).toEqual([]);
    expect((await call(`/v1/eval-sets/${set.id}`, { token: other.token })).status).toBe(404);
  });
});

function miss(
  index: number,
  id: string | null,
  expected: string | null,
  fraud: boolean | null,
  decision: string,
  rule: string | null,
) {
  return {
    index,
    id,
    expected,
    fraud,
    decision,
    risk_score: expect.any(Number),
    rule,
    reason: expect.any(String),
  };
}
