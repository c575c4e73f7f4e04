import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { riskModels } from "../db/schema";
import type { RiskModelShadowReport } from "../schemas/risk-models";
import { DECISIONS, type Decision } from "../schemas/vocabulary";

// The shadow model's report (docs/risk-model.md, "Shadowing"), as the shadow policy's
// (docs/shadow-policies.md): over a window of one mode's assessments that the model shadowed
// (`assessments.shadow_model->>'id'`), how often its decision agreed with the decision made,
// and, for the payments whose outcome is known (`payment_labels`), what each side would have
// caught. One round trip: the model and two reads.

export interface ModelReportQuery {
  modelId: string;
  from: string;
  to: string;
  samples: number;
}

type Label = "fraud" | "legitimate" | "unlabeled";

/**
 * The window's shadowed assessments, each with its label known now: fraud when a fraud or
 * chargeback label exists, legitimate when a legitimate or refund label does (and no fraud),
 * else unlabeled. Labels of the other mode are never the payment's: a payment has one mode.
 */
function shadowed(q: ModelReportQuery, livemode: boolean): SQL {
  const labelled = (labels: string[]) => sql`exists (select 1 from payment_labels l
      where l.org_id = a.org_id and l.payment_id = a.id
        and l.label in (${sql.join(
          labels.map((label) => sql`${label}`),
          sql`, `,
        )}))`;
  return sql`select a.id, a.created_at, a.decision,
      a.shadow_model->>'decision' as model_decision,
      (a.shadow_model->>'probability')::float8 as probability,
      case when ${labelled(["fraud", "chargeback"])} then 'fraud'
        when ${labelled(["legitimate", "refund"])} then 'legitimate'
        else 'unlabeled' end as label
    from assessments a
    where a.shadow_model is not null and a.shadow_model->>'id' = ${q.modelId}::text
      and a.livemode = ${livemode}
      and a.created_at >= ${q.from}::timestamptz and a.created_at < ${q.to}::timestamptz`;
}

interface CellRow {
  decision: Decision;
  model_decision: Decision;
  label: Label;
  n: number | string;
}

interface SampleRow {
  id: string;
  created: string;
  decision: Decision;
  model_decision: Decision;
  probability: number;
  label: Label;
}

type ReportBody = Omit<RiskModelShadowReport, "object" | "model" | "livemode" | "from" | "to">;

/** The report, or null when the model is not the org's in this mode (a 404). */
export async function modelShadowReport(
  tenant: Tenant,
  q: ModelReportQuery,
): Promise<{ model: RiskModelShadowReport["model"]; body: ReportBody } | null> {
  const livemode = tenant.livemode;
  const [model, cells, samples] = await tenant.batch((db) => [
    db
      .select({ id: riskModels.id, status: riskModels.status, version: riskModels.version })
      .from(riskModels)
      .where(and(eq(riskModels.id, q.modelId), eq(riskModels.livemode, livemode))),
    db.execute(sql`select s.decision, s.model_decision, s.label, count(*) as n
      from (${shadowed(q, livemode)}) s group by 1, 2, 3`),
    db.execute(sql`select s.id, to_json(s.created_at)#>>'{}' as created, s.decision,
        s.model_decision, s.probability, s.label
      from (${shadowed(q, livemode)}) s
      where s.decision <> s.model_decision
      order by s.created_at desc, s.id desc
      limit ${q.samples}`),
  ]);
  const found = model[0];
  if (!found) return null;
  return {
    model: found,
    body: tallyModelReport(rowsOf<CellRow>(cells), rowsOf<SampleRow>(samples)),
  };
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

const LEVELS = { review: ["review", "deny"], deny: ["deny"] } as const;

/** Folds the grouped counts into the report: every cell present, zeros included. */
export function tallyModelReport(cells: CellRow[], samples: SampleRow[]): ReportBody {
  const counts = () => ({ approve: 0, review: 0, deny: 0 });
  const matrix = { approve: counts(), review: counts(), deny: counts() };
  const labels = { fraud: 0, legitimate: 0, unlabeled: 0 };
  const valid = cells.filter((c) => isDecision(c.decision) && isDecision(c.model_decision));
  let shadowedCount = 0;
  let agreed = 0;
  for (const cell of valid) {
    const n = Number(cell.n);
    matrix[cell.decision][cell.model_decision] += n;
    labels[cell.label] += n;
    shadowedCount += n;
    if (cell.decision === cell.model_decision) agreed += n;
  }
  const caught = (side: "decision" | "model_decision", level: keyof typeof LEVELS) => {
    const fires = (cell: CellRow) => (LEVELS[level] as readonly string[]).includes(cell[side]);
    let alerts = 0;
    let labeled = 0;
    let frauds = 0;
    for (const cell of valid) {
      if (!fires(cell)) continue;
      const n = Number(cell.n);
      alerts += n;
      if (cell.label !== "unlabeled") labeled += n;
      if (cell.label === "fraud") frauds += n;
    }
    return {
      alerts,
      labeled_alerts: labeled,
      frauds,
      precision: labeled > 0 ? round4(frauds / labeled) : null,
      recall: labels.fraud > 0 ? round4(frauds / labels.fraud) : null,
    };
  };
  return {
    shadowed: shadowedCount,
    agreed,
    disagreed: shadowedCount - agreed,
    matrix,
    labels,
    model_catch: {
      review: caught("model_decision", "review"),
      deny: caught("model_decision", "deny"),
    },
    actual_catch: { review: caught("decision", "review"), deny: caught("decision", "deny") },
    samples: samples
      .filter((s) => isDecision(s.decision) && isDecision(s.model_decision))
      .map((s) => ({
        assessment_id: s.id,
        created: new Date(s.created).toISOString(),
        decision: s.decision,
        model_decision: s.model_decision,
        probability: Number(s.probability),
        label: s.label,
      })),
  };
}

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

function isDecision(value: string): value is Decision {
  return (DECISIONS as readonly string[]).includes(value);
}
