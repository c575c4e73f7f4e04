import { env } from "cloudflare:test";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { breakdownStatement } from "../../src/assess/breakdown";
import { call, newOrg } from "./support/api";
import { appSql, ownerSql } from "./support/db";
import { newAgent } from "./support/identity";
import { assessOnce } from "./support/routes";

// GET /v1/assessments/breakdown over 10,000 assessments (docs/assess.md, "Breakdown", Cost):
// the counts hold at that size, and the plan reads the indexes it should. The time is printed, not asserted (the machine is shared); the figure in the docs is from
// runs of this file.

const N = 10_000;

// A measurement, run when asked (it seeds 10,000 rows: over a minute on PGlite):
//   TEST_SCALE=1 npx vitest run --project workers test/worker/assessments-breakdown-scale.test.ts
describe.skipIf(!env.TEST_SCALE)("GET /v1/assessments/breakdown at 10,000 assessments", () => {
  it("counts them all, in one statement", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read", "assess:write"]);
    const { assessmentId: template } = await assessOnce(org, key);
    const agents: string[] = [];
    for (let i = 0; i < 5; i++) agents.push((await newAgent(org, { name: `Agent ${i}` })).id);
    // 10,000 copies over 25 days before 2026-06-28: scores 0–99 in turn, a decision by score,
    // 5 agents, 40 payees, 2 currencies, one signal on every third and a reason on every deny.
    let mark = performance.now();
    // Without triggers (the payments copy of each assessment): the breakdown never reads it,
    // and on PGlite the triggers made the seeding take minutes.
    await ownerSql.transaction((sql) => [
      sql`set local session_replication_role = replica`,
      sql`insert into assessments
      select (jsonb_populate_record(null::assessments, to_jsonb(a) || jsonb_build_object(
        'id', gen_random_uuid(),
        'content_hash', 'sha256:' || md5(g::text || gen_random_uuid()::text),
        'idempotency_key', null,
        'created_at', timestamptz '2026-06-28' - (g % 25) * interval '1 day' - (g % 977) * interval '1 minute',
        'risk_score', g % 100,
        'decision', case when g % 100 >= 80 then 'deny' when g % 100 >= 50 then 'review' else 'approve' end,
        'agent_id', (${JSON.stringify(agents)}::jsonb)->>(g % 5),
        'counterparty', 'payee-' || (g % 40),
        'amount', 100 + g,
        'currency', case when g % 2 = 0 then 'USD' else 'EUR' end,
        'signals', case when g % 3 = 0
          then '[{"type":"payee_first_seen","category":"recipient","severity":"low"}]'::jsonb
          else '[]'::jsonb end,
        'rejection_reasons', case when g % 100 >= 80
          then '[{"key":"max_amount_exceeded","category":"policy","description":"x"}]'::jsonb
          else '[]'::jsonb end))).*
      from assessments a, generate_series(1, ${N}) g
      where a.id = ${template}`,
    ]);
    console.log(`seeded ${N} assessments in ${Math.round(performance.now() - mark)} ms`);
    mark = performance.now();
    // One label in twenty: fraud on every fortieth, legitimate on the others.
    await ownerSql`insert into assessment_feedback (id, org_id, assessment_id, livemode, label, occurred_at)
      select gen_random_uuid(), a.org_id, a.id, a.livemode,
        case when row_number() over (order by a.id) % 2 = 0 then 'fraud' else 'legitimate' end,
        a.created_at
      from assessments a
      where a.org_id = ${org.id} and a.id <> ${template} and a.risk_score % 20 = 7`;
    console.log(`seeded the labels in ${Math.round(performance.now() - mark)} ms`);
    const window = "from=2026-05-29&to=2026-06-29";
    const times: number[] = [];
    let body: any;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const res = await call(`/v1/assessments/breakdown?${window}`, { key });
      times.push(Math.round(performance.now() - started));
      expect(res.status).toBe(200);
      body = res.json;
    }
    console.log(`breakdown of ${N} assessments: ${times.join(", ")} ms`);
    const summaryTimes: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      expect((await call(`/v1/assessments/summary?${window}`, { key })).status).toBe(200);
      summaryTimes.push(Math.round(performance.now() - started));
    }
    console.log(`summary of the same: ${summaryTimes.join(", ")} ms`);
    const query = new PgDialect().sqlToQuery(
      breakdownStatement(
        { from: "2026-05-29T00:00:00.000Z", to: "2026-06-29T00:00:00.000Z", tz: "UTC" },
        true,
      ),
    );
    const [, plan] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${org.id}, true)`,
      sql.query(`explain (analyze, costs off) ${query.sql}`, query.params),
    ]);
    const lines = (plan as { "QUERY PLAN": string }[]).map((r) => r["QUERY PLAN"]);
    console.log(lines.find((line) => line.startsWith("Execution Time")));
    // The window through the summary's index, and each row's label through the feedback
    // index by assessment: the label index (org, livemode, label, …) made it 10,000 scans of
    // every label of the mode, and a join to the labels was a nested loop (4 to 6 s).
    const text = lines.join("\n");
    expect(text).toContain("Index Scan using assessments_created_idx on assessments a");
    expect(text).toContain("Index Scan using assessment_feedback_assessment_idx");
    expect(text).not.toContain("assessment_feedback_label_idx");
    // Scores 0–99 a hundred times each: 50 approve, 30 review, 20 deny per hundred.
    expect(body.decisions).toMatchObject({ approve: 5_000, review: 3_000, deny: 2_000, total: N });
    expect(body.score_histogram.map((b: { total: number }) => b.total)).toEqual(
      Array(10).fill(1_000),
    );
    expect(body.top_signals).toEqual([
      { code: "payee_first_seen", category: "recipient", count: 3_333 },
    ]);
    expect(body.labels).toMatchObject({ labeled: 500, fraud: 250, legitimate: 250 });
    expect(body.payees.by_volume).toHaveLength(10);
    expect(body.agents.by_volume.map((a: { count: number }) => a.count)).toEqual(
      Array(5).fill(2_000),
    );
  }, 300_000);
});
