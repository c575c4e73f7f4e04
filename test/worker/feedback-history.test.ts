import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json } from "./support/assess";
import { consentOrg } from "./support/consents";
import { provenAgentOrg } from "./support/credentials";
import { errorBody } from "./support/errors";

// docs/feedback.md: labeled history in backtests and evaluation sets. The expected metrics are
// worked out by hand from the amounts, the labels and the draft's one rule.

const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

/** The draft flags (denies) every payment of 50000 or more. */
const DRAFT = {
  grammar: 1,
  rules: [{ id: "big", action: "deny", when: c("amount", "gte", 50_000) }],
};

/**
 * Seven assessments, all approved when made (no policy), oldest first:
 *
 *   #  amount  labels (in order sent)             effective   draft
 *   0   1000   legitimate, refund (a day earlier)  legitimate  approve
 *   1  60000   fraud                               fraud       deny   → caught
 *   2  60000   legitimate                          legitimate  deny   → legitimate blocked
 *   3  60000   dispute, chargeback                 chargeback  deny   → caught
 *   4   1000   chargeback                          chargeback  approve → missed
 *   5   1000   dispute                             (pending)   approve
 *   6  60000   legitimate                          legitimate  deny   → legitimate blocked
 */
async function labeledHistory() {
  const { org, key, holder } = await provenAgentOrg();
  const amounts = [1000, 60_000, 60_000, 60_000, 1000, 1000, 60_000];
  const made: Json[] = [];
  for (const amount of amounts) {
    // A fresh agent each time: no agent's own history (amounts, burst) sways the model.
    const { body } = await holder();
    made.push(await assessOk(key, await body({ payment_amount: { amount, currency: "USD" } })));
  }
  expect(made.map((m) => m.decision)).toEqual(Array(7).fill("approve"));
  const send = async (i: number, label: string, occurredAt?: string) => {
    const res = await call(`/v1/assessments/${made[i]?.assessmentId}/feedback`, {
      method: "POST",
      key,
      raw: true,
      body: { label, ...(occurredAt ? { occurred_at: occurredAt } : {}) },
    });
    expect(res.status).toBe(201);
  };
  await send(0, "legitimate");
  await send(0, "refund", new Date(Date.now() - 86_400_000).toISOString());
  await send(1, "fraud");
  await send(2, "legitimate");
  await send(3, "dispute");
  await send(3, "chargeback");
  await send(4, "chargeback");
  await send(5, "dispute");
  await send(6, "legitimate");
  return { org, key, made };
}

function backtest(org: TestOrg, policyId: string, body: Json = {}) {
  return call(`/v1/policies/${policyId}/backtest`, { method: "POST", token: org.token, body });
}

describe("labeled outcomes in a backtest", () => {
  it("reports caught, missed, blocked, precision, recall and fire rate, recorded beside replayed", async () => {
    const { org } = await labeledHistory();
    const draft = await createPolicy(org, DRAFT, { activate: false });
    const res = await backtest(org, draft.id);
    expect(res.status).toBe(200);
    expect(res.json.replayed).toBe(7);
    expect(res.json.labeled).toEqual({
      // Everything was approved when made: all three positives missed, nothing flagged.
      recorded: {
        labeled: 6,
        fraud_caught: 0,
        fraud_missed: 3,
        legitimate_blocked: 0,
        legitimate_approved: 3,
        precision: null, // nothing flagged
        recall: 0, // 0 / 3
        fire_rate: 0, // 0 / 7
      },
      policy: {
        labeled: 6,
        fraud_caught: 2, // #1 #3
        fraud_missed: 1, // #4
        legitimate_blocked: 2, // #2 #6
        legitimate_approved: 1, // #0
        precision: 0.5, // 2 / (2 + 2)
        recall: 0.6667, // 2 / (2 + 1)
        fire_rate: 0.5714, // 4 / 7
      },
    });
  });

  it("pages through labels as through history: the same answer in pages of two", async () => {
    // vitest.config.ts sets TEST_BACKTEST_PAGE_SIZE to 2: seven rows span four pages.
    const { org } = await labeledHistory();
    const draft = await createPolicy(org, DRAFT, { activate: false });
    const limited = await backtest(org, draft.id, { limit: 3 });
    // The newest three: #6 (legitimate, blocked), #5 (pending), #4 (chargeback, missed).
    expect(limited.json).toMatchObject({ replayed: 3, has_more: true, truncated: true });
    expect(limited.json.labeled.policy).toMatchObject({
      labeled: 2,
      fraud_caught: 0,
      fraud_missed: 1,
      legitimate_blocked: 1,
      precision: 0,
      recall: 0,
      fire_rate: 0.3333,
    });
  });

  it("test-mode labels stay out of a live backtest", async () => {
    const { org, key, body } = await provenAgentOrg("test");
    const made = await assessOk(
      key,
      await body({ payment_amount: { amount: 60_000, currency: "USD" } }),
    );
    await call(`/v1/assessments/${made.assessmentId}/feedback`, {
      method: "POST",
      key,
      body: { label: "fraud" },
    });
    const draft = await createPolicy(org, DRAFT, { activate: false });
    const live = await backtest(org, draft.id);
    expect(live.json).toMatchObject({ livemode: true, replayed: 0 });
    expect(live.json.labeled.policy).toMatchObject({ labeled: 0, fraud_caught: 0 });
  });
});

describe("POST /v1/eval-sets from labeled history", () => {
  it("builds one case per labeled assessment, expected decision from the label", async () => {
    const { org, made } = await labeledHistory();
    const res = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      body: {
        name: "from history",
        from_history: { labels: ["fraud", "chargeback", "legitimate"] },
      },
    });
    expect(res.status).toBe(201);
    // Oldest first; #5 is only disputed, so it is not a case.
    const expected = [
      [0, "approve", false],
      [1, "deny", true],
      [2, "approve", false],
      [3, "deny", true],
      [4, "deny", true],
      [6, "approve", false],
    ] as const;
    expect(res.json.case_count).toBe(6);
    expect(res.json.cases.map((k: Json) => [k.id, k.expected, k.fraud])).toEqual(
      expected.map(([i, decision, fraud]) => [`a_${made[i]?.assessmentId}`, decision, fraud]),
    );
    const first = res.json.cases[1] as Json;
    expect(first.request.mandate.payment_amount).toEqual({ amount: 60_000, currency: "USD" });
    expect(first.context.agent).toMatchObject({ identified_by: "key" });

    // The draft scored on those cases: what the backtest said, as an evaluation.
    const draft = await createPolicy(org, DRAFT, { activate: false });
    const run = await call("/v1/evals/run", {
      method: "POST",
      token: org.token,
      body: { eval_set_id: res.json.id, policy_id: draft.id },
    });
    expect(run.status).toBe(201);
    expect(run.json.confusion).toMatchObject({ tp: 2, fp: 2, tn: 1, fn: 1 });
  });

  it("takes only the labels asked for, within the range", async () => {
    const { org, made } = await labeledHistory();
    const res = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      body: {
        name: "chargebacks",
        from_history: { labels: ["chargeback"], from: made[0]?.outcome.created },
      },
    });
    expect(res.status).toBe(201);
    expect(res.json.cases.map((k: Json) => k.id)).toEqual([
      `a_${made[3]?.assessmentId}`,
      `a_${made[4]?.assessmentId}`,
    ]);
  });

  it("answers 422 when the range holds no labeled assessment", async () => {
    const { org } = await provenAgentOrg();
    const res = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      body: { name: "nothing", from_history: { labels: ["fraud"] } },
    });
    expect(res.status).toBe(422);
    expect(res.json).toEqual(
      errorBody("no_labeled_history", {
        message: "no assessment of the range has an effective label among those asked for",
        labels: ["fraud"],
        from: null,
        to: null,
      }),
    );
  });

  it("a consent spent twice stays denied in its case: the refusal is a fact, not the policy's", async () => {
    // The second payment of one transaction was refused by the ledger object after the model
    // approved it; labeled fraud, a permissive draft must still catch it, as live did.
    const { org, key, pay } = await consentOrg();
    const first = await pay({ transaction_id: "tx-once" });
    const again = await pay({ transaction_id: "tx-once" });
    expect([first.decision, again.decision]).toEqual(["approve", "deny"]);
    for (const [made, label] of [
      [first, "legitimate"],
      [again, "fraud"],
    ] as const) {
      const res = await call(`/v1/assessments/${made.assessmentId}/feedback`, {
        method: "POST",
        key,
        body: { label },
      });
      expect(res.status).toBe(201);
    }
    const set = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      body: { name: "double spend", from_history: {} },
    });
    expect(set.status).toBe(201);
    expect(set.json.cases.map((k: Json) => [k.id, k.context.credential])).toEqual([
      [`a_${first.assessmentId}`, { verified: true, failure: null, detail: null }],
      [
        `a_${again.assessmentId}`,
        {
          verified: false,
          failure: "already_consumed",
          detail: { message: "transaction tx-once was already approved under this consent" },
        },
      ],
    ]);
    const draft = await createPolicy(org, { max_amount: 1_000_000 }, { activate: false });
    const run = await call("/v1/evals/run", {
      method: "POST",
      token: org.token,
      body: { eval_set_id: set.json.id, policy_id: draft.id, positive: "deny" },
    });
    expect(run.status).toBe(201);
    expect(run.json.confusion).toEqual({
      tp: 1,
      fp: 0,
      tn: 1,
      fn: 0,
      decisions: {
        approve: { approve: 1, review: 0, deny: 0 },
        review: { approve: 0, review: 0, deny: 0 },
        deny: { approve: 0, review: 0, deny: 1 },
      },
    });
    expect(run.json.misclassified).toEqual([]);

    // The case, decided as the assessment was, in the words it was given: changed to expect an
    // approval, it is listed with its decision and reason.
    const cases = set.json.cases.map((k: Json) => ({ ...k, expected: "approve", fraud: false }));
    const restated = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      raw: true,
      body: { name: "restated", cases },
    });
    expect(restated.status).toBe(201);
    const rerun = await call("/v1/evals/run", {
      method: "POST",
      token: org.token,
      body: { eval_set_id: restated.json.id, policy_id: draft.id },
    });
    expect(rerun.status).toBe(201);
    expect(rerun.json.misclassified).toEqual([
      {
        index: 1,
        id: `a_${again.assessmentId}`,
        expected: "approve",
        fraud: false,
        decision: "deny",
        risk_score: expect.any(Number),
        rule: null,
        reason: again.outcome.outcome.reason,
      },
    ]);
  });

  it.each([
    [{ name: "both", cases: [], from_history: {} }, "cases"],
    [{ name: "neither" }, "cases"],
    [{ name: "bad label", from_history: { labels: ["refund"] } }, "from_history.labels.0"],
    [{ name: "bad limit", from_history: { limit: 0 } }, "from_history.limit"],
  ])("refuses %j with 400 naming %s", async (body, path) => {
    const { org } = await provenAgentOrg();
    const res = await call("/v1/eval-sets", { method: "POST", token: org.token, raw: true, body });
    expect(res.status).toBe(400);
    expect(res.error.details.map((d: Json) => d.path)).toContain(path);
  });
});
