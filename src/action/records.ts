import type { Party } from "#audit/chain";
import type { actionDecisions, actionMandates, actionRedemptions } from "../db/schema";
import type { Env } from "../env";
import { isoOrNull } from "../schemas/common";
import { statusListOf } from "../status-lists/places";

/**
 * The action-authority records as the API shows them, and the ledger payloads they are
 * recorded under. Every payload is rebuilt from its row alone, so the incident pack can hand a
 * verifier the exact object whose digest the ledger entry holds.
 */

export type MandateRow = typeof actionMandates.$inferSelect;
export type DecisionRow = typeof actionDecisions.$inferSelect;
export type RedemptionRow = typeof actionRedemptions.$inferSelect;

/** The mandate's terms: everything but its state. The `action_mandate.created` payload. */
export function mandateTerms(row: Omit<MandateRow, "auditEntryId" | "auditSequence">) {
  return {
    object: "action_mandate" as const,
    id: row.id,
    agent_id: row.agentId,
    principal_id: row.principalId,
    action: row.action,
    resource: row.resource,
    not_before: row.notBefore.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    currency: row.currency,
    max_amount_per_use: row.maxAmountPerUse,
    max_amount_total: row.maxAmountTotal,
    max_uses: row.maxUses,
    metadata: row.metadata,
    created: row.createdAt.toISOString(),
  };
}

export function toMandate(row: MandateRow) {
  return {
    ...mandateTerms(row),
    status: row.status,
    uses: row.uses,
    amount_used: row.amountUsed,
    revoked_at: isoOrNull(row.revokedAt),
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

/** The `action_mandate.revoked` payload. */
export function mandateRevocation(row: MandateRow) {
  return {
    object: "action_mandate" as const,
    id: row.id,
    status: "revoked" as const,
    revoked_at: isoOrNull(row.revokedAt),
  };
}

/** The decision as made: the `action_decision.created` payload. */
export function decisionPayload(row: Omit<DecisionRow, "auditEntryId" | "auditSequence">) {
  return {
    object: "action_decision" as const,
    id: row.id,
    mandate_id: row.mandateId,
    decision: row.decision,
    reasons: row.reasons,
    agent: row.agent,
    action: row.action,
    resource: row.resource,
    amount: row.amount,
    currency: row.currency,
    audience: row.audience,
    grant: grantTerms(row),
    created: row.createdAt.toISOString(),
  };
}

/**
 * The grant as its decision's entry records it. A grant with a status-list place is signed
 * after the entry is sequenced (its `status` claim names the place the entry's sequence gives,
 * docs/status-lists.md), so the entry records its id and expiry, not its JWS; a grant signed
 * before places existed was recorded with its JWS, and is rebuilt so.
 */
function grantTerms(row: Omit<DecisionRow, "auditEntryId" | "auditSequence">) {
  if (!row.grantId || !row.grantExpiresAt) return null;
  const expiresAt = row.grantExpiresAt.toISOString();
  if (row.grantJws && row.statusList === null) {
    return { id: row.grantId, jws: row.grantJws, expires_at: expiresAt };
  }
  return { id: row.grantId, expires_at: expiresAt };
}

export type GrantStatus = "issued" | "redeemed" | "expired";

/**
 * The decision as read: its payload, its grant with where the grant's status is published,
 * where its grant stands now, and its ledger entry.
 */
export function toDecision(row: DecisionRow, redeemed: boolean, now: Date, env: Env) {
  let grantStatus: GrantStatus | null = null;
  if (row.grantExpiresAt) {
    if (redeemed) grantStatus = "redeemed";
    else grantStatus = row.grantExpiresAt <= now ? "expired" : "issued";
  }
  return {
    ...decisionPayload(row),
    grant:
      row.grantId && row.grantJws && row.grantExpiresAt
        ? {
            id: row.grantId,
            jws: row.grantJws,
            expires_at: row.grantExpiresAt.toISOString(),
            status_list: statusListOf(env, row.orgId, row),
          }
        : null,
    grant_status: grantStatus,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

/** What a redemption records: the `action_grant.redeemed` payload, signed as its receipt. */
export interface RedemptionPayload {
  object: "action_redemption";
  grant_id: string;
  decision_id: string;
  mandate_id: string;
  action: string;
  resource: string;
  amount: number | null;
  currency: string | null;
  executor: Party;
  redeemed_at: string;
  receipt_jws: string;
}

export function redemptionPayload(row: RedemptionRow): RedemptionPayload {
  return {
    object: "action_redemption",
    grant_id: row.grantId,
    decision_id: row.decisionId,
    mandate_id: row.mandateId,
    action: row.action,
    resource: row.resource,
    amount: row.amount,
    currency: row.currency,
    executor: { type: row.executorType, id: row.executorId },
    redeemed_at: row.redeemedAt.toISOString(),
    receipt_jws: row.receiptJws,
  };
}

/** The row of a recorded redemption, from its payload and the entry that recorded it. */
export function redemptionRow(
  orgId: string,
  payload: RedemptionPayload,
  entry: { id: string; sequence: number },
): RedemptionRow {
  return {
    orgId,
    grantId: payload.grant_id,
    decisionId: payload.decision_id,
    mandateId: payload.mandate_id,
    executorType: payload.executor.type,
    executorId: payload.executor.id,
    action: payload.action,
    resource: payload.resource,
    amount: payload.amount,
    currency: payload.currency,
    redeemedAt: new Date(payload.redeemed_at),
    receiptJws: payload.receipt_jws,
    auditEntryId: entry.id,
    auditSequence: entry.sequence,
  };
}

/** The sentence every successful redemption carries: what it proves, and what it does not. */
export const REDEMPTION_PROVES =
  "This is the one and only redemption of this grant: the service verified its signature, that " +
  "it had not expired and that the action, resource and amount match what the executor is " +
  "about to do. Only this matching, unexpired redemption proves that the gate was passed; a " +
  "valid grant signature alone proves only what the service signed.";

export function toRedemption(row: RedemptionRow) {
  return {
    ...redemptionPayload(row),
    redeemed: true as const,
    proves: REDEMPTION_PROVES,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}
