import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { getById, listById, type Page } from "../db/pagination";
import { actionDecisions, actionMandates, actionRedemptions, agents } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { CreateActionMandate } from "../schemas/actions";
import type { MANDATE_STATUSES } from "../schemas/vocabulary";
import { settleMandateGrantPlaces } from "../status-lists/places";
import { type MandateRow, mandateRevocation, mandateTerms, toDecision } from "./records";

/** A mandate's states, for the list filter. */

type MandateStatus = (typeof MANDATE_STATUSES)[number];

type CreateBody = z.infer<typeof CreateActionMandate>;

function invalid(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message }]);
}

/** The window, checked against now: a mandate that can never be used is refused. */
function windowOf(body: CreateBody, now: Date) {
  const notBefore = body.not_before ? new Date(body.not_before) : now;
  const expiresAt = new Date(body.expires_at);
  if (expiresAt <= notBefore) throw invalid("expires_at", "must be after not_before");
  if (expiresAt <= now) throw invalid("expires_at", "must be in the future");
  return { notBefore, expiresAt };
}

/**
 * One read (which also authenticates) checks the agent; the ledger object then sequences the
 * creation, and one transaction writes its entry and the mandate, which names that entry.
 */
export async function createMandate(tenant: Tenant, body: CreateBody): Promise<MandateRow> {
  const now = new Date();
  const window = windowOf(body, now);
  const [found] = await tenant.batch((db) => [
    db
      .select({ principalId: agents.principalId, status: agents.status })
      .from(agents)
      .where(eq(agents.id, body.agent_id)),
  ]);
  const agent = found[0];
  if (!agent) throw invalid("agent_id", "no such agent");
  if (agent.status === "revoked") {
    throw new ApiError("agent_revoked", [{ path: "agent_id", message: "the agent is revoked" }]);
  }
  if (body.principal_id !== undefined && body.principal_id !== agent.principalId) {
    throw invalid("principal_id", "the agent does not act for this principal");
  }
  const who = await tenant.caller();
  const draft = {
    id: newId(now.getTime()),
    orgId: who.orgId,
    agentId: body.agent_id,
    principalId: body.principal_id ?? null,
    action: body.action,
    resource: body.resource,
    notBefore: window.notBefore,
    expiresAt: window.expiresAt,
    currency: body.currency ?? null,
    maxAmountPerUse: body.max_amount_per_use ?? null,
    maxAmountTotal: body.max_amount_total ?? null,
    maxUses: body.max_uses ?? null,
    uses: 0,
    amountUsed: 0,
    status: "active" as const,
    metadata: body.metadata ?? {},
    createdAt: now,
    revokedAt: null,
  };
  const terms = mandateTerms(draft);
  const { entry } = await commit(
    tenant,
    {
      type: "action_mandate.created",
      subject: { type: "action_mandate", id: draft.id },
      payload: terms,
      once: [`action_mandate.created:${draft.id}`],
    },
    (db, { entry }) => [
      db
        .insert(actionMandates)
        .values({ ...draft, auditEntryId: entry.id, auditSequence: entry.sequence }),
    ],
  );
  const row: MandateRow = { ...draft, auditEntryId: entry.id, auditSequence: entry.sequence };
  return row;
}

/** A page of the org's mandates, newest first, by status and agent if asked. */
export async function listMandates(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; status?: MandateStatus; agent_id?: string },
): Promise<Page<MandateRow>> {
  const { limit, cursor, status, agent_id } = query;
  return listById(
    tenant,
    actionMandates,
    { limit, cursor },
    status ? eq(actionMandates.status, status) : undefined,
    agent_id ? eq(actionMandates.agentId, agent_id) : undefined,
  );
}

/** One mandate of the org (404 otherwise). */
export function getMandate(tenant: Tenant, id: string): Promise<MandateRow> {
  return getById(tenant, actionMandates, id);
}

/**
 * Revokes a mandate (no more ALLOWs, its grants no longer redeem) and answers it as it stands;
 * a revoked one answers unchanged.
 */
export async function revokeMandate(tenant: Tenant, id: string): Promise<MandateRow> {
  const found = await getById(tenant, actionMandates, id);
  const revokedAt = found.revokedAt ?? new Date();
  const revocation = mandateRevocation({ ...found, revokedAt });
  // Committed on every call, once per mandate: a retry after a failed write finishes the first
  // revocation's (its time included). The ledger object voids the mandate's grants in the same
  // step, so a redemption that read the mandate as active before this write is still refused
  // if it comes after: once this answers 200, no grant under the mandate redeems
  // (docs/action-authority.md). The second statement reads the row as committed after the
  // update: a repeated revoke (or one that lost a race) answers the revoked mandate as it
  // stands. The places of its unexpired grants turn INVALID in the same transaction, after the
  // update, so a grant an ALLOW committed meanwhile is among them (docs/status-lists.md).
  const { results } = await commit(
    tenant,
    {
      type: "action_mandate.revoked",
      subject: { type: "action_mandate", id },
      payload: revocation,
      once: [`action_mandate.revoked:${id}`],
      voids: { key: `action_mandate:${id}`, at: revocation.revoked_at ?? revokedAt.toISOString() },
    },
    (db, { terms }) => [
      db
        .update(actionMandates)
        .set({ status: "revoked", revokedAt: new Date(terms.revoked_at ?? revokedAt) })
        .where(and(eq(actionMandates.id, id), eq(actionMandates.status, "active"))),
      db.select().from(actionMandates).where(eq(actionMandates.id, id)),
      settleMandateGrantPlaces(db, id, revokedAt),
    ],
  );
  return orNotFound(results[1][0]);
}

/** One action decision of the org with where its grant stands, as the API shows it (404 otherwise). */
export async function getDecision(tenant: Tenant, id: string) {
  const [rows] = await tenant.batch((db) => [
    db
      .select({ decision: actionDecisions, redeemed: actionRedemptions.grantId })
      .from(actionDecisions)
      .leftJoin(actionRedemptions, eq(actionRedemptions.decisionId, actionDecisions.id))
      .where(eq(actionDecisions.id, id)),
  ]);
  const row = orNotFound(rows[0]);
  return toDecision(row.decision, row.redeemed !== null, new Date(), tenant.env);
}
