import type { z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { agents } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import type { Agent, CardStatus } from "../schemas/agents";
import { isoOrNull } from "../schemas/common";
import { statusListOf } from "../status-lists/places";

// An agent's record as the API shows it, and the reads and locks every agent route shares.

export type AgentRow = typeof agents.$inferSelect;

/** The agent's record, with where its status is published. */
export function toAgent(row: AgentRow, env: Env): z.infer<typeof Agent> {
  return { ...agentFacts(row), status_list: statusListOf(env, row.orgId, row) };
}

/**
 * The record without its place: the `agent.created` payload, made before the entry whose
 * sequence gives the place.
 */
export function agentFacts(row: AgentRow): Omit<z.infer<typeof Agent>, "status_list"> {
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
      confirmed_frauds: row.confirmedFrauds,
      confirmed_legitimate: row.confirmedLegitimate,
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

/** The agent with this id in the caller's org, or 404. */
export async function findAgent(tenant: Tenant, id: string): Promise<AgentRow> {
  const [rows] = await tenant.batch((db) => [db.select().from(agents).where(eq(agents.id, id))]);
  const row = orNotFound(rows[0]);
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
