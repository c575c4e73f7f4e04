import { asc, eq, sql } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import { toLedgerEntry } from "#audit/chain";
import { utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import { actionDecisions, actionMandates, actionRedemptions, auditEntries } from "../db/schema";
import { ApiError } from "../errors";
import { anchorNow, ledgerOf } from "../ledger/ledger";
import { entryRecord } from "../ledger/ledger-rows";
import type { InclusionAnswer } from "../org-ledger/org-ledger";
import { signer } from "../signing/signer";
import { grantClaimsOf, PACK_TYP } from "./grant";
import {
  type DecisionRow,
  decisionPayload,
  type MandateRow,
  mandateRevocation,
  mandateTerms,
  type RedemptionRow,
  redemptionPayload,
  toDecision,
  toMandate,
  toRedemption,
} from "./records";

type EntryRow = typeof auditEntries.$inferSelect;

interface Evidence {
  decision: DecisionRow;
  mandate: MandateRow;
  redemption: RedemptionRow | undefined;
}

/**
 * Every piece of evidence for one decision, in one document a third party can verify offline
 * (docs/action-authority.md): the records, the ledger entries that recorded them with their
 * payloads and inclusion proofs, the signed checkpoint those proofs lead to, the public keys,
 * and a detached signature over the RFC 8785 form of all of it.
 */
export async function incidentPack(tenant: Tenant, decisionId: string) {
  const mandateOf = sql`(select d.mandate_id from action_decisions d where d.id = ${decisionId})`;
  const [decisions, mandates, redemptions, rows] = await tenant.batch((db) => [
    db.select().from(actionDecisions).where(eq(actionDecisions.id, decisionId)),
    db.select().from(actionMandates).where(eq(actionMandates.id, mandateOf)),
    db.select().from(actionRedemptions).where(eq(actionRedemptions.decisionId, decisionId)),
    db
      .select()
      .from(auditEntries)
      .where(
        sql`${auditEntries.id} in (
            select d.audit_entry_id from action_decisions d where d.id = ${decisionId}
            union all select m.audit_entry_id from action_mandates m where m.id = ${mandateOf}
            union all select r.audit_entry_id from action_redemptions r
                      where r.decision_id = ${decisionId})
          or (${auditEntries.type} = 'action_mandate.revoked' and ${auditEntries.subjectId} = ${mandateOf}::text)`,
      )
      .orderBy(asc(auditEntries.sequence)),
  ]);
  const decision = decisions[0];
  const mandate = mandates[0];
  if (!decision || !mandate) throw new ApiError("not_found");
  const evidence: Evidence = { decision, mandate, redemption: redemptions[0] };
  const { orgId } = await tenant.caller();

  // A checkpoint over everything so far, so every entry of the pack has a proof against it.
  await anchorNow(tenant.env, orgId);
  const proofs = await ledgerOf(tenant.env, orgId).inclusions(rows.map((row) => row.sequence));
  const checkpoint = proofs?.[0]?.checkpoint;
  // A checkpoint being built when this one was asked for may not cover the newest entry yet:
  // a moment later it will. Retryable, so 503.
  if (!proofs || !checkpoint) throw new ApiError("ledger_unavailable");

  const key = await signer(tenant.env);
  const now = new Date();
  const unsigned = {
    object: "incident_pack" as const,
    version: 1 as const,
    generated_at: now.toISOString(),
    org_id: orgId,
    decision: toDecision(decision, evidence.redemption !== undefined, now, tenant.env),
    mandate: toMandate(mandate),
    grant:
      decision.grantId && decision.grantJws ? grantOf(decision.grantId, decision.grantJws) : null,
    redemption: evidence.redemption ? toRedemption(evidence.redemption) : null,
    ledger: rows.map((row, i) => ledgerItem(orgId, row, evidence, proofs[i] as InclusionAnswer)),
    checkpoint: {
      log_id: checkpoint.log_id,
      tree_size: checkpoint.tree_size,
      root_hash: checkpoint.root_hash,
      time: checkpoint.time,
      note: checkpoint.note,
      jws: checkpoint.jws,
    },
    keys: key.published,
  };
  const jws = await key.signBytes(utf8(canonicalize(unsigned)), PACK_TYP);
  const [header, , signature] = jws.split(".");
  // Detached (RFC 7515 appendix F): the verifier supplies the payload, the canonical pack.
  return { ...unsigned, signature: `${header}..${signature}` };
}

function grantOf(id: string, jws: string) {
  return { id, jws, claims: grantClaimsOf(jws) };
}

function ledgerItem(orgId: string, row: EntryRow, evidence: Evidence, proof: InclusionAnswer) {
  return {
    entry: toLedgerEntry(orgId, entryRecord(row)),
    prev_hash: row.prevHash,
    hash: row.hash,
    leaf_hash: row.leafHash,
    payload: payloadOf(row.type, evidence),
    inclusion: {
      leaf_index: proof.leaf_index,
      tree_size: proof.tree_size,
      audit_path: proof.audit_path,
    },
  };
}

/** The object whose digest an entry of the pack holds, rebuilt from the record it recorded. */
function payloadOf(type: string, { decision, mandate, redemption }: Evidence): unknown {
  switch (type) {
    case "action_mandate.created":
      return mandateTerms(mandate);
    case "action_mandate.revoked":
      return mandateRevocation(mandate);
    case "action_decision.created":
      return decisionPayload(decision);
    case "action_grant.redeemed":
      if (redemption) return redemptionPayload(redemption);
  }
  throw new ApiError("internal_error");
}
