import { eq, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { policies } from "../db/schema";
import { REPORT_LABELS, type ReportLabel, type ShadowReport } from "../schemas/shadow";
import { DECISIONS, type Decision } from "../schemas/vocabulary";

/**
 * The shadow report (docs/shadow-policies.md): over a window of one mode's assessments that a
 * policy shadowed (its id recorded in `assessments.shadow`), how often the active and the shadow
 * decisions agreed, and for each disagreement what the org learned afterwards (the effective
 * label of the outcome feedback). One round trip: the policy and three aggregate reads.
 */

export interface ReportQuery {
  policyId: string;
  from: string;
  to: string;
  samples: number;
}

/**
 * The window's shadowed assessments, by the index (org, shadow policy id, created). A refused
 * credential is a fact of history whatever the policy (docs/shadow-policies.md): the shadow
 * scored the verifier's refusals itself, but not the ledger object's (`already_consumed`,
 * `budget_exceeded`), decided after scoring, so the stored outcome's failure denies on the
 * shadow side too.
 */
function shadowed(q: ReportQuery, livemode: boolean): SQL {
  return sql`select a.id, a.created_at, a.decision,
      case when a.credential->>'failure' is not null then 'deny'
        else a.shadow->>'decision' end as shadow_decision
    from assessments a
    where a.shadow is not null and a.shadow->>'policy_id' = ${q.policyId}::text
      and a.livemode = ${livemode}
      and a.created_at >= ${q.from}::timestamptz and a.created_at < ${q.to}::timestamptz`;
}

/**
 * The disagreements with their effective label: the latest label other than `dispute` (a
 * dispute waits for its outcome); `pending` with only disputes, `unlabeled` with none. Labels
 * of the other mode never count (a test label is no evidence about live traffic).
 */
function disagreements(q: ReportQuery, livemode: boolean): SQL {
  const labels = sql`from assessment_feedback f
    where f.assessment_id = s.id and f.livemode = ${livemode}`;
  return sql`select s.*, coalesce(
      (select f.label ${labels} and f.label <> 'dispute'
       order by f.occurred_at desc, f.created_at desc, f.id desc limit 1),
      case when exists (select 1 ${labels}) then 'pending' else 'unlabeled' end) as label
    from (${shadowed(q, livemode)}) s
    where s.decision <> s.shadow_decision`;
}

interface CellRow {
  decision: Decision;
  shadow_decision: Decision;
  n: number | string;
}

interface LabelRow extends CellRow {
  label: ReportLabel;
}

interface SampleRow {
  id: string;
  created: string;
  decision: Decision;
  shadow_decision: Decision;
  label: ReportLabel;
}

type ReportBody = Omit<ShadowReport, "object" | "policy" | "livemode" | "from" | "to">;

/** The report, or null when the policy is not the org's (a 404). */
export async function shadowReport(
  tenant: Tenant,
  q: ReportQuery,
): Promise<{ policy: ShadowReport["policy"]; body: ReportBody } | null> {
  const livemode = tenant.livemode;
  const [policy, cells, labeled, samples] = await tenant.batch((db) => [
    db
      .select({
        id: policies.id,
        status: policies.status,
        version: policies.version,
        shadow: policies.shadow,
      })
      .from(policies)
      .where(eq(policies.id, q.policyId)),
    db.execute(sql`select s.decision, s.shadow_decision, count(*) as n
      from (${shadowed(q, livemode)}) s group by 1, 2`),
    db.execute(sql`select d.decision, d.shadow_decision, d.label, count(*) as n
      from (${disagreements(q, livemode)}) d group by 1, 2, 3`),
    db.execute(sql`select d.id, to_json(d.created_at)#>>'{}' as created, d.decision,
        d.shadow_decision, d.label
      from (${disagreements(q, livemode)}) d
      order by d.created_at desc, d.id desc
      limit ${q.samples}`),
  ]);
  const found = policy[0];
  if (!found) return null;
  return {
    policy: found,
    body: tally(rowsOf<CellRow>(cells), rowsOf<LabelRow>(labeled), rowsOf<SampleRow>(samples)),
  };
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

/** Folds the grouped counts into the report's fixed shape: every cell present, zeros included. */
export function tally(cells: CellRow[], labeled: LabelRow[], samples: SampleRow[]): ReportBody {
  const counts = () => ({ approve: 0, review: 0, deny: 0 });
  const matrix = { approve: counts(), review: counts(), deny: counts() };
  let shadowedCount = 0;
  let agreed = 0;
  for (const cell of cells) {
    if (!isDecision(cell.decision) || !isDecision(cell.shadow_decision)) continue;
    const n = Number(cell.n);
    matrix[cell.decision][cell.shadow_decision] += n;
    shadowedCount += n;
    if (cell.decision === cell.shadow_decision) agreed += n;
  }
  const disagreements = DECISIONS.flatMap((decision) =>
    DECISIONS.filter((other) => other !== decision && matrix[decision][other] > 0).map(
      (shadowDecision) => {
        const labels = Object.fromEntries(REPORT_LABELS.map((label) => [label, 0])) as Record<
          ReportLabel,
          number
        >;
        for (const row of labeled) {
          if (row.decision === decision && row.shadow_decision === shadowDecision) {
            labels[row.label] += Number(row.n);
          }
        }
        return {
          decision,
          shadow_decision: shadowDecision,
          count: matrix[decision][shadowDecision],
          labels,
        };
      },
    ),
  );
  return {
    shadowed: shadowedCount,
    agreed,
    disagreed: shadowedCount - agreed,
    matrix,
    disagreements,
    samples: samples.map((s) => ({
      assessment_id: s.id,
      created: new Date(s.created).toISOString(),
      decision: s.decision,
      shadow_decision: s.shadow_decision,
      label: s.label,
    })),
  };
}

function isDecision(value: string): value is Decision {
  return (DECISIONS as readonly string[]).includes(value);
}
