import { z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { AGENT_STATUSES, agents, CARD_STATUSES, RISK_TIERS } from "../db/schema";
import { orgBatch } from "../db/tenant";
import { ApiError } from "../errors";
import type { AppContext } from "../http/context";
import { isoOrNull, rowId } from "../http/schemas";

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
  })
  .openapi("Agent");

export type AgentRow = typeof agents.$inferSelect;

export function toAgent(row: AgentRow): z.infer<typeof Agent> {
  return {
    object: "agent",
    id: row.id,
    principal_id: row.principalId,
    name: row.name,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    trust_score: row.trustScore,
    risk_tier: row.riskTier,
    evidence: {
      card_status: row.cardStatus,
      active_keys: row.activeKeys,
      approvals: row.approvals,
      reviews: row.reviews,
      denials: row.denials,
      suspensions: row.suspensions,
    },
    card:
      row.cardStatus === "verified" && row.cardDigest && row.cardVerifiedAt
        ? {
            digest: row.cardDigest,
            protocol_version: row.cardVersion,
            name: row.cardName,
            url: row.cardUrl,
            verified_at: row.cardVerifiedAt.toISOString(),
          }
        : null,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
    suspended_at: isoOrNull(row.suspendedAt),
    revoked_at: isoOrNull(row.revokedAt),
  };
}

type Signature = z.infer<typeof CardStatus>["signatures"][number];

export function toCardStatus(row: AgentRow): z.infer<typeof CardStatus> {
  const checked = row.cardCheckedAt !== null;
  return {
    object: "agent_card_status",
    agent_id: row.id,
    status: row.cardStatus,
    reasons: checked
      ? (row.cardReasons as z.infer<typeof CardStatus>["reasons"])
      : [{ code: "no_card", message: "no Agent Card has been presented for this agent" }],
    protocol_version: row.cardVersion,
    digest: row.cardDigest,
    name: row.cardName,
    url: row.cardUrl,
    source_url: row.cardSourceUrl,
    // Checks stored before signatures said their form and diagnosis read null for both.
    signatures: (row.cardSignatures as Partial<Signature>[]).map((s) => ({
      ...(s as Signature),
      form: s.form ?? null,
      diagnosis: s.diagnosis ?? null,
    })),
    checked_at: isoOrNull(row.cardCheckedAt),
    verified_at: isoOrNull(row.cardVerifiedAt),
  };
}

/** The agent named by a path id in the caller's org, or 404. */
export async function findAgent(c: AppContext, rawId: string): Promise<AgentRow> {
  const id = rowId(rawId);
  const [rows] = await orgBatch(c, (db) => [db.select().from(agents).where(eq(agents.id, id))]);
  const row = rows[0];
  if (!row) throw new ApiError("not_found");
  return row;
}

/** Revocation is terminal: nothing more is registered for, or changed on, a revoked agent. */
export function assertNotRevoked(row: AgentRow) {
  if (row.status === "revoked") {
    throw new ApiError("agent_revoked", [
      { path: "id", message: "the agent is revoked; revocation is terminal" },
    ]);
  }
}

/**
 * Locks the agent row for the rest of the transaction, as the first statement of a batch that
 * changes its keys or its card. Writers of one agent then run one after another, and each later
 * statement (a fresh snapshot under READ COMMITTED) sees what the previous writer committed: a
 * recount of active keys cannot miss a concurrent registration or revocation.
 */
export function lockAgent(db: Database, agentId: string) {
  return db.execute(sql`select 1 from agents where id = ${agentId} for update`);
}
