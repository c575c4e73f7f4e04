import { z } from "@hono/zod-openapi";
import { PageQuery, plainText } from "./common";
import { DELIVERY_STATUSES, ENDPOINT_STATUSES, EVENT_TYPES } from "./vocabulary";

export const webhookTags = ["Webhooks"];

const EventTypes = z
  .array(z.enum(EVENT_TYPES))
  .max(EVENT_TYPES.length)
  .superRefine((types, ctx) => {
    types.forEach((type, index) => {
      if (types.indexOf(type) !== index) {
        ctx.addIssue({ code: "custom", path: [index], message: `repeats ${type}` });
      }
    });
  })
  .openapi({ description: "Event types to receive; empty (or absent) for every type" });

/** Printable ASCII without spaces: it travels as an HTTP header value. */
const Token = z
  .string()
  .min(16)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces (it is sent as a header)")
  .openapi({
    description:
      "A shared secret sent as `x-service-token` with every delivery; never returned. " +
      "The signature is what proves a delivery; the token is a second, simpler check",
    example: "tok_5f2b8c1e9a7d4e3f",
  });

export const CreateWebhookEndpoint = z
  .object({
    url: z.string().max(2048).openapi({ example: "https://example.com/hooks/agent-risk" }),
    eventTypes: EventTypes.optional(),
    event_types: EventTypes.optional().openapi({ description: "The same as `eventTypes`" }),
    token: Token.optional(),
    description: plainText(500).optional(),
  })
  .strict()
  .refine(
    (body) =>
      body.eventTypes === undefined ||
      body.event_types === undefined ||
      JSON.stringify([...body.eventTypes].sort()) === JSON.stringify([...body.event_types].sort()),
    { message: "eventTypes and event_types disagree; send one", path: ["event_types"] },
  )
  .openapi("CreateWebhookEndpointRequest");

export const WebhookEndpoint = z
  .object({
    object: z.literal("webhook_endpoint"),
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.enum(EVENT_TYPES)).openapi({ description: "Empty: every type" }),
    description: z.string().nullable(),
    token_set: z.boolean().openapi({ description: "Whether deliveries carry x-service-token" }),
    livemode: z.boolean().openapi({ description: "Receives live events, or test events only" }),
    status: z.enum(ENDPOINT_STATUSES),
    disabled_reason: z.enum(["gone"]).nullable().openapi({
      description:
        "`gone`: disabled by a 410 before 410 was retried like any failure; no longer set",
    }),
    created: z.string(),
    disabled_at: z.string().nullable(),
    previous_secret_expires_at: z.string().nullable().openapi({
      description:
        "After a secret rotation, until when deliveries are signed with the previous secret too",
    }),
  })
  .openapi("WebhookEndpoint");

/** The Standard Webhooks signing secret, in the answers that make one: shown once. */
const EndpointSecret = z.string().openapi({
  description:
    "The endpoint's Standard Webhooks signing secret (`whsec_` + base64 of 32 bytes), shown " +
    "only in this answer: verify `webhook-signature` with it",
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4iuY2Eobd5s=",
});

export const CreatedWebhookEndpoint = WebhookEndpoint.extend({ secret: EndpointSecret }).openapi(
  "CreatedWebhookEndpoint",
);

/** At most a week of overlap, as Stripe's dashboard offers. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

export const RotateWebhookSecret = z
  .object({
    expires_in: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECRET_OVERLAP_SECONDS)
      .default(24 * 3600)
      .openapi({
        description:
          "Seconds the previous secret keeps signing beside the new one (default 86400); 0 " +
          "retires it at once",
      }),
  })
  .strict()
  .openapi("RotateWebhookSecretRequest");

export const DeletedWebhookEndpoint = z
  .object({ object: z.literal("webhook_endpoint"), id: z.string(), deleted: z.literal(true) })
  .openapi("DeletedWebhookEndpoint");

const Attempt = z
  .object({
    number: z.number().int().openapi({ description: "1 for the first attempt" }),
    time: z.string().openapi({ description: "When the request was sent" }),
    status_code: z.number().int().nullable().openapi({ description: "Null: no answer" }),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    next_retry_at: z.string().nullable().openapi({ description: "Null: no retry follows" }),
  })
  .openapi("WebhookAttempt");

export const WebhookDelivery = z
  .object({
    object: z.literal("webhook_delivery"),
    id: z.string().openapi({ description: "The delivery body's `id`, stable across retries" }),
    endpoint_id: z.string(),
    event: z.object({ id: z.string(), type: z.enum(EVENT_TYPES), created: z.number().int() }),
    status: z.enum(DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    attempts: z.array(Attempt),
    next_attempt_at: z.string().nullable(),
    dead_lettered_at: z.string().nullable(),
    created: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("WebhookDelivery");

export const ListDeliveriesQuery = PageQuery.extend({
  status: z.enum(DELIVERY_STATUSES).optional(),
});

export const Dispatch = z
  .object({
    object: z.literal("webhook_dispatch"),
    enqueued: z.number().int().openapi({ description: "Deliveries sent to the queue now" }),
    has_more: z.boolean().openapi({ description: "More are pending: call again" }),
  })
  .openapi("WebhookDispatch");
