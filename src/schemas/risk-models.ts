import { z } from "@hono/zod-openapi";
import { DateTime, PageQuery } from "./common";
import { DECISIONS, RISK_MODEL_STATUSES } from "./vocabulary";

// Learned risk models (docs/risk-model.md, "The API: training, activating, shadowing a model"):
// the training request, the model object, its parameters and its shadow report.

const DAY_SECONDS = 86_400;
export const DEFAULT_LABEL_DELAY_SECONDS = 7 * DAY_SECONDS;
export const DEFAULT_TRAINING_WINDOW_SECONDS = 7 * DAY_SECONDS;
export const DEFAULT_REVIEW_PRECISION = 0.25;
export const DEFAULT_DENY_PRECISION = 0.9;
const MAX_LABEL_DELAY_SECONDS = 90 * DAY_SECONDS;
const MAX_TRAINING_WINDOW_SECONDS = 365 * DAY_SECONDS;

const precision = (what: string, fallback: number) =>
  z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .openapi({
      description:
        `The precision the ${what} threshold is set to reach on the held-out slice ` +
        `(default ${fallback})`,
    });

export const CreateRiskModel = z
  .object({
    as_of: DateTime.optional().openapi({
      description:
        "Train on what was known at this instant (default now; never in the future). " +
        "Not with `test_clock`",
    }),
    test_clock: z.uuid().optional().openapi({
      description: "Test keys only: train as of this test clock's frozen time. Not with `as_of`",
    }),
    label_delay: z
      .number()
      .int()
      .min(0)
      .max(MAX_LABEL_DELAY_SECONDS)
      .optional()
      .openapi({
        description:
          "Seconds a fraud label may take to arrive (default 7 days): payments younger than " +
          "this without a label are left out, and the payee risk features wait this long",
      }),
    training_window: z
      .number()
      .int()
      .min(3_600)
      .max(MAX_TRAINING_WINDOW_SECONDS)
      .optional()
      .openapi({
        description:
          "Seconds of mature payments trained on (default 7 days): the window ends one label " +
          "delay before `as_of`",
      }),
    review_precision: precision("review", DEFAULT_REVIEW_PRECISION),
    deny_precision: precision("deny", DEFAULT_DENY_PRECISION),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.as_of !== undefined && body.test_clock !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["test_clock"],
        message: "give as_of or test_clock, not both",
      });
    }
  })
  .openapi("CreateRiskModelRequest");
export type CreateRiskModel = z.infer<typeof CreateRiskModel>;

export const RiskModelCounts = z
  .object({
    events_considered: z.int().openapi({ description: "Payments before `as_of` read" }),
    rows: z.int().openapi({ description: "Payments trained and measured on" }),
    positives: z.int().openapi({ description: "Rows with a fraud or chargeback label known" }),
    negatives: z.int(),
    left_out_unlabeled: z.int().openapi({
      description: "Payments younger than the label delay with no label yet: left out",
    }),
    held_out: z.object({ rows: z.int(), positives: z.int() }).openapi({
      description: "The latest slice of mature rows every metric is measured on",
    }),
  })
  .openapi("RiskModelCounts");

const ThresholdReport = z.object({
  probability: z.number().openapi({
    description: "Alerts are probability ≥ this; 1 means the target precision was never reached",
  }),
  precision: z.number().nullable(),
  recall: z.number(),
  fire_rate: z.number(),
});

const CaughtAmount = z.object({
  currency: z.string().nullable().openapi({ description: "ISO 4217; null when unknown" }),
  fraud: z.number().openapi({ description: "Fraud amount, minor units" }),
  good: z.number().openapi({ description: "Amount of good payments, minor units" }),
});

const Caught = z
  .object({
    slice: z.object({
      payments: z.int(),
      frauds: z.int(),
      amounts: z.array(CaughtAmount).openapi({
        description: "The slice's fraud and good amounts per currency (at most 10 currencies)",
      }),
    }),
    thresholds: z.array(
      z.object({
        probability: z.number().openapi({ description: "Alerts are probability ≥ this" }),
        alerts: z.int(),
        frauds: z.int().openapi({ description: "Frauds among the alerts: caught" }),
        goods: z.int().openapi({ description: "Good payments among the alerts: stopped" }),
        amounts: z.array(CaughtAmount).openapi({
          description: "Fraud amount caught and good amount stopped, per currency",
        }),
      }),
    ),
  })
  .openapi({
    description:
      "What the model would have caught on the held-out slice at each probability of a fixed " +
      "grid (0.01 … 0.99) and at the review and deny thresholds, ascending",
  });

export const RiskModelMetrics = z
  .object({
    auc_roc: z.number(),
    average_precision: z.number(),
    card_precision_at_100: z.number(),
    brier_score: z.number(),
    calibration: z.array(
      z.object({
        from: z.number(),
        to: z.number(),
        count: z.int(),
        mean_probability: z.number(),
        fraud_rate: z.number(),
      }),
    ),
    thresholds: z.object({ review: ThresholdReport, deny: ThresholdReport }),
    roc: z
      .array(z.object({ threshold: z.number(), fpr: z.number(), tpr: z.number() }))
      .optional()
      .openapi({
        description:
          "The ROC curve on the held-out slice, highest threshold first, at most about 100 " +
          "points (from (0, 0), left implicit). Absent for models trained before it was reported",
      }),
    pr: z
      .array(z.object({ threshold: z.number(), precision: z.number(), recall: z.number() }))
      .optional()
      .openapi({
        description:
          "The precision–recall curve on the held-out slice, highest threshold first, at most " +
          "about 100 points. Absent for models trained before it was reported",
      }),
    caught: Caught.optional(),
  })
  .openapi("RiskModelMetrics");
export type RiskModelMetrics = z.infer<typeof RiskModelMetrics>;

export const RiskModel = z
  .object({
    id: z.string(),
    object: z.literal("risk_model"),
    livemode: z.boolean(),
    status: z.enum(RISK_MODEL_STATUSES),
    version: z
      .int()
      .nullable()
      .openapi({
        description:
          "Assigned at each activation from the org's counter (an earlier model activated " +
          "again gets a new one); null for a model never activated",
      }),
    created: z.string(),
    as_of: z.string(),
    test_clock: z.string().nullable(),
    label_delay: z.int().openapi({ description: "Seconds" }),
    training_window: z.int().openapi({ description: "Seconds" }),
    targets: z.object({ review_precision: z.number(), deny_precision: z.number() }),
    counts: RiskModelCounts.nullable(),
    features: z
      .array(z.object({ name: z.string(), importance: z.number() }))
      .nullable()
      .openapi({ description: "Share of the model's total split gain, largest first" }),
    metrics: RiskModelMetrics.nullable(),
    failure_reason: z.string().nullable(),
    trained_at: z.string().nullable(),
    activated_at: z.string().nullable(),
    card: z
      .string()
      .nullable()
      .openapi({
        description:
          "The model card of the current status: a compact JWS (EdDSA, `typ` " +
          "`risk-model-card+jwt`) by the service's key (GET /.well-known/jwks.json)",
      }),
  })
  .openapi("RiskModel");
export type RiskModel = z.infer<typeof RiskModel>;

export const ListRiskModelsQuery = PageQuery.extend({
  status: z.enum(RISK_MODEL_STATUSES).optional(),
});
export type ListRiskModelsQuery = z.infer<typeof ListRiskModelsQuery>;

const Tree = z.object({
  feature: z.array(z.int()),
  threshold: z.array(z.number().nullable()),
  left: z.array(z.int()),
  right: z.array(z.int()),
  value: z.array(z.number()),
});

export const RiskModelParams = z
  .object({
    object: z.literal("risk_model_params"),
    model_id: z.string(),
    params_digest: z.string().openapi({
      description: "`sha256:<hex>` of the RFC 8785 form of `params`, as the model card states",
    }),
    params: z.object({
      kind: z.literal("boosted_trees"),
      width: z.int(),
      base: z.number(),
      trees: z.array(Tree),
      importance: z.array(z.number()),
    }),
  })
  .openapi("RiskModelParams");
export type RiskModelParams = z.infer<typeof RiskModelParams>;

const Counts = z.object({ approve: z.int(), review: z.int(), deny: z.int() });

const Catch = z.object({
  alerts: z.int().openapi({ description: "Assessments at this level or above" }),
  labeled_alerts: z.int(),
  frauds: z.int().openapi({ description: "Alerts with a fraud or chargeback label" }),
  precision: z.number().nullable().openapi({
    description: "frauds / labeled_alerts; null without a labeled alert",
  }),
  recall: z.number().nullable().openapi({
    description: "frauds / every labeled fraud of the window; null without one",
  }),
});

export const RiskModelShadowReport = z
  .object({
    object: z.literal("risk_model_shadow_report"),
    model: z.object({
      id: z.string(),
      status: z.enum(RISK_MODEL_STATUSES),
      version: z.int().nullable(),
    }),
    livemode: z.boolean(),
    from: z.string(),
    to: z.string(),
    shadowed: z.int().openapi({ description: "Assessments of the window this model shadowed" }),
    agreed: z.int(),
    disagreed: z.int(),
    matrix: z
      .object({ approve: Counts, review: Counts, deny: Counts })
      .openapi({ description: "`matrix[actual decision][model's decision]`: counts" }),
    labels: z.object({ fraud: z.int(), legitimate: z.int(), unlabeled: z.int() }).openapi({
      description:
        "The window's shadowed assessments by label known now: fraud (a fraud or chargeback " +
        "label), legitimate (legitimate or refund), unlabeled",
    }),
    model_catch: z.object({ review: Catch, deny: Catch }).openapi({
      description: "What the model would have caught: review = review or deny, deny = deny",
    }),
    actual_catch: z
      .object({ review: Catch, deny: Catch })
      .openapi({ description: "The same for the decisions actually made" }),
    samples: z.array(
      z.object({
        assessment_id: z.string(),
        created: z.string(),
        decision: z.enum(DECISIONS),
        model_decision: z.enum(DECISIONS),
        probability: z.number(),
        label: z.enum(["fraud", "legitimate", "unlabeled"]),
      }),
    ),
  })
  .openapi("RiskModelShadowReport");
export type RiskModelShadowReport = z.infer<typeof RiskModelShadowReport>;
