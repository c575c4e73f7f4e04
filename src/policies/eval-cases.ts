import { z } from "@hono/zod-openapi";
import { CREDENTIAL_FAILURES } from "../ap2-credentials/failures";
import type { AssessedFailure } from "../assess/ap2-credential";
import { geoOf } from "../assess/input";
import type { NormalizedRules } from "../assess/policy";
import { AssessRequest, type ParsedAssessRequest, parseAssessRequest } from "../assess/request";
import { provenIdentity } from "../assess/risk-input";
import type { RiskInput } from "../assess/risk-model";
import { aggregateValues } from "../assess/rules/aggregates";
import { aggregateOf } from "../assess/rules/attributes";
import { replaySpecs } from "../assess/rules/inputs";
import { ApiError } from "../errors";
import { DateTime, plainText } from "../schemas/common";
import { AGENT_STATUSES, CARD_STATUSES, DECISIONS, RISK_TIERS } from "../schemas/vocabulary";

/**
 * Cases of an evaluation set (docs/rules.md): a request as `POST /v1/assess` takes it, the
 * context the service would have read for it (stated, so that a case means the same thing on
 * every run: its time and country are resolved and stored when the set is created, and a
 * window aggregate the policy reads must be stated), and a label: the decision expected, a
 * fraud label, or both.
 */

export const MAX_CASES = 1_000;

/** Placeholder id of a case's agent when the case names none. */
const CASE_AGENT_ID = "00000000-0000-0000-0000-000000000000";

const CaseAgent = z.strictObject({
  id: z
    .string()
    .regex(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      "must be a lowercase UUID",
    )
    .optional()
    .openapi({ description: "What `agent.id` reads; a placeholder when absent" }),
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

/** The failures an assessment's credential can end with: the verifier's, the ledger object's. */
const CASE_FAILURES = [
  ...CREDENTIAL_FAILURES,
  "already_consumed",
  "budget_exceeded",
] as const satisfies readonly AssessedFailure[];

const CaseCredential = z
  .strictObject({
    verified: z.boolean(),
    failure: z.enum(CASE_FAILURES).nullable().default(null),
    detail: z
      .strictObject({ constraint: plainText(256).optional(), message: plainText(2048) })
      .nullable()
      .default(null)
      .openapi({ description: "The refusal's words, as the verifier (or the ledger) gave them" }),
  })
  .refine((credential) => credential.verified === (credential.failure === null), {
    path: ["failure"],
    message: "must be null when verified, and name the failure otherwise",
  })
  .openapi("EvalCaseCredential", {
    description:
      "What the request's AP2 credential proved (docs/assess.md): a refusal denies, as live, " +
      "whatever the policy",
  });

const CaseContext = z
  .strictObject({
    agent: CaseAgent.nullable().default(null).openapi({ description: "null: unidentified" }),
    key: z.enum(["active", "revoked", "unregistered"]).nullable().default(null),
    card: z.enum(["verified", "unverified", "unknown"]).nullable().default(null),
    conflict: z.boolean().default(false),
    credential: CaseCredential.nullable().default(null).openapi({
      description: "null: the mandate was sent as decoded JSON, no credential",
    }),
    history: CaseHistory.default(CaseHistory.parse({})),
    aggregates: z
      .record(z.string(), z.number().min(0))
      .default({})
      .superRefine((values, ctx) => {
        for (const [attr, value] of Object.entries(values)) {
          const spec = aggregateOf(attr);
          if (spec === null || typeof spec === "string") {
            ctx.addIssue({
              code: "custom",
              path: [attr],
              message:
                typeof spec === "string" ? spec : "not a window aggregate such as count.agent.1h",
            });
          } else if (spec.measure === "count" && !Number.isInteger(value)) {
            ctx.addIssue({ code: "custom", path: [attr], message: "a count must be an integer" });
          }
        }
      })
      .openapi({ description: 'Window aggregates by attribute, e.g. `{"count.agent.1h": 3}`' }),
    geo: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .nullable()
      .optional()
      .openapi({
        description:
          "Defaults to the country in the mandate's `risk_data` (null without one), resolved " +
          "and stored when the set is created",
      }),
    at: DateTime.optional().openapi({
      description: "The assessment time; defaults to the set's creation time, stored with it",
    }),
  })
  .openapi("EvalCaseContext");

export const EvalCase = z
  .strictObject({
    id: plainText(64).optional().openapi({ description: "Your label for the case" }),
    // The assess body's own schema: the document shows it, and a misspelt member is refused
    // here; parseCases then applies the rest of what `POST /v1/assess` checks (the mandate).
    request: AssessRequest,
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

/**
 * The cases as stored: `at` (the set's creation time when absent) and `geo` (the country of
 * the mandate's `risk_data` when absent) resolved once, so that every run reads the same.
 */
export function resolveCases(
  cases: EvalCase[],
  requests: ParsedAssessRequest[],
  created: Date,
): EvalCase[] {
  return cases.map((item, index) => {
    const request = requests[index] as ParsedAssessRequest;
    const { context } = item;
    return {
      ...item,
      context: {
        ...context,
        geo: context.geo === undefined ? geoOf(request.facts.riskData) : context.geo,
        at: context.at ?? created.toISOString(),
      },
    };
  });
}

/** A window as its shortest duration: `3600` is `1h`. */
function windowName(seconds: number): string {
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/**
 * A 400 naming each case that does not state a window aggregate the policy reads for it (one
 * of its agent or principal when the case has an agent, of its payee when the request names
 * one, a sum when the request has a currency): a count assumed 0 would make the policy look
 * better or worse than it is, silently.
 */
export function checkCaseAggregates(
  cases: EvalCase[],
  requests: ParsedAssessRequest[],
  rules: NormalizedRules,
): void {
  // The rule list's aggregates and the velocity limit's count.
  const specs = replaySpecs(rules);
  if (specs.length === 0) return;
  const details: { path: string; message: string }[] = [];
  cases.forEach((item, index) => {
    const request = requests[index] as ParsedAssessRequest;
    const stated = new Set<string>();
    for (const attr of Object.keys(item.context.aggregates)) {
      const spec = aggregateOf(attr);
      if (spec !== null && typeof spec !== "string") stated.add(spec.key);
    }
    const hasAgent = item.context.agent !== null;
    const hasCounterparty = (request.facts.payee?.id ?? request.facts.recipient ?? null) !== null;
    const hasCurrency = request.facts.amount !== null;
    for (const spec of specs) {
      const subject = spec.per === "payee" ? hasCounterparty : hasAgent;
      if (!subject || (spec.measure === "sum" && !hasCurrency) || stated.has(spec.key)) continue;
      const name = `${spec.measure}.${spec.per}.${windowName(spec.seconds)}`;
      const label =
        item.id === undefined ? `case ${index}` : `case ${index} (${JSON.stringify(item.id)})`;
      details.push({
        path: `cases.${index}.context.aggregates`,
        message: `${label} does not state ${name}, which the policy reads`,
      });
    }
  });
  if (details.length > 0) throw new ApiError("invalid_request", details.slice(0, 100));
}

function tierOf(trust: number): (typeof RISK_TIERS)[number] {
  if (trust >= 75) return "low";
  if (trust >= 50) return "medium";
  return trust >= 25 ? "high" : "critical";
}

/**
 * The model's input for a case under `rules`, at the case's `at` (stored with the set; `now`,
 * the set's creation time, for a set stored before `at` was).
 */
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
      // A case's `key` identification stands for proof of possession (a verified credential's
      // holder key, active unless the case says otherwise); `card` and `explicit` are claims.
      proven:
        agent !== null &&
        provenIdentity(
          { verified: context.agent?.identified_by === "key" },
          context.key ?? "active",
        ),
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
    // Absent from sets stored before cases could state it: decoded JSON, as they were scored.
    ...(context.credential ? { credential: context.credential } : {}),
    ...(rules.program?.aggregates.length ? { aggregates: values } : {}),
  };
}
