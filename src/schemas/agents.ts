import { z } from "@hono/zod-openapi";
import { Metadata, PageQuery, plainText } from "./common";
import { StatusListMember } from "./status-lists";
import { AGENT_STATUSES, CARD_STATUSES, RISK_TIERS } from "./vocabulary";

export const agentTags = ["Agents"];

/**
 * A uuid in a request body that names a row, lowercased: the form Postgres answers with, so it
 * compares with the ids read back and keys idempotency the same whatever case the caller wrote.
 */
export const RowUuid = z.uuid().toLowerCase();

export const CardStatus = z
  .object({
    object: z.literal("agent_card_status"),
    agent_id: z.string(),
    status: z.enum(CARD_STATUSES).openapi({
      description:
        "`verified`: signed by one of the agent's active keys; `unverified`: no card, or no " +
        "signature by a registered active key; `invalid`: malformed card or a failing signature",
    }),
    reasons: z.array(
      z.object({ code: z.string(), message: z.string(), path: z.string().optional() }),
    ),
    protocol_version: z.string().nullable(),
    digest: z.string().nullable().openapi({
      description: "`sha256:<hex>` of the RFC 8785 canonical card without `signatures`",
    }),
    name: z.string().nullable(),
    url: z.string().nullable().openapi({ description: "The agent's service URL from the card" }),
    source_url: z.string().nullable().openapi({ description: "Where the card was fetched from" }),
    signatures: z.array(
      z.object({
        index: z.number().int(),
        kid: z.string().nullable(),
        alg: z.string().nullable(),
        status: z.string(),
        message: z.string(),
        form: z
          .enum(["spec", "sdk", "received"])
          .nullable()
          .openapi({
            description:
              "What a valid signature verified over (kept if its key is revoked later): `spec` " +
              "the form the card's version specifies (0.3: the card as received; 1.0: A2A " +
              "§8.4.1, fields at their default value omitted unless REQUIRED or `optional`), " +
              "`sdk` (1.0) the form the official A2A SDKs sign, which also drops empty REQUIRED " +
              "and `optional` fields and empty values at any depth, and covers no field outside " +
              "the 1.0 card (the message names what it leaves out), `received` a card of no " +
              "known version as received; `null` for a signature that did not verify",
          }),
        diagnosis: z
          .enum(["signed_as_received", "matches_no_form"])
          .nullable()
          .openapi({
            description:
              "Why a signature failed the cryptographic check: `signed_as_received`, it " +
              "verifies over the card exactly as received but over no canonical form, so the " +
              "signer skipped the 1.0 default-value rules and the card is as it was signed; " +
              "`matches_no_form`, it verifies over nothing, so the card changed after signing " +
              "or other bytes or another key were signed. `null` otherwise",
          }),
      }),
    ),
    checked_at: z.string().nullable(),
    verified_at: z.string().nullable(),
  })
  .openapi("AgentCardStatus");

export const Agent = z
  .object({
    object: z.literal("agent"),
    id: z.string(),
    principal_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    status: z.enum(AGENT_STATUSES),
    trust_score: z.number().int().min(0).max(100),
    risk_tier: z.enum(RISK_TIERS),
    evidence: z.object({
      card_status: z.enum(CARD_STATUSES),
      active_keys: z.number().int(),
      approvals: z.number().int(),
      reviews: z.number().int(),
      denials: z.number().int(),
      suspensions: z.number().int(),
      confirmed_frauds: z.number().int().openapi({
        description: "Live assessments labeled fraud or chargeback (docs/feedback.md)",
      }),
      confirmed_legitimate: z.number().int().openapi({
        description: "Live reviewed assessments labeled legitimate (docs/feedback.md)",
      }),
    }),
    card: z
      .object({
        digest: z.string(),
        protocol_version: z.string().nullable(),
        name: z.string().nullable(),
        url: z.string().nullable(),
        verified_at: z.string(),
      })
      .nullable()
      .openapi({ description: "The verified A2A Agent Card bound to this agent, if any" }),
    created: z.string(),
    updated: z.string(),
    suspended_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    status_list: StatusListMember,
  })
  .openapi("Agent");

export const CreateAgent = z
  .object({
    principal_id: RowUuid.openapi({ description: "The principal this agent acts for" }),
    name: plainText(200),
    description: plainText(1000).optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .openapi("CreateAgentRequest");

export const UpdateAgent = z
  .object({
    name: plainText(200).optional(),
    description: plainText(1000).nullable().optional(),
    metadata: Metadata.optional().openapi({
      description: "Merged into the current metadata; a key set to an empty string is removed",
    }),
    status: z
      .enum(AGENT_STATUSES)
      .optional()
      .openapi({
        description:
          "`suspended` pauses the agent (it is denied trust until reactivated with `active`); " +
          "`revoked` is terminal",
      }),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, "name at least one field to change")
  .openapi("UpdateAgentRequest");

export const ListAgentsQuery = PageQuery.extend({
  status: z.enum(AGENT_STATUSES).optional(),
  risk_tier: z.enum(RISK_TIERS).optional(),
  principal_id: RowUuid.optional(),
});

export const TrustEvent = z
  .object({
    object: z.literal("trust_event"),
    id: z.string(),
    agent_id: z.string(),
    reason: z.string().openapi({
      description:
        "What moved trust: registered, updated, key_registered, key_revoked, card_verified, " +
        "card_unverified, card_invalid, suspended, reactivated, revoked, assessment",
    }),
    status: z.enum(AGENT_STATUSES),
    trust_score: z.number().int(),
    risk_tier: z.enum(RISK_TIERS),
    previous_score: z.number().int().nullable(),
    previous_tier: z.enum(RISK_TIERS).nullable(),
    created: z.string(),
  })
  .openapi("TrustEvent");
