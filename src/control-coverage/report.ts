import { canonicalize } from "#audit/canonical";
import { logIdFor } from "#audit/checkpoint";
import { utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { signer } from "../signing/signer";
import { coverageOf, effectsDigest, type Period, readCoverage } from "./coverage";

/** The JWS `typ` of a signed coverage report. */
export const REPORT_TYP = "coverage-report+jwt";

/** What the report says it is evidence of, and what it is not: part of what is signed. */
export const DISCLOSURES = {
  observed:
    "Effects are what executors and observers reported through POST /v1/control-coverage/effects; " +
    "that they happened, when, and their references are the observers' statements, not the service's.",
  gated:
    "An effect is gated when it names a gate this service holds, every check below passes, and no " +
    "earlier effect claimed the same gate. Gated by assessment: an assessment of the same mode that " +
    "decided approve, made no later than the second in which the effect occurred; when the assessment " +
    "has an amount, the effect states the same amount and currency (the payee is not compared). " +
    "Gated by redemption: an ALLOW decision whose grant was redeemed before it expired, by the " +
    "credential the grant names, in the effect's mode, no later than the second in which the effect " +
    "occurred; the effect states the decision's action and resource, and its amount and currency " +
    "when the decision has them, all equal to the decision's, as the redemption does.",
  cannot_prove: [
    "A valid signature proves what the service signed; it does not prove that an external payment rail executed the effect.",
    "Only a matching, unexpired grant redemption proves that a connected executor accepted the gate: only effects.gated_by_redemption and redemption_coverage_ratio count such proof; an approved assessment (effects.gated_by_assessment, included in coverage_ratio) proves only that the service approved the request.",
    "Effects no observer reported are not in this report: a side effect that bypassed every observer cannot appear in it.",
    "An ungated effect is not proof of a violation, and a gated one is not proof of compliance beyond the checks named: observers can omit or mistake a gate.",
    "Effects reported after generated_at, when this computation began, may be absent from this report even if they occurred in the period.",
    "Action decisions and grants have no test or live mode of their own: the grant counts and gate_never_redeemed cover both modes, a grant's single use is checked across both, and its mode is the redeeming credential's.",
  ],
};

/**
 * The period's coverage with the ledger state it was computed at, signed (a compact JWS over
 * UTF-8(JCS(report))) and recorded in the org's ledger as `control_coverage.report_issued`,
 * whose digest is the digest of the signed payload: the org cannot issue reports and later
 * show only the ones it likes. Reports are not stored: the ledger keeps the digest, the holder
 * keeps the report.
 */
export async function issueReport(tenant: Tenant, period: Period) {
  const now = new Date();
  const read = await readCoverage(tenant, period, now);
  const who = await tenant.caller();
  const id = newId(now.getTime());
  const checkpoint = read.checkpoint;
  const report = {
    ...coverageOf(read, period),
    id,
    org_id: who.orgId,
    log_id: logIdFor(who.orgId),
    generated_at: now.toISOString(),
    ledger: {
      // The highest sequence Postgres held when the effects were read: not a signed tree size.
      head_sequence: read.head?.sequence ?? 0,
      head_hash: read.head?.hash ?? null,
      effects_digest: effectsDigest(read),
      checkpoint: checkpoint
        ? {
            tree_size: checkpoint.treeSize,
            root_hash: checkpoint.rootHash,
            time: checkpoint.time.toISOString(),
            note: checkpoint.note,
            jws: checkpoint.jws,
          }
        : null,
    },
    disclosures: DISCLOSURES,
  };
  const key = await signer(tenant.env);
  const jws = await key.signBytes(utf8(canonicalize(report)), REPORT_TYP);
  // The report is signed: it is never answered without the ledger entry that records it.
  const { entry } = await commit(
    tenant,
    {
      type: "control_coverage.report_issued",
      subject: { type: "control_coverage_report", id },
      payload: report,
    },
    () => [],
  );
  return {
    object: "control_coverage_report" as const,
    id,
    report,
    jws,
    audit: { entry_id: entry.id, sequence: entry.sequence },
  };
}
