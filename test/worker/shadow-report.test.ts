import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey, payment } from "./support/assess";
import { consentOrg } from "./support/consents";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// GET /v1/policies/{id}/shadow-report (docs/shadow-policies.md) over a generated history whose
// answers are known: assessments cloned from a real one with chosen decisions, shadow verdicts,
// times and modes, and outcome labels inserted as the feedback route would store them.

type Decision = "approve" | "review" | "deny";
type Label = "fraud" | "dispute" | "chargeback" | "refund" | "legitimate";

interface Case {
  decision: Decision;
  shadow: Decision;
  /** Labels in the order they occurred; `test:` marks a test-mode label. */
  labels?: (Label | `test:${Label}`)[];
  /** Hours after the window's start; negative or past 24 is outside it. */
  at: number;
  livemode?: boolean;
  /** Shadowed by another policy. */
  other?: boolean;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;

function report(org: TestOrg, id: string, query: "" | `?${string}` = "", key?: string) {
  return call(`/v1/policies/${id}/shadow-report${query}`, key ? { key } : { token: org.token });
}

/** An org with an active policy, a shadow draft and one real shadowed assessment to clone. */
async function setup() {
  const { org, key } = await orgWithKey();
  await createPolicy(org, { max_amount: 1_000_000 });
  const draft = await createPolicy(org, { max_amount: 500 }, { activate: false, name: "strict" });
  const other = await createPolicy(org, { max_amount: 5 }, { activate: false, name: "other" });
  expect(
    (await call(`/v1/policies/${draft.id}/shadow`, { method: "POST", token: org.token })).status,
  ).toBe(200);
  const template = await assessOk(key, { mandate: payment() });
  return { org, key, draft, other, template: template.assessmentId as string };
}

/** Inserts each case as an assessment cloned from the template, and its labels; returns ids. */
async function generate(
  s: Awaited<ReturnType<typeof setup>>,
  start: number,
  cases: Case[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [n, k] of cases.entries()) {
    const id = crypto.randomUUID();
    ids.push(id);
    const livemode = k.livemode ?? true;
    const created = new Date(start + k.at * HOUR);
    const patch = {
      id,
      content_hash: `generated:${id}`,
      idempotency_key: null,
      created_at: created.toISOString(),
      livemode,
      decision: k.decision,
      shadow: {
        policy_id: k.other ? s.other.id : s.draft.id,
        version: null,
        decision: k.shadow,
        risk_score: { approve: 0, review: 40, deny: 70 }[k.shadow],
        reason: `generated ${n}`,
        rule: null,
      },
    };
    await ownerSql`insert into assessments
      select (json_populate_record(a, ${JSON.stringify(patch)}::json)).*
      from assessments a where a.id = ${s.template}`;
    for (const [i, named] of (k.labels ?? []).entries()) {
      const test = named.startsWith("test:");
      const label = named.replace("test:", "");
      await ownerSql`insert into assessment_feedback
        (id, org_id, assessment_id, livemode, label, occurred_at)
        values (${crypto.randomUUID()}, ${s.org.id}, ${id}, ${test ? false : livemode}, ${label},
                ${new Date(created.getTime() + (i + 1) * HOUR).toISOString()})`;
    }
  }
  return ids;
}

const zero = { fraud: 0, chargeback: 0, refund: 0, legitimate: 0, pending: 0, unlabeled: 0 };

describe("GET /v1/policies/{id}/shadow-report", () => {
  it("counts the window's shadowed assessments, their disagreements by effective label, and samples", async () => {
    const s = await setup();
    const start = Date.now() - 3 * DAY;
    const ids = await generate(s, start, [
      { decision: "approve", shadow: "approve", at: 1 },
      { decision: "approve", shadow: "approve", at: 2, labels: ["fraud"] },
      { decision: "approve", shadow: "deny", at: 3, labels: ["fraud"] },
      { decision: "approve", shadow: "deny", at: 4, labels: ["dispute", "chargeback"] },
      { decision: "approve", shadow: "deny", at: 5, labels: ["dispute"] },
      { decision: "approve", shadow: "deny", at: 6, labels: ["legitimate"] },
      { decision: "deny", shadow: "approve", at: 7, labels: ["legitimate", "dispute"] },
      { decision: "deny", shadow: "approve", at: 8 },
      { decision: "review", shadow: "deny", at: 9, labels: ["refund"] },
      { decision: "review", shadow: "deny", at: 10, labels: ["legitimate", "fraud"] },
      { decision: "review", shadow: "review", at: 11 },
      // A test-mode label never counts in a live report.
      { decision: "approve", shadow: "deny", at: 12, labels: ["test:fraud"] },
      // Outside: before the window, at its (exclusive) end, test mode, another policy.
      { decision: "approve", shadow: "deny", at: -1, labels: ["fraud"] },
      { decision: "approve", shadow: "deny", at: 24 },
      { decision: "approve", shadow: "deny", at: 13, livemode: false, labels: ["fraud"] },
      { decision: "approve", shadow: "deny", at: 14, other: true },
    ]);
    const hours = (n: number) => new Date(start + n * HOUR).toISOString();
    const from = new Date(start).toISOString();
    const to = new Date(start + DAY).toISOString();
    const res = await report(s.org, s.draft.id, `?from=${from}&to=${to}&samples=3`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "shadow_report",
      policy: { id: s.draft.id, status: "draft", version: null, shadow: true },
      livemode: true,
      from,
      to,
      shadowed: 12,
      agreed: 3,
      disagreed: 9,
      matrix: {
        approve: { approve: 2, review: 0, deny: 5 },
        review: { approve: 0, review: 1, deny: 2 },
        deny: { approve: 2, review: 0, deny: 0 },
      },
      disagreements: [
        {
          decision: "approve",
          shadow_decision: "deny",
          count: 5,
          labels: { ...zero, fraud: 1, chargeback: 1, pending: 1, legitimate: 1, unlabeled: 1 },
        },
        {
          decision: "review",
          shadow_decision: "deny",
          count: 2,
          labels: { ...zero, refund: 1, fraud: 1 },
        },
        {
          decision: "deny",
          shadow_decision: "approve",
          count: 2,
          labels: { ...zero, legitimate: 1, unlabeled: 1 },
        },
      ],
      // Newest first: the 12th, 10th and 9th cases.
      samples: [
        { assessment_id: ids[11], created: hours(12), decision: "approve", label: "unlabeled" },
        { assessment_id: ids[9], created: hours(10), decision: "review", label: "fraud" },
        { assessment_id: ids[8], created: hours(9), decision: "review", label: "refund" },
      ].map((sample) => ({ ...sample, shadow_decision: "deny" })),
    });

    // A test key reads test mode: only the test-mode assessment, with its test label.
    const { key: testKey } = await s.org.key(undefined, "test");
    const test = await report(s.org, s.draft.id, `?from=${from}&to=${to}`, testKey);
    expect(test.status).toBe(200);
    expect(test.json).toMatchObject({
      livemode: false,
      shadowed: 1,
      agreed: 0,
      disagreed: 1,
      disagreements: [
        { decision: "approve", shadow_decision: "deny", count: 1, labels: { ...zero, fraud: 1 } },
      ],
      samples: [{ assessment_id: ids[14], label: "fraud" }],
    });
  });

  it("defaults to the last 7 days and counts a real shadowed assessment", async () => {
    const s = await setup();
    const before = Date.now();
    const res = await report(s.org, s.draft.id);
    expect(res.status).toBe(200);
    const span = Date.parse(res.json.to) - Date.parse(res.json.from);
    expect(span).toBe(7 * DAY);
    expect(Date.parse(res.json.to)).toBeGreaterThanOrEqual(before);
    // The template: approved or reviewed by the active policy, denied by the shadow.
    const [row] =
      (await ownerSql`select decision from assessments where id = ${s.template}`) as Json[];
    expect(res.json.shadowed).toBe(1);
    expect(res.json.matrix[row?.decision as keyof typeof res.json.matrix].deny).toBe(1);
    expect(res.json.samples).toEqual([
      {
        assessment_id: s.template,
        created: expect.any(String),
        decision: row?.decision,
        shadow_decision: "deny",
        label: "unlabeled",
      },
    ]);
  });

  it("a consent spent twice: the shadow is held to the ledger's refusal, no disagreement", async () => {
    // The shadow scores before the ledger object refuses the second payment of a transaction,
    // and would approve it; the refusal is a fact whatever the policy (docs/shadow-policies.md).
    const { org, pay } = await consentOrg();
    const draft = await createPolicy(org, { max_amount: 1_000_000 }, { activate: false });
    const shadow = await call(`/v1/policies/${draft.id}/shadow`, {
      method: "POST",
      token: org.token,
    });
    expect(shadow.status).toBe(200);
    const first = await pay({ transaction_id: "tx-once" });
    const again = await pay({ transaction_id: "tx-once" });
    expect([first.decision, again.decision]).toEqual(["approve", "deny"]);
    expect(again.outcome.credential).toMatchObject({ failure: "already_consumed" });
    const res = await report(org, draft.id);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      shadowed: 2,
      agreed: 2,
      disagreed: 0,
      matrix: {
        approve: { approve: 1, review: 0, deny: 0 },
        review: { approve: 0, review: 0, deny: 0 },
        deny: { approve: 0, review: 0, deny: 1 },
      },
      disagreements: [],
      samples: [],
    });
  });

  it("a policy that never shadowed reports zeros", async () => {
    const s = await setup();
    const res = await report(s.org, s.other.id);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      policy: { id: s.other.id, status: "draft", version: null, shadow: false },
      shadowed: 0,
      agreed: 0,
      disagreed: 0,
      matrix: {
        approve: { approve: 0, review: 0, deny: 0 },
        review: { approve: 0, review: 0, deny: 0 },
        deny: { approve: 0, review: 0, deny: 0 },
      },
      disagreements: [],
      samples: [],
    });
  });

  it("refuses a bad window: 400 naming the parameter", async () => {
    const s = await setup();
    const now = Date.now();
    const iso = (t: number) => new Date(t).toISOString();
    const cases = [
      [`?from=${iso(now)}&to=${iso(now - DAY)}`, "must be before to"],
      [`?from=${iso(now)}&to=${iso(now)}`, "must be before to"],
      [`?from=${iso(now - 91 * DAY)}&to=${iso(now)}`, "the window is at most 90 days"],
      [`?from=${iso(now - 91 * DAY)}`, "the window is at most 90 days"],
    ] as const;
    for (const [query, message] of cases) {
      const res = await report(s.org, s.draft.id, query);
      expect(res.status).toBe(400);
      expect(res.json).toEqual(
        errorBody("invalid_request", [{ code: "custom", path: "from", message }]),
      );
    }
    for (const query of ["?samples=101", "?samples=x", "?to=yesterday"] as const) {
      const res = await report(s.org, s.draft.id, query);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
    // The longest window is allowed.
    const longest = await report(s.org, s.draft.id, `?from=${iso(now - 90 * DAY)}&to=${iso(now)}`);
    expect(longest.status).toBe(200);
  });
});
