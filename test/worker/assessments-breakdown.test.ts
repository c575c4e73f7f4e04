import { describe, expect, it } from "vitest";
import { call, newOrg, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";
import { assessOnce } from "./support/routes";

// GET /v1/assessments/breakdown (docs/assess.md, "Breakdown"). As in the summary's test, the
// history is one assessment made through POST /v1/assess, copied by the database owner with
// chosen decisions, scores, signals, agents, payees and amounts (its mandate copied with the
// chosen payee), and labelled through the feedback API; every expected figure is worked out
// by hand below.

type Decision = "approve" | "review" | "deny";

interface Made {
  id?: string;
  at?: string;
  decision: Decision;
  score: number;
  agent?: string | null;
  payee?: { id: string; name: string } | null;
  amount?: [number, string] | null;
  signals?: [string, string][];
  reasons?: [string, string][];
  livemode?: boolean;
}

/** Copies the template assessment (and its mandate) once per entry; answers the new ids. */
async function seed(template: string, made: Made[]): Promise<string[]> {
  const rows = made.map((m) => {
    const id = crypto.randomUUID();
    return {
      id,
      created_at: m.at ?? "2026-06-02T12:00:00.000Z",
      decision: m.decision,
      risk_score: m.score,
      agent_id: m.agent ?? null,
      counterparty: m.payee ? `cp-${m.payee.id}` : null,
      amount: m.amount?.[0] ?? null,
      currency: m.amount?.[1] ?? null,
      signals: (m.signals ?? []).map(([type, category]) => ({ type, category, severity: "high" })),
      rejection_reasons: (m.reasons ?? []).map(([key, category]) => ({
        key,
        category,
        description: key,
      })),
      livemode: m.livemode ?? true,
      content_hash: `sha256:${id}`,
      idempotency_key: null,
      payee: m.payee ?? null,
    };
  });
  const json = JSON.stringify(rows);
  await ownerSql`insert into assessments
    select (jsonb_populate_record(null::assessments, to_jsonb(a) || (r.value - 'payee'))).*
    from assessments a, jsonb_array_elements(${json}::jsonb) r
    where a.id = ${template}`;
  await ownerSql`insert into mandates
    select (jsonb_populate_record(null::mandates, to_jsonb(md) || jsonb_build_object(
      'id', gen_random_uuid(), 'assessment_id', r.value->'id',
      'content_hash', r.value->'content_hash', 'livemode', r.value->'livemode',
      'mandate', case when r.value->'payee' = 'null'::jsonb then md.mandate - 'payee'
        else md.mandate || jsonb_build_object('payee', r.value->'payee') end))).*
    from mandates md, jsonb_array_elements(${json}::jsonb) r
    where md.assessment_id = ${template}`;
  return rows.map((r) => r.id);
}

async function label(
  key: string,
  assessment: string,
  label: "fraud" | "dispute" | "chargeback" | "refund" | "legitimate",
  occurred: string,
) {
  const res = await call(`/v1/assessments/${assessment}/feedback`, {
    method: "POST",
    key,
    body: { label, occurred_at: occurred },
  });
  if (res.status !== 201) throw new Error(`label failed: ${res.status} ${res.text}`);
}

function breakdown(credential: { key?: string; token?: string }, query = WINDOW) {
  return call(`/v1/assessments/breakdown?${query}`, credential);
}

const WINDOW = "from=2026-06-01&to=2026-06-04";
const ACME = { id: "acme", name: "Acme Travel" };
const ZED = { id: "zed", name: "Zed Games" };

/**
 * Seven live assessments in the window, one before it and one in test mode:
 *
 *   #  decision score agent payee amount     signals                       reasons              label (effective)
 *   1  approve    5   A     acme  1000 USD   -                             -                    dispute (none)
 *   2  approve   15   A     acme  2000 USD   -                             -                    fraud: missed
 *   3  approve   25   B     acme   500 EUR   -                             -                    refund
 *   4  review    55   A     zed   3000 USD   agent_unknown ×2              -                    chargeback: caught
 *   5  review    58   B     zed   4000 USD   agent_unknown                 -                    fraud, then legitimate
 *   6  deny     100   B     zed   9000 USD   agent_unknown, payee_new      max_amount           dispute, then fraud: caught
 *   7  deny      92   -     -     -          -                             max_amount, constraint
 */
async function scenario() {
  const org = await newOrg();
  const { key } = await org.key(["assess:read", "assess:write"]);
  const { key: testKey } = await org.key(["assess:read", "assess:write"], "test");
  const { assessmentId: template } = await assessOnce(org, key);
  const a = (await newAgent(org, { name: "Alpha buyer" })).id as string;
  const b = (await newAgent(org, { name: "Beta buyer" })).id as string;
  const unknown: [string, string] = ["agent_unknown", "identity"];
  const ids = await seed(template, [
    { decision: "approve", score: 5, agent: a, payee: ACME, amount: [1000, "USD"] },
    { decision: "approve", score: 15, agent: a, payee: ACME, amount: [2000, "USD"] },
    { decision: "approve", score: 25, agent: b, payee: ACME, amount: [500, "EUR"] },
    {
      decision: "review",
      score: 55,
      agent: a,
      payee: ZED,
      amount: [3000, "USD"],
      signals: [unknown, unknown],
    },
    {
      decision: "review",
      score: 58,
      agent: b,
      payee: ZED,
      amount: [4000, "USD"],
      signals: [unknown],
    },
    {
      decision: "deny",
      score: 100,
      agent: b,
      payee: ZED,
      amount: [9000, "USD"],
      signals: [unknown, ["payee_new", "recipient"]],
      reasons: [["max_amount", "policy"]],
    },
    {
      decision: "deny",
      score: 92,
      reasons: [
        ["max_amount", "policy"],
        ["constraint", "mandate"],
      ],
    },
    // Outside: before the window, and the other mode.
    { at: "2026-05-31T23:59:59.999Z", decision: "deny", score: 99, agent: a, payee: ACME },
    { decision: "deny", score: 99, agent: a, payee: ACME, amount: [7000, "USD"], livemode: false },
  ]);
  const [one, two, three, four, five, six] = ids as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  await label(key, one, "dispute", "2026-06-05T00:00:00Z");
  await label(key, two, "fraud", "2026-06-05T00:00:00Z");
  await label(key, three, "refund", "2026-06-05T00:00:00Z");
  await label(key, four, "chargeback", "2026-06-05T00:00:00Z");
  await label(key, five, "fraud", "2026-06-05T00:00:00Z");
  await label(key, five, "legitimate", "2026-06-07T00:00:00Z");
  await label(key, six, "dispute", "2026-06-05T00:00:00Z");
  await label(key, six, "fraud", "2026-06-06T00:00:00Z");
  return { org, key, testKey, a, b, ids };
}

const bin = (min: number, counts: Partial<Record<Decision, number>> = {}) => {
  const approve = counts.approve ?? 0;
  const review = counts.review ?? 0;
  const deny = counts.deny ?? 0;
  return {
    min,
    max: min === 90 ? 100 : min + 9,
    approve,
    review,
    deny,
    total: approve + review + deny,
  };
};

describe("GET /v1/assessments/breakdown", () => {
  it("breaks the window down by decision, score, signal, label, payee and agent", async () => {
    const { key, a, b } = await scenario();
    const res = await breakdown({ key });
    expect(res.status).toBe(200);
    const acme = {
      counterparty: "cp-acme",
      id: "acme",
      name: "Acme Travel",
      count: 3,
      amounts: [
        { currency: "EUR", amount: 500 },
        { currency: "USD", amount: 3000 },
      ],
      approve: 3,
      review: 0,
      deny: 0,
      flagged_rate: 0,
      mean_score: 15,
    };
    const zed = {
      counterparty: "cp-zed",
      id: "zed",
      name: "Zed Games",
      count: 3,
      amounts: [{ currency: "USD", amount: 16000 }],
      approve: 0,
      review: 2,
      deny: 1,
      flagged_rate: 1,
      mean_score: 71, // (55 + 58 + 100) / 3
    };
    const alpha = {
      id: a,
      name: "Alpha buyer",
      count: 3,
      amounts: [{ currency: "USD", amount: 6000 }],
      approve: 2,
      review: 1,
      deny: 0,
      flagged_rate: 0.3333,
      mean_score: 25,
    };
    const beta = {
      id: b,
      name: "Beta buyer",
      count: 3,
      amounts: [
        { currency: "EUR", amount: 500 },
        { currency: "USD", amount: 13000 },
      ],
      approve: 1,
      review: 1,
      deny: 1,
      flagged_rate: 0.6667,
      mean_score: 61, // (25 + 58 + 100) / 3
    };
    expect(res.json).toEqual({
      object: "assessment_breakdown",
      livemode: true,
      from: "2026-06-01T00:00:00.000Z",
      to: "2026-06-04T00:00:00.000Z",
      tz: "UTC",
      decisions: {
        approve: 3,
        review: 2,
        deny: 2,
        total: 7,
        rates: { approve: 0.4286, review: 0.2857, deny: 0.2857 },
      },
      score_histogram: [
        bin(0, { approve: 1 }),
        bin(10, { approve: 1 }),
        bin(20, { approve: 1 }),
        bin(30),
        bin(40),
        bin(50, { review: 2 }),
        bin(60),
        bin(70),
        bin(80),
        bin(90, { deny: 2 }),
      ],
      // An assessment counts once per code, however many times it carries it.
      top_signals: [
        { code: "agent_unknown", category: "identity", count: 3 },
        { code: "payee_new", category: "recipient", count: 1 },
      ],
      top_rejection_reasons: [
        { code: "max_amount", category: "policy", count: 2 },
        { code: "constraint", category: "mandate", count: 1 },
      ],
      labels: {
        labeled: 5, // 2, 3, 4, 5, 6: a lone dispute is no effective label
        fraud: 3, // 2, 4, 6
        legitimate: 1, // 5: the later legitimate supersedes its fraud
        fraud_rate: 0.4286,
        fraud_caught: { count: 2, amounts: [{ currency: "USD", amount: 12000 }] },
        fraud_missed: { count: 1, amounts: [{ currency: "USD", amount: 2000 }] },
        legitimate_flagged: 1,
      },
      payees: { by_volume: [acme, zed], by_risk: [zed, acme] },
      // Equal volumes are ranked by id.
      agents: { by_volume: a < b ? [alpha, beta] : [beta, alpha], by_risk: [beta, alpha] },
    });
  });

  it("keeps test and live mode apart", async () => {
    const { org, testKey, a } = await scenario();
    const test = await breakdown({ key: testKey });
    expect(test.status).toBe(200);
    const agent = {
      id: a,
      name: "Alpha buyer",
      count: 1,
      amounts: [{ currency: "USD", amount: 7000 }],
      approve: 0,
      review: 0,
      deny: 1,
      flagged_rate: 1,
      mean_score: 99,
    };
    const payee = { ...agent, counterparty: "cp-acme", id: "acme", name: "Acme Travel" };
    expect(test.json).toMatchObject({
      livemode: false,
      decisions: {
        approve: 0,
        review: 0,
        deny: 1,
        total: 1,
        rates: { approve: 0, review: 0, deny: 1 },
      },
      top_signals: [],
      top_rejection_reasons: [],
      labels: {
        labeled: 0,
        fraud: 0,
        legitimate: 0,
        fraud_rate: 0,
        fraud_caught: { count: 0, amounts: [] },
        fraud_missed: { count: 0, amounts: [] },
        legitimate_flagged: 0,
      },
      payees: { by_volume: [payee], by_risk: [payee] },
      agents: { by_volume: [agent], by_risk: [agent] },
    });
    expect(test.json.score_histogram[9]).toEqual(bin(90, { deny: 1 }));
    // A session reads live, as a live key does.
    const live = await breakdown({ token: org.token });
    expect(live.json.decisions.total).toBe(7);
  });

  it("answers zeros, nulls and empty lists for an empty window, and never another org's", async () => {
    const { key } = await scenario();
    const other: TestOrg = await newOrg();
    const res = await breakdown({ token: other.token });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "assessment_breakdown",
      livemode: true,
      from: "2026-06-01T00:00:00.000Z",
      to: "2026-06-04T00:00:00.000Z",
      tz: "UTC",
      decisions: {
        approve: 0,
        review: 0,
        deny: 0,
        total: 0,
        rates: { approve: null, review: null, deny: null },
      },
      score_histogram: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90].map((min) => bin(min)),
      top_signals: [],
      top_rejection_reasons: [],
      labels: {
        labeled: 0,
        fraud: 0,
        legitimate: 0,
        fraud_rate: null,
        fraud_caught: { count: 0, amounts: [] },
        fraud_missed: { count: 0, amounts: [] },
        legitimate_flagged: 0,
      },
      payees: { by_volume: [], by_risk: [] },
      agents: { by_volume: [], by_risk: [] },
    });
    // The first org's window is still its own.
    expect((await breakdown({ key })).json.decisions.total).toBe(7);
  });

  it("reads the window as the summary does, and refuses what it refuses", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await breakdown({ key }, "from=2026-06-04&to=2026-06-01");
    expect(res.status).toBe(400);
    expect(res.error).toEqual(
      errorBody("invalid_request", [
        { path: "from", message: "must be before to", code: "custom" },
      ]),
    );
  });

  it("narrows the summary and the breakdown to one agent with agent=", async () => {
    const { key, testKey, a, b } = await scenario();
    const ofB = await breakdown({ key }, `${WINDOW}&agent=${b.toUpperCase()}`);
    expect(ofB.status).toBe(200);
    expect(ofB.json.agent).toBe(b);
    expect(ofB.json.decisions).toEqual({
      approve: 1,
      review: 1,
      deny: 1,
      total: 3,
      rates: { approve: 0.3333, review: 0.3333, deny: 0.3333 },
    });
    expect(ofB.json.agents.by_volume.map((x: { id: string }) => x.id)).toEqual([b]);
    expect(ofB.json.labels).toMatchObject({ labeled: 3, fraud: 1, legitimate: 1 });
    const summary = await call(`/v1/assessments/summary?${WINDOW}&agent=${a}`, { key });
    expect(summary.status).toBe(200);
    expect(summary.json.agent).toBe(a);
    expect(summary.json.totals).toMatchObject({ approve: 2, review: 1, deny: 0, total: 3 });
    // Per mode, as everything else: A's one test assessment is counted with a test key only.
    const test = await call(`/v1/assessments/summary?${WINDOW}&agent=${a}`, { key: testKey });
    expect(test.json.totals).toMatchObject({ approve: 0, review: 0, deny: 1, total: 1 });
    const none = await breakdown({ key }, `${WINDOW}&agent=${crypto.randomUUID()}`);
    expect(none.json.decisions.total).toBe(0);
    const bad = await breakdown({ key }, `${WINDOW}&agent=nope`);
    expect(bad.status).toBe(400);
    expect(bad.error.details).toEqual([expect.objectContaining({ path: "agent" })]);
  });
});
