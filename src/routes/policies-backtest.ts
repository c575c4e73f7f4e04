import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { backtestPolicy, MAX_BACKTEST_LIMIT } from "../policies/policy-backtest";
import { DateTime } from "../schemas/common";
import { DECISIONS } from "../schemas/vocabulary";

const BacktestRequest = z
  .strictObject({
    from: DateTime.optional().openapi({ description: "Assessments created at or after" }),
    to: DateTime.optional().openapi({ description: "Assessments created at or before" }),
    limit: z.int().min(1).max(MAX_BACKTEST_LIMIT).default(10_000).openapi({
      description: "Most recent assessments of the range to replay",
    }),
    samples: z.int().min(0).max(100).default(20).openapi({
      description: "Changed assessments to return, newest first",
    }),
    risk_model: z
      .uuid()
      .optional()
      .openapi({
        description:
          "A risk model of the key's mode with parameters (ready, shadow, active or retired), " +
          "replayed as the behaviour stage of each payment beside the policy, from the payment " +
          "history and the labels known at each assessment's time",
      }),
  })
  .openapi("BacktestRequest");

const DecisionCounts = z.object({
  approve: z.int(),
  review: z.int(),
  deny: z.int(),
});

const LabeledMetrics = z
  .object({
    labeled: z.int(),
    fraud_caught: z.int(),
    fraud_missed: z.int(),
    legitimate_blocked: z.int(),
    legitimate_approved: z.int(),
    precision: z.number().nullable(),
    recall: z.number().nullable(),
    fire_rate: z.number().nullable(),
  })
  .openapi("LabeledMetrics", {
    description: "Decisions against effective labels; flagged = not approve (docs/feedback.md)",
  });

const BacktestResult = z
  .object({
    object: z.literal("policy_backtest"),
    policy: z.object({
      id: z.string(),
      status: z.enum(["draft", "active"]),
      version: z.int().nullable(),
    }),
    risk_model: z
      .object({ id: z.string(), status: z.string(), version: z.int().nullable() })
      .nullable()
      .openapi({ description: "The risk model replayed beside the policy; null for none" }),
    livemode: z.boolean(),
    from: z.string().nullable(),
    to: z.string().nullable(),
    limit: z.int(),
    replayed: z.int(),
    skipped: z.int().openapi({
      description: "Assessments of the range without recorded inputs: not replayed",
    }),
    changed: z.int(),
    has_more: z.boolean().openapi({ description: "The range holds more than was replayed" }),
    truncated: z.boolean().openapi({
      description: "The call stopped at `limits.rows` with more of the range left (= `has_more`)",
    }),
    limits: z
      .object({
        rows: z.int().openapi({ description: "Assessments this call could replay at most" }),
        max_rows: z.int(),
        aggregates: z.int().openapi({ description: "Window aggregates the policy counts per row" }),
        max_aggregate_evaluations: z.int(),
      })
      .openapi({
        description:
          "`rows` = min(`limit`, `max_rows`, `max_aggregate_evaluations` / `aggregates`)",
      }),
    matrix: z
      .object({ approve: DecisionCounts, review: DecisionCounts, deny: DecisionCounts })
      .openapi({ description: "`matrix[recorded decision][replayed decision]`: counts" }),
    rules: z.array(z.object({ id: z.string(), action: z.string(), hits: z.int() })).openapi({
      description: "Each rule of the list in order, with the replays it decided",
    }),
    unmatched: z.int().openapi({ description: "Replays that no rule matched" }),
    samples: z.array(
      z.object({
        assessment_id: z.string(),
        created: z.string(),
        decision: z.enum(DECISIONS),
        replayed_decision: z.enum(DECISIONS),
        rule: z.string().nullable(),
        reason: z.string(),
      }),
    ),
    labeled: z.object({ recorded: LabeledMetrics, policy: LabeledMetrics }).openapi({
      description:
        "The replayed assessments' labeled outcomes under the decisions recorded at the time " +
        "(the policy then active) and under this policy, side by side",
    }),
  })
  .openapi("PolicyBacktest");

const route = createRoute(
  guarded(
    "policy:read",
    {
      method: "post",
      path: "/v1/policies/{id}/backtest",
      tags: ["Policies"],
      summary: "Replay a policy (draft or active) over the org's assessment history",
      description:
        "Scores the assessments of the range (newest first, the credential's mode) again under " +
        "this policy, from the inputs recorded when they were made, and reports what would have " +
        "changed. Writes nothing.",
      request: { params: IdParam, body: jsonBody(BacktestRequest) },
      responses: {
        200: json(BacktestResult, "What the policy would have decided"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    { rateLimit: "expensive" },
  ),
);

export function registerPoliciesBacktest(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const body = c.req.valid("json");
    if (
      body.from !== undefined &&
      body.to !== undefined &&
      Date.parse(body.from) > Date.parse(body.to)
    ) {
      throw new ApiError("invalid_request", [{ path: "from", message: "must not be after to" }]);
    }
    return c.json(await backtestPolicy(c.var.tenant, id, body), 200);
  });
}
