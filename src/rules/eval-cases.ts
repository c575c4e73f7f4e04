import { z } from "@hono/zod-openapi";
import { geoOf } from "../assess/input";
import type { NormalizedRules } from "../assess/policy-rules";
import { type ParsedAssessRequest, parseAssessRequest } from "../assess/request";
import type { RiskInput } from "../assess/risk-model";
import { AGENT_STATUSES, CARD_STATUSES, RISK_TIERS } from "../db/tables/identity";
import { ApiError } from "../errors";
import { DateTime } from "../http/schemas";
import { aggregateValues } from "./aggregates";
import { aggregateOf } from "./attributes";
import { replaySpecs } from "./inputs";

/**
 * Cases of an evaluation set (docs/rules.md): a request as `POST /v1/assess` takes it, the
 * context the service would have read for it (stated, so that a case means the same thing on
 * every run), and a label: the decision expected, a fraud label, or both.
 */

export const DECISIONS = ["approve", "review", "deny"] as const;
export const MAX_CASES = 1_000;

/** Placeholder id of a case's agent when the case names none. */
const CASE_AGENT_ID = "00000000-0000-0000-0000-000000000000";

const CaseAgent = z.strictObject({
  id: z.string().min(1).max(64).optional(),
  trust_score: z.int().min(0).max(100),
  risk_tier: z.enum(RISK_TIERS).optional().openapi({
    description: "Defaults to the tier of `trust_score` (docs/identity.md)",
  }),
  status: z.enum(AGENT_STATUSES).default("active"),
  card_status: z.enum(CARD_STATUSES).default("unverified"),
  identified_by: z.enum(["key", "card", "explicit"]).default("explicit"),
});

const CaseHistory = z.strictObject({
  burst: z.int().min(0).default(0),
  approved_count: z.int().min(0).default(0),
  median_approved_amount: z.int().min(0).nullable().default(null),
  payee_seen: z.boolean().nullable().default(null),
  recipient_seen: z.boolean().nullable().default(null),
});

const CaseContext = z
  .strictObject({
    agent: CaseAgent.nullable().default(null).openapi({ description: "null: unidentified" }),
    key: z.enum(["active", "revoked", "unregistered"]).nullable().default(null),
    card: z.enum(["verified", "unverified", "unknown"]).nullable().default(null),
    conflict: z.boolean().default(false),
    history: CaseHistory.default(CaseHistory.parse({})),
    aggregates: z
      .record(z.string(), z.number().min(0))
      .default({})
      .superRefine((values, ctx) => {
        for (const attr of Object.keys(values)) {
          const spec = aggregateOf(attr);
          if (spec === null || typeof spec === "string") {
            ctx.addIssue({
              code: "custom",
              path: [attr],
              message:
                typeof spec === "string" ? spec : "not a window aggregate such as count.agent.1h",
            });
          }
        }
      })
      .openapi({ description: 'Window aggregates by attribute, e.g. `{"count.agent.1h": 3}`' }),
    geo: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .nullable()
      .optional()
      .openapi({ description: "Defaults to the country in the mandate's `risk_data`" }),
    at: DateTime.optional().openapi({ description: "The assessment time; defaults to the run's" }),
  })
  .openapi("EvalCaseContext");

export const EvalCase = z
  .strictObject({
    id: z.string().min(1).max(64).optional().openapi({ description: "Your label for the case" }),
    request: z
      .record(z.string(), z.unknown())
      .openapi({ description: "A `POST /v1/assess` body (`mandate`, `kind`, `mandateType`...)" }),
    context: CaseContext.default(CaseContext.parse({})),
    expected: z.enum(DECISIONS).optional().openapi({ description: "The decision expected" }),
    fraud: z.boolean().optional().openapi({ description: "Whether the action is fraud" }),
  })
  .superRefine((value, ctx) => {
    if (value.expected === undefined && value.fraud === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["expected"],
        message: "a case needs expected or fraud",
      });
    }
  })
  .openapi("EvalCase");
export type EvalCase = z.infer<typeof EvalCase>;

/** Each case's request through the assess parser; a fault is a 400 naming the case's path. */
export function parseCases(cases: EvalCase[]): ParsedAssessRequest[] {
  return cases.map((item, index) => {
    try {
      return parseAssessRequest(item.request, null);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      const details = Array.isArray(error.details)
        ? error.details
        : [{ path: "", message: error.code }];
      throw new ApiError(
        "invalid_request",
        details.map((detail: { path: string; message: string }) => ({
          path: ["cases", index, "request", detail.path].filter((p) => p !== "").join("."),
          message: detail.message,
          code: error.code,
        })),
      );
    }
  });
}

function tierOf(trust: number): (typeof RISK_TIERS)[number] {
  if (trust >= 75) return "low";
  if (trust >= 50) return "medium";
  return trust >= 25 ? "high" : "critical";
}

/** The model's input for a case under `rules`, at `now` unless the case says when. */
export function caseInput(
  item: EvalCase,
  request: ParsedAssessRequest,
  rules: NormalizedRules,
  now: number,
): RiskInput {
  const { context } = item;
  const agent = context.agent
    ? {
        id: context.agent.id ?? CASE_AGENT_ID,
        status: context.agent.status,
        trust_score: context.agent.trust_score,
        risk_tier: context.agent.risk_tier ?? tierOf(context.agent.trust_score),
        card_status: context.agent.card_status,
      }
    : null;
  const counted: Record<string, number> = {};
  for (const [attr, value] of Object.entries(context.aggregates)) {
    const spec = aggregateOf(attr);
    if (spec !== null && typeof spec !== "string") counted[spec.key] = value;
  }
  const counterparty = request.facts.payee?.id ?? request.facts.recipient ?? null;
  const values = aggregateValues(replaySpecs(rules), counted, {
    agent: agent !== null,
    counterparty: counterparty !== null,
  });
  const velocityKey = rules.velocity ? `count.agent.${rules.velocity.window_seconds}` : null;
  const h = context.history;
  return {
    kind: request.kind,
    mandateType: request.mandateType,
    facts: request.facts,
    identity: {
      agent,
      method: agent ? (context.agent?.identified_by ?? null) : null,
      key: context.key,
      card: context.card,
      conflict: context.conflict,
    },
    rules,
    policyVersion: 0,
    history: {
      windowCount: velocityKey && agent ? (values[velocityKey] ?? 0) : null,
      burst: agent ? h.burst : 0,
      approvedCount: agent ? h.approved_count : 0,
      medianApprovedAmount: agent ? h.median_approved_amount : null,
      // As live: whether a counterparty is new is only known of an identified agent.
      payeeSeen: agent && request.kind === "ap2_payment" ? h.payee_seen : null,
      recipientSeen: agent && request.kind !== "ap2_payment" ? h.recipient_seen : null,
    },
    now: context.at ? Date.parse(context.at) : now,
    geo: context.geo === undefined ? geoOf(request.facts.riskData) : context.geo,
    ...(rules.program?.aggregates.length ? { aggregates: values } : {}),
  };
}
