import { z } from "@hono/zod-openapi";
import { DateTime } from "./common";
import { DECISIONS } from "./vocabulary";

// Shadow policies (docs/shadow-policies.md): the verdict recorded with each assessment, and the
// report over a window of them.

/**
 * What the org's shadow policy would have decided, stored in `assessments.shadow`. Never
 * signed, never in the Outcome: the assessment's ledger entry and Risk Payload do not cover it.
 */
export const ShadowVerdict = z.object({
  policy_id: z.string(),
  /** The shadow draft's `version`: null for a draft never activated. */
  version: z.int().nullable(),
  decision: z.enum(DECISIONS),
  risk_score: z.int(),
  reason: z.string(),
  /** The rule of the shadow's rule list that decided; null when none did. */
  rule: z.string().nullable(),
});
export type ShadowVerdict = z.infer<typeof ShadowVerdict>;

/**
 * What the org's shadow risk model would have said (docs/risk-model.md), stored in
 * `assessments.shadow_model`: its probability, and the score and decision the assessment
 * would have had with it active (the same rules, reasons and overrides on top). Never signed,
 * never in the Outcome.
 */
export const ShadowModelVerdict = z.object({
  id: z.string(),
  version: z.int().nullable(),
  probability: z.number(),
  risk_score: z.int(),
  decision: z.enum(DECISIONS),
});
export type ShadowModelVerdict = z.infer<typeof ShadowModelVerdict>;

/** The longest window one report reads: the index keeps it cheap, the bound keeps it so. */
export const MAX_REPORT_DAYS = 90;
export const DEFAULT_REPORT_DAYS = 7;
export const DEFAULT_REPORT_SAMPLES = 20;
export const MAX_REPORT_SAMPLES = 100;
const DAY_MS = 86_400_000;

export const ShadowReportQuery = z
  .object({
    from: DateTime.optional().openapi({
      description: `Assessments created at or after; default \`to\` minus ${DEFAULT_REPORT_DAYS} days`,
    }),
    to: DateTime.optional().openapi({ description: "Assessments created before; default now" }),
    samples: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_REPORT_SAMPLES)
      .default(DEFAULT_REPORT_SAMPLES)
      .openapi({ description: "Disagreements to list, newest first" }),
  })
  .superRefine((q, ctx) => {
    const { from, to } = windowOf(q, Date.now());
    if (Number.isNaN(from) || Number.isNaN(to)) return;
    if (to <= from) ctx.addIssue({ code: "custom", path: ["from"], message: "must be before to" });
    if (to - from > MAX_REPORT_DAYS * DAY_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["from"],
        message: `the window is at most ${MAX_REPORT_DAYS} days`,
      });
    }
  });
export type ShadowReportQuery = z.infer<typeof ShadowReportQuery>;

function windowOf(q: { from?: string; to?: string }, now: number) {
  const to = q.to === undefined ? now : Date.parse(q.to);
  return {
    from: q.from === undefined ? to - DEFAULT_REPORT_DAYS * DAY_MS : Date.parse(q.from),
    to,
  };
}

/** The window a query names, its defaults filled in (a lone `from` or `to` is bounded too). */
export function reportWindow(q: ShadowReportQuery, now: number): { from: string; to: string } {
  const { from, to } = windowOf(q, now);
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

/** The labels a disagreement is counted under: its effective label, or why it has none. */
export const REPORT_LABELS = [
  "fraud",
  "chargeback",
  "refund",
  "legitimate",
  "pending",
  "unlabeled",
] as const;
export type ReportLabel = (typeof REPORT_LABELS)[number];

const Counts = z.object({ approve: z.int(), review: z.int(), deny: z.int() });
const LabelCounts = z.object(
  Object.fromEntries(REPORT_LABELS.map((label) => [label, z.int()])) as Record<
    ReportLabel,
    z.ZodInt
  >,
);

export const ShadowReport = z
  .object({
    object: z.literal("shadow_report"),
    policy: z.object({
      id: z.string(),
      status: z.enum(["draft", "active"]),
      version: z.int().nullable(),
      shadow: z.boolean(),
    }),
    livemode: z.boolean(),
    from: z.string(),
    to: z.string(),
    shadowed: z.int().openapi({ description: "Assessments of the window this policy shadowed" }),
    agreed: z.int(),
    disagreed: z.int(),
    matrix: z
      .object({ approve: Counts, review: Counts, deny: Counts })
      .openapi({ description: "`matrix[active decision][shadow decision]`: counts" }),
    disagreements: z
      .array(
        z.object({
          decision: z.enum(DECISIONS),
          shadow_decision: z.enum(DECISIONS),
          count: z.int(),
          labels: LabelCounts,
        }),
      )
      .openapi({
        description:
          "Each cell of disagreement with its assessments counted by effective label; cells " +
          "without assessments are left out",
      }),
    samples: z.array(
      z.object({
        assessment_id: z.string(),
        created: z.string(),
        decision: z.enum(DECISIONS),
        shadow_decision: z.enum(DECISIONS),
        label: z.enum(REPORT_LABELS),
      }),
    ),
  })
  .openapi("ShadowReport");
export type ShadowReport = z.infer<typeof ShadowReport>;
