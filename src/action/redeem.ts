import { eq } from "drizzle-orm";
import type { Caller } from "../auth/caller";
import type { Tenant } from "../auth/tenant";
import { actionDecisions, actionMandates, actionRedemptions, agents } from "../db/schema";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import type { GrantClaims } from "../schemas/actions";
import { settleGrantPlace } from "../status-lists/places";
import type { ActionRequest } from "./checks";
import { assertUnexpired, signReceipt, verifyGrant } from "./grant";
import {
  type RedemptionPayload,
  type RedemptionRow,
  redemptionPayload,
  redemptionRow,
} from "./records";

/**
 * Redeems a grant for the executor calling: verified (signature, org, an earlier redemption,
 * expiry, details, the decision and its mandate), then made the one redemption by the org's
 * ledger object, whose `once` key `grant:<id>` lets exactly one append happen per grant,
 * whatever the concurrency. Every other attempt, concurrent or later, answers 409 naming the
 * one that won.
 */
export async function redeem(
  tenant: Tenant,
  grant: string,
  request: ActionRequest,
): Promise<RedemptionRow> {
  const now = new Date();
  const claims = await verifyGrant(tenant.env, grant);
  const [decisions, mandates, redemptions, subjects] = await tenant.batch((db) => [
    db.select().from(actionDecisions).where(eq(actionDecisions.id, claims.decision)),
    db.select().from(actionMandates).where(eq(actionMandates.id, claims.mandate)),
    db.select().from(actionRedemptions).where(eq(actionRedemptions.grantId, claims.jti)),
    db
      .select({ id: agents.id, status: agents.status })
      .from(agents)
      .innerJoin(actionMandates, eq(actionMandates.agentId, agents.id))
      .where(eq(actionMandates.id, claims.mandate)),
  ]);
  const who = await tenant.caller();
  // Another org's grant is, to this caller, a grant that does not exist.
  if (claims.org !== who.orgId) throw new ApiError("not_found");
  // Once redeemed, every later attempt names that redemption, even after the grant expired.
  const earlier = redemptions[0];
  if (earlier) throw alreadyRedeemed(redemptionPayload(earlier), earlier);
  assertUnexpired(claims, now);
  const mismatches = mismatchesOf(claims, request, who);
  if (mismatches.length > 0) throw new ApiError("grant_mismatch", mismatches);
  const decision = decisions[0];
  const mandate = mandates[0];
  if (decision?.grantId !== claims.jti || decision.mandateId !== claims.mandate || !mandate) {
    throw new ApiError("not_found");
  }
  if (mandate.status === "revoked")
    throw mandateRevoked(mandate.id, mandate.revokedAt?.toISOString());
  // A grant carries its agent's authority: a suspended or revoked agent's grants stop too.
  const subject = subjects[0];
  if (subject && subject.status !== "active") {
    throw new ApiError("agent_not_active", [
      { path: "grant", message: `the agent ${subject.id} is ${subject.status}` },
    ]);
  }

  // The instant the expiry was checked: a redemption accepted before `exp` is never stored
  // at or after it.
  const redeemedAt = now.toISOString();
  const facts = {
    grant_id: claims.jti,
    decision_id: claims.decision,
    mandate_id: claims.mandate,
    action: claims.action,
    resource: claims.resource,
    amount: claims.amount,
    currency: claims.currency,
    executor: { type: who.actor.type, id: who.actor.id },
    redeemed_at: redeemedAt,
  };
  const payload: RedemptionPayload = {
    object: "action_redemption",
    ...facts,
    receipt_jws: await signReceipt(tenant.env, who.orgId, facts),
  };
  // A loser of the race finishes the winner's write (it may have died after its append), so
  // the redemption the 409 names is always stored. Single use: the grant's place turns INVALID
  // in the same transaction (docs/status-lists.md, "Issued").
  const { entry, terms, replayed } = await commit(
    tenant,
    {
      type: "action_grant.redeemed",
      subject: { type: "action_grant", id: claims.jti },
      payload,
      once: [`grant:${claims.jti}`],
      // The mandate or its agent may be revoked after the read above: the ledger object, which
      // sequences both, refuses this redemption if the revocation came first
      // (docs/action-authority.md).
      voidedBy: [`action_mandate:${mandate.id}`, `agent:${mandate.agentId}`],
    },
    (db, { entry, terms: first }) => [
      db
        .insert(actionRedemptions)
        .values(redemptionRow(who.orgId, first, entry))
        .onConflictDoNothing(),
      settleGrantPlace(db, claims.jti),
    ],
    {
      voided: async (revocation) => {
        if (revocation.key.startsWith("agent:")) {
          throw new ApiError("agent_not_active", [
            { path: "grant", message: `the agent ${mandate.agentId} is revoked` },
          ]);
        }
        throw mandateRevoked(mandate.id, revocation.at);
      },
      // The winner's record has expired from the ledger object (a day after it): its entry
      // says enough to name it.
      expired: async (entry) => {
        const first = { grant_id: claims.jti, redeemed_at: entry.time, executor: entry.actor };
        throw alreadyRedeemed(first, { auditEntryId: entry.id, auditSequence: entry.sequence });
      },
    },
  );
  const row = redemptionRow(who.orgId, terms, entry);
  if (replayed) throw alreadyRedeemed(terms, row);
  return row;
}

type Mismatch = { path: string; message: string; expected: unknown; actual: unknown };

/** Every detail of the request that differs from the grant, and the executor if not its audience. */
function mismatchesOf(claims: GrantClaims, request: ActionRequest, who: Caller): Mismatch[] {
  const pairs: [string, unknown, unknown][] = [
    ["action", claims.action, request.action],
    ["resource", claims.resource, request.resource],
    ["amount", claims.amount, request.amount],
    ["currency", claims.currency, request.currency],
  ];
  const mismatches = pairs
    .filter(([, granted, asked]) => granted !== asked)
    .map(([path, expected, actual]) => ({
      path,
      message: `the grant is for ${JSON.stringify(expected)}`,
      expected,
      actual,
    }));
  if (claims.aud !== who.actor.id) {
    mismatches.push({
      path: "audience",
      message: "the grant names another executor",
      expected: claims.aud,
      actual: who.actor.id,
    });
  }
  return mismatches;
}

function mandateRevoked(mandateId: string, revokedAt: string | undefined): ApiError {
  return new ApiError("mandate_revoked", [
    { path: "grant", message: `the mandate ${mandateId} was revoked at ${revokedAt}` },
  ]);
}

function alreadyRedeemed(
  first: Pick<RedemptionPayload, "grant_id" | "redeemed_at" | "executor">,
  row: Pick<RedemptionRow, "auditEntryId" | "auditSequence">,
): ApiError {
  return new ApiError("grant_already_redeemed", {
    grant_id: first.grant_id,
    redeemed_at: first.redeemed_at,
    executor: first.executor,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  });
}
