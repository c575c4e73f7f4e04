import { z } from "@hono/zod-openapi";
import { ACTION_KINDS } from "./vocabulary";

/** A mandate as an assessment stored it: `GET /v1/mandates` and `/v1/mandates/{id}`. */
export const Mandate = z
  .object({
    object: z.literal("mandate"),
    id: z.string(),
    assessment_id: z.string(),
    kind: z.enum(ACTION_KINDS),
    mandate_type: z.string().nullable(),
    vct: z.string().nullable(),
    content_hash: z.string().openapi({ description: "The idempotency hash of the request" }),
    mandate_hash: z.string().openapi({
      description: "`sha256:<hex>` of the RFC 8785 mandate, as bound by the Risk Payload",
    }),
    mandate: z.record(z.string(), z.unknown()).openapi({
      additionalProperties: true,
      description:
        "As submitted; once the agent's principal is erased, each member named in " +
        "`erased_fields` reads null",
    }),
    livemode: z.boolean(),
    created: z.string(),
    erased_at: z.string().nullable().openapi({
      description: "When the principal's personal data was erased from this mandate, or null",
    }),
    erased_fields: z.array(z.string()).openapi({
      description: "The members of `mandate` erased then (empty when none were)",
    }),
  })
  .openapi("Mandate");
