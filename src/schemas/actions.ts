import { z } from "@hono/zod-openapi";
import { RowUuid } from "./agents";
import { Party } from "./audit";
import { DateTime, Metadata, plainText } from "./common";
import { StatusListMember, StatusListReference } from "./status-lists";
import { ACTION_DECISIONS, MANDATE_STATUSES, REASON_CODES } from "./vocabulary";

export const actionTags = ["Action authority"];

const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, "an ISO 4217 code")
  .openapi({ example: "USD" });

const Amount = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .openapi({ description: "ISO 4217 minor units" });

const Action = plainText(200).openapi({ example: "payment.capture" });

/** A resource the caller acts on: concrete, so no `*` (which only mandates' patterns use). */
const Resource = plainText(1000)
  .refine((resource) => !resource.includes("*"), "a concrete resource has no '*'")
  .openapi({ example: "merchant:acme/order-1" });

const ResourcePattern = plainText(1000)
  .refine((pattern) => !pattern.slice(0, -1).includes("*"), "'*' may only end a pattern")
  .openapi({
    description: "An exact resource, or a prefix ending in `*` matching every resource it starts",
    example: "merchant:acme/*",
  });

/** An amount comes with its currency, or neither is given. */
function amountWithCurrency(body: { amount?: number; currency?: string }) {
  return (body.amount === undefined) === (body.currency === undefined);
}
const AMOUNT_WITH_CURRENCY = {
  message: "amount and currency go together",
  path: ["currency"],
};

export const CreateActionMandate = z
  .object({
    agent_id: RowUuid.openapi({ description: "The agent this mandate gives authority to" }),
    principal_id: RowUuid.optional().openapi({
      description: "The principal the agent acts for; must be the agent's own",
    }),
    action: Action,
    resource: ResourcePattern,
    not_before: DateTime.optional().openapi({ description: "Default: now" }),
    expires_at: DateTime,
    currency: Currency.optional().openapi({ description: "Required with an amount limit" }),
    max_amount_per_use: Amount.optional(),
    max_amount_total: Amount.optional(),
    max_uses: z.number().int().min(1).max(2_147_483_647).optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .refine(
    (body) =>
      body.currency !== undefined ||
      (body.max_amount_per_use === undefined && body.max_amount_total === undefined),
    { message: "amount limits need a currency", path: ["currency"] },
  )
  .openapi("CreateActionMandateRequest");

export const ActionMandate = z
  .object({
    object: z.literal("action_mandate"),
    id: z.string(),
    agent_id: z.string(),
    principal_id: z.string().nullable(),
    action: z.string(),
    resource: z.string(),
    not_before: z.string(),
    expires_at: z.string(),
    currency: z.string().nullable(),
    max_amount_per_use: z.number().int().nullable(),
    max_amount_total: z.number().int().nullable(),
    max_uses: z.number().int().nullable(),
    metadata: z.record(z.string(), z.string()),
    created: z.string(),
    status: z.enum(MANDATE_STATUSES),
    uses: z.number().int().openapi({ description: "ALLOW decisions so far" }),
    amount_used: z.number().int().openapi({ description: "Sum of the ALLOWed amounts" }),
    revoked_at: z.string().nullable(),
    audit: z.object({ entry_id: z.string(), sequence: z.number().int() }),
  })
  .openapi("ActionMandate");

export const DecisionRequest = z
  .object({
    action: Action,
    resource: Resource,
    amount: Amount.optional(),
    currency: Currency.optional(),
    audience: RowUuid.optional().openapi({
      description:
        "The executor that will redeem the grant: the id of its API key (or of an owner's " +
        "user). Required for a grant",
    }),
    grant: z.boolean().default(true).openapi({ description: "Issue a grant with an ALLOW" }),
  })
  .strict()
  .refine(amountWithCurrency, AMOUNT_WITH_CURRENCY)
  .refine((body) => !body.grant || body.audience !== undefined, {
    message: "a grant needs an audience (or set grant to false)",
    path: ["audience"],
  })
  .openapi("ActionDecisionRequest");

const Reason = z.object({ code: z.enum(REASON_CODES), message: z.string() });

export const ActionDecision = z
  .object({
    object: z.literal("action_decision"),
    id: z.string(),
    mandate_id: z.string(),
    decision: z.enum(ACTION_DECISIONS),
    reasons: z.array(Reason).openapi({ description: "Why a DENY; empty for an ALLOW" }),
    agent: z.object({
      id: z.string(),
      status: z.string(),
      trust_score: z.number().int(),
      risk_tier: z.string(),
    }),
    action: z.string(),
    resource: z.string(),
    amount: z.number().int().nullable(),
    currency: z.string().nullable(),
    audience: z.string().nullable(),
    grant: z
      .object({
        id: z.string(),
        jws: z.string(),
        expires_at: z.string(),
        status_list: StatusListMember,
      })
      .nullable()
      .openapi({ description: "The single-use grant of an ALLOW (compact JWS, EdDSA)" }),
    created: z.string(),
    grant_status: z.enum(["issued", "redeemed", "expired"]).nullable(),
    audit: z.object({ entry_id: z.string(), sequence: z.number().int() }),
  })
  .openapi("ActionDecision");

export const RedeemRequest = z
  .object({
    grant: z.string().min(1).max(8192).openapi({ description: "The grant's compact JWS" }),
    action: Action,
    resource: Resource,
    amount: Amount.optional(),
    currency: Currency.optional(),
  })
  .strict()
  .refine(amountWithCurrency, AMOUNT_WITH_CURRENCY)
  .openapi("RedeemGrantRequest");

export const ActionRedemption = z
  .object({
    object: z.literal("action_redemption"),
    redeemed: z.literal(true),
    grant_id: z.string(),
    decision_id: z.string(),
    mandate_id: z.string(),
    action: z.string(),
    resource: z.string(),
    amount: z.number().int().nullable(),
    currency: z.string().nullable(),
    executor: Party,
    redeemed_at: z.string(),
    proves: z.string(),
    receipt_jws: z.string().openapi({ description: "The same facts, signed (EdDSA)" }),
    audit: z.object({ entry_id: z.string(), sequence: z.number().int() }),
  })
  .openapi("ActionRedemption");

const Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** The `iss` of every grant and redemption receipt the service signs. */
export const GRANT_ISSUER = "agent-risk";

const uuid = z.uuid();

/** The claims of a grant; anything else in a token that verifies is not a grant of ours. */
export const GrantClaims = z
  .object({
    iss: z.literal(GRANT_ISSUER),
    jti: uuid,
    org: uuid,
    decision: uuid,
    mandate: uuid,
    action: z.string(),
    resource: z.string(),
    amount: z.number().int().nullable(),
    currency: z.string().nullable(),
    aud: z.string(),
    iat: z.number().int(),
    exp: z.number().int(),
    status: z
      .object({ status_list: StatusListReference })
      .optional()
      .openapi({
        description:
          "Where the grant's status is published (draft-ietf-oauth-status-list §6.2): INVALID " +
          "once redeemed (single use) or once its mandate or agent is revoked, SUSPENDED while " +
          "its agent is. Absent on grants issued before the service published places",
      }),
  })
  .openapi("GrantClaims");

export type GrantClaims = z.infer<typeof GrantClaims>;

export const IncidentPack = z
  .object({
    object: z.literal("incident_pack"),
    version: z.literal(1),
    generated_at: z.string(),
    org_id: z.string(),
    decision: ActionDecision,
    mandate: ActionMandate,
    grant: z.object({ id: z.string(), jws: z.string(), claims: GrantClaims }).nullable(),
    redemption: z.union([ActionRedemption, z.null()]),
    ledger: z.array(
      z.object({
        entry: z.record(z.string(), z.unknown()).openapi({
          description: "The entry exactly as hashed: v, org_id, sequence, id, type, actor, …",
        }),
        prev_hash: Hex,
        hash: Hex,
        leaf_hash: Hex,
        payload: z.unknown().openapi({ description: "The object whose digest the entry holds" }),
        inclusion: z.object({
          leaf_index: z.number().int(),
          tree_size: z.number().int(),
          audit_path: z.array(Hex),
        }),
      }),
    ),
    checkpoint: z.object({
      log_id: z.string(),
      tree_size: z.number().int(),
      root_hash: Hex,
      time: z.string(),
      note: z.string(),
      jws: z.string(),
    }),
    keys: z.array(z.record(z.string(), z.string())),
    signature: z.string().openapi({
      description: "JWS with detached payload: the RFC 8785 form of the pack without `signature`",
    }),
  })
  .openapi("IncidentPack");
