import { z } from "@hono/zod-openapi";
import { RowUuid } from "./agents";
import { Metadata, PageQuery, withUnicodePattern } from "./common";
import { BREAK_REASONS, DECISIONS, SESSION_EVENT_TYPES } from "./vocabulary";

export const sessionTags = ["Sessions"];

/** Events in one append. */
export const MAX_EVENTS_PER_BATCH = 500;
/** A session is a bounded unit of evidence: `/verify` re-checks all of it in one request. */
export const MAX_EVENTS_PER_SESSION = 10_000;
/** A detached compact JWS over an event. */
export const MAX_SIGNATURE_LENGTH = 4096;

const Hash = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits")
  .openapi({ example: "0".repeat(64) });

// Hashed as sent, so exactly one spelling of each value is accepted: the one stored and re-hashed.
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EventTime = z
  .string()
  .regex(ISO_MS, "must be ISO 8601 UTC with milliseconds, e.g. 2026-01-01T00:00:00.000Z")
  .refine((time) => {
    const ms = Date.parse(time);
    return Number.isFinite(ms) && ms >= 0 && new Date(ms).toISOString() === time;
  }, "must be a real instant from 1970 on")
  .openapi({ example: "2026-01-01T00:00:00.000Z" });

const LowerUuid = z
  .string()
  .regex(
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    "must be a lowercase uuid",
  );

// Names only: no control characters or unpaired surrogates, and never trimmed (it is hashed).
const ExternalId = withUnicodePattern(
  z.string().min(1).max(200),
  /^[^\p{Cc}\p{Cs}]+$/u,
  "must not contain control characters or lone surrogates",
).openapi({ description: "The agent's own name for the session", example: "run-2026-01-01-42" });

export const SessionEventInput = z
  .object({
    sequence: z.number().int().min(1).max(MAX_EVENTS_PER_SESSION),
    type: z.enum(SESSION_EVENT_TYPES),
    time: EventTime,
    payload_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 lowercase hex>")
      .openapi({ description: "The digest of the event's payload; the payload is never sent" }),
    prev_hash: Hash,
    hash: Hash.openapi({ description: "hex(SHA-256(UTF-8(JCS(chained event)))), recomputed" }),
    assessment_id: LowerUuid.optional().openapi({
      description: "An assessment of this org and mode the event acted on",
    }),
    signature: z
      .string()
      .max(MAX_SIGNATURE_LENGTH)
      .regex(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/, "must be a detached compact JWS (header..sig)")
      .optional()
      .openapi({
        description: "Detached compact JWS over UTF-8(JCS(chained event))",
        example: "eyJhbGciOiJFZERTQSJ9..bm90LWEtcmVhbC1zaWduYXR1cmU",
      }),
  })
  .strict()
  .openapi("SessionEventInput");

export const CreateSession = z
  .object({
    agent_id: RowUuid,
    external_id: ExternalId,
    require_signatures: z.boolean().default(false),
    metadata: Metadata.default({}),
    events: z.array(SessionEventInput).max(MAX_EVENTS_PER_BATCH).default([]),
  })
  .strict()
  .openapi("CreateSessionRequest");

export const AppendSessionEvents = z
  .object({
    events: z.array(SessionEventInput).min(1).max(MAX_EVENTS_PER_BATCH),
  })
  .strict()
  .openapi("AppendSessionEventsRequest");

const Audit = z.object({ entry_id: z.string(), sequence: z.number().int() });
const HeadSchema = z.object({ sequence: z.number().int(), hash: z.string() });

export const Session = z
  .object({
    object: z.literal("session"),
    id: z.string(),
    agent_id: z.string(),
    external_id: z.string(),
    require_signatures: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    events: z.number().int().openapi({ description: "How many events the session holds" }),
    signed_events: z.number().int(),
    head: HeadSchema.nullable().openapi({ description: "The last event; null when empty" }),
    created: z.string(),
    updated: z.string(),
    livemode: z.boolean(),
    audit: Audit.openapi({ description: "The latest ledger entry that changed the session" }),
  })
  .openapi("Session");

export const SessionDetail = Session.extend({
  verification: z
    .object({
      status: z.literal("verified").openapi({
        description: "Every batch passed verification when it was accepted (see `basis`)",
      }),
      basis: z.literal("ingestion").openapi({
        description:
          "What `status` rests on: each batch was verified (chain, signatures, head) when it " +
          "was accepted; the stored rows are not re-read for this answer. The stored rows are " +
          "re-checked only by the verify route (`verify_url`)",
      }),
      events: z.number().int(),
      signed_events: z.number().int(),
      head: HeadSchema.nullable(),
      verified_at: z.string().openapi({ description: "When the latest batch was verified" }),
      verify_url: z.string().openapi({
        description:
          "Relative path of GET /v1/sessions/{id}/verify, the only route that re-checks the " +
          "stored rows (chain, signatures, head and ledger)",
        example: "/v1/sessions/0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e/verify",
      }),
    })
    .openapi({
      description:
        "The verification done at ingestion, not a re-check of the stored rows: for that, " +
        "call `verify_url`",
    }),
  assessments: z
    .array(
      z.object({
        id: z.string(),
        decision: z.enum(DECISIONS),
        risk_score: z.number().int(),
        created: z.string(),
      }),
    )
    .openapi({ description: "Assessments the events link, newest first (at most 100)" }),
}).openapi("SessionDetail");

export const SessionEvent = z
  .object({
    object: z.literal("session_event"),
    session_id: z.string(),
    sequence: z.number().int(),
    type: z.enum(SESSION_EVENT_TYPES),
    time: z.string(),
    payload_digest: z.string(),
    prev_hash: z.string(),
    hash: z.string(),
    assessment_id: z.string().nullable(),
    signature: z.string().nullable(),
    kid: z.string().nullable().openapi({ description: "Thumbprint of the agent key that signed" }),
    received_at: z.string(),
    livemode: z.boolean(),
    audit: Audit.openapi({ description: "The ledger entry of the batch that brought the event" }),
  })
  .openapi("SessionEvent");

const Break = z.object({
  sequence: z.number().int(),
  index: z.number().int(),
  reason: z.enum(BREAK_REASONS),
  expected: z.unknown().optional(),
  actual: z.unknown().optional(),
});

export const SessionVerification = z
  .object({
    object: z.literal("session_verification"),
    session_id: z.string(),
    ok: z.boolean(),
    checked: z.number().int(),
    signed_events: z.number().int(),
    head: HeadSchema.nullable(),
    first_break: Break.nullable(),
    verified_at: z.string(),
    livemode: z.boolean(),
  })
  .openapi("SessionVerification");

/** Strict: an unknown parameter (a typo such as `agent`) is a 400 naming it, never ignored. */
export const ListSessionsQuery = PageQuery.extend({
  agent_id: RowUuid.optional(),
  external_id: ExternalId.optional(),
}).strict();

export const ListEventsQuery = PageQuery.strict();
