import { z } from "@hono/zod-openapi";
import { AssessmentSummary } from "./assessments";
import { DateTime, PageQuery, plainText } from "./common";
import { AGENT_STATUSES, CAP_PERIODS } from "./vocabulary";

/** The states of a review item: open until a person resolves it or its SLA expires it. */
export const REVIEW_STATUSES = ["open", "resolved", "expired"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The decisions a review can end with: availability is never approval, so expiry denies. */
export const REVIEW_DECISIONS = ["approve", "deny"] as const;

/** Why an item was closed: the ledger's and the webhook's name for each way. */
export const REVIEW_REASONS = ["review.resolved", "review.expired"] as const;

/** The SLA an org without settings has: a day, then the item expires as `deny`. */
export const REVIEW_SLA_DEFAULT_SECONDS = 86_400;
/** The SLA's bounds: a minute (the Cron sweep's period) to thirty days. */
export const REVIEW_SLA_MIN_SECONDS = 60;
export const REVIEW_SLA_MAX_SECONDS = 2_592_000;

/**
 * What approving a review of a credential-backed assessment spends, kept on the item when it
 * opens: the same terms the ledger object judges an automated approval by (assess/commit.ts).
 */
export const ReviewSpend = z.object({
  /** The consent: base64url(SHA-256(the root's `header.payload`)) (credentials/spend.ts). */
  root: z.string(),
  /**
   * The digests of the root JWS's texts that verify, by which spends recorded before keys named
   * content were kept. Absent on items opened before then, whose `root` is such a digest.
   */
  rootSpellings: z.array(z.string()).optional(),
  transaction: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  budgets: z.array(z.object({ max: z.number(), currency: z.string() })),
  maxOccurrences: z.number().int().nullable(),
  /** Period caps (`payment.cumulative`), minor units; absent on items opened before them. */
  caps: z
    .array(z.object({ max: z.number(), currency: z.string(), period: z.enum(CAP_PERIODS) }))
    .optional(),
  /**
   * Epoch ms the spend counts at in its caps' periods: the assessment's time (a test clock's
   * under one). Absent on items opened before caps: the approval's time then.
   */
  at: z.number().optional(),
});
export type ReviewSpend = z.infer<typeof ReviewSpend>;

/**
 * What approving a review of a verified AP2 credential checks again, kept on the item when it
 * opens (the chain itself is not stored): the trust the verdict rested on, and the standing of
 * who acted as the verdict saw it. Approving refuses what is worse now (docs/reviews.md,
 * "Re-checked on approval").
 */
export const ReviewRecheck = z.object({
  /** The credential issuer whose key verified the root, and that key's RFC 7638 thumbprint. */
  issuer: z.string(),
  rootKey: z.string(),
  /** RFC 7638 thumbprint of the key that signed the last hop (the holder). */
  holder: z.string(),
  /** The holder key's registration as the verdict saw it. */
  holderKey: z.enum(["active", "unregistered", "revoked"]),
  /** The status of the item's agent (`agent_id`) as the verdict saw it; null without an agent. */
  agentStatus: z.enum(AGENT_STATUSES).nullable(),
  /**
   * The chain's time window, Unix seconds, as `checkValidity` reads it over every hop's claims
   * and every mandate: the latest `iat` or `nbf`, the earliest `exp`; null where none has one.
   */
  notBefore: z.number().nullable(),
  notAfter: z.number().nullable(),
  /**
   * The assessed (last) mandate's own `exp`, Unix seconds, which the risk model holds without
   * skew (`mandate_expired`, src/assess/mandate-bounds.ts); null when it has none.
   */
  mandateExpiresAt: z.number().nullable(),
});
export type ReviewRecheck = z.infer<typeof ReviewRecheck>;

/**
 * The item a `review` assessment opens, as it travels with the assessment's write. `recheck` is
 * null without a verified credential, and absent from plans a ledger object kept from before
 * it existed (such an item cannot be re-checked: approving it is refused).
 */
export const ReviewOpening = z.object({
  id: z.string(),
  spend: ReviewSpend.nullable(),
  recheck: ReviewRecheck.nullable().optional(),
});
export type ReviewOpening = z.infer<typeof ReviewOpening>;

const Party = z.object({ type: z.string(), id: z.string() }).openapi("ReviewResolver", {
  description: "`user` (a session: the person), `api_key`, or `system` (the SLA sweep)",
});

const ResolvedPayload = z
  .object({
    jws: z.string(),
    kid: z.string(),
    alg: z.literal("EdDSA"),
    verify_url: z.string(),
  })
  .openapi("ResolvedRiskPayload", {
    description:
      "The resolution's own signed Risk Payload (docs/reviews.md); the original stays. Its " +
      "claims are a `RiskPayloadClaims` with a `resolution`",
  });

/** The Outcome's `refinement`: the review a `review` assessment opened, and how it ended. */
export const Refinement = z
  .object({
    status: z.enum(REVIEW_STATUSES),
    review_id: z.string(),
    decision: z.enum(REVIEW_DECISIONS).nullable(),
    reason: z.enum(REVIEW_REASONS).nullable(),
    resolved_at: z.string().nullable(),
    resolved_by: Party.nullable(),
    risk_payload: ResolvedPayload.nullable(),
  })
  .openapi("Refinement", {
    description:
      "Null unless the decision is `review`; then the review item and, once closed, the " +
      "human (or expired) decision and its signed payload (docs/reviews.md)",
  });
export type Refinement = z.infer<typeof Refinement>;

export const reviewTags = ["Reviews"];

export const Review = z
  .object({
    object: z.literal("review"),
    id: z.string(),
    created: z.string(),
    livemode: z.boolean(),
    assessment_id: z.string(),
    agent_id: z.string().nullable(),
    status: z.enum(REVIEW_STATUSES),
    expires_at: z.string(),
    original_decision: z.literal("review"),
    decision: z.enum(REVIEW_DECISIONS).nullable(),
    reason: z.enum(REVIEW_REASONS).nullable(),
    note: z.string().nullable(),
    resolved_at: z.string().nullable(),
    resolved_by: Party.nullable(),
    credential_backed: z.boolean().openapi({
      description: "Approving spends under a verified AP2 credential (single use, budget)",
    }),
    risk_payload: ResolvedPayload.nullable(),
    audit_entry_id: z.string().nullable(),
    /** The reviewed assessment as GET /v1/assessments lists it (one shared component). */
    assessment: AssessmentSummary,
  })
  .openapi("Review");
export type Review = z.infer<typeof Review>;

export const ResolveReviewBody = z
  .strictObject({
    decision: z.enum(REVIEW_DECISIONS),
    note: plainText(1000).optional(),
  })
  .openapi("ResolveReview");
export type ResolveReviewBody = z.infer<typeof ResolveReviewBody>;

export const ListReviewsQuery = PageQuery.extend({
  status: z.enum(REVIEW_STATUSES).optional(),
  agent: z.uuid().optional(),
  from: DateTime.optional().openapi({ description: "opened at or after (ISO 8601)" }),
  to: DateTime.optional().openapi({ description: "opened at or before (ISO 8601)" }),
  order: z
    .enum(["asc", "desc"])
    .default("asc")
    .openapi({ description: "`asc` (default): the oldest waiting first" }),
});

export const ReviewSettings = z
  .object({
    object: z.literal("review_settings"),
    sla_seconds: z.number().int(),
    default: z.boolean().openapi({ description: "True while the org has not set its own" }),
  })
  .openapi("ReviewSettings");

export const UpdateReviewSettingsBody = z
  .strictObject({
    sla_seconds: z.number().int().min(REVIEW_SLA_MIN_SECONDS).max(REVIEW_SLA_MAX_SECONDS),
  })
  .openapi("UpdateReviewSettings");
