import { z } from "@hono/zod-openapi";
import { DateTime, plainText } from "./common";
import { TestClockRef } from "./test-clocks";
import { FEEDBACK_LABELS } from "./vocabulary";

// Outcome feedback as the API takes and shows it (docs/feedback.md).

export const FeedbackLabel = z.enum(FEEDBACK_LABELS).openapi("FeedbackLabel", {
  description:
    "`fraud` and `chargeback` are confirmed bad outcomes, `legitimate` a confirmed good one, " +
    "`dispute` is pending until a later `fraud` or `chargeback`, `refund` is neutral",
});

export const CreateFeedback = z
  .object({
    label: FeedbackLabel,
    occurred_at: DateTime.optional().openapi({
      description:
        "When the outcome happened; defaults to now. At most 5 minutes ahead; under a test " +
        "clock, defaults to the clock's time and may not be after it.",
    }),
    source: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, "lowercase letters, digits and _ . : - (1 to 64)")
      .optional()
      .openapi({ description: "Where the label came from, e.g. `stripe_dispute`, `analyst`" }),
    note: plainText(1000).optional(),
    test_clock: TestClockRef.optional().openapi({
      description:
        "Label at a test clock's time (test keys only; live: 400 naming `test_clock`): the label " +
        "is received, and counts from, the clock's `frozen_time`, and `occurred_at` defaults " +
        "to it. An unknown clock is 400 naming `test_clock`",
    }),
  })
  .strict()
  .openapi("CreateAssessmentFeedback");

export const IdempotencyHeader = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional()
    .openapi({
      param: { name: "idempotency-key", in: "header" },
      description: "A retry with the same key (within 24 hours) answers the first label",
    }),
});

export const AssessmentFeedback = z
  .object({
    id: z.string(),
    object: z.literal("assessment_feedback"),
    assessment_id: z.string(),
    livemode: z.boolean(),
    label: FeedbackLabel,
    occurred_at: z.string(),
    source: z.string().nullable(),
    note: z.string().nullable(),
    created: z.string(),
    created_by: z
      .object({ type: z.string(), id: z.string() })
      .nullable()
      .openapi({ description: "The API key or person that sent the label" }),
  })
  .openapi("AssessmentFeedback");

/** At most this many labels per assessment: the list answers them all in one page. */
export const MAX_LABELS_PER_ASSESSMENT = 100;

export const AssessmentFeedbackList = z
  .object({
    object: z.literal("list"),
    data: z.array(AssessmentFeedback).openapi({ description: "Oldest first, all of them" }),
    has_more: z.literal(false),
    next_cursor: z.null(),
    // A union, not `.nullable()`: the generator renders a nullable reference as an `allOf` no
    // null satisfies.
    effective_label: z.union([FeedbackLabel, z.null()]).openapi({
      description:
        "The latest label that is not `dispute` (by occurred_at, then creation); null if none",
    }),
    pending: z.boolean().openapi({
      description: "A `dispute` is the latest label: an outcome is awaited",
    }),
  })
  .openapi("AssessmentFeedbackList");
