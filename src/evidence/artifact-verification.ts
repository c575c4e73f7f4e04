import { and, asc, eq } from "drizzle-orm";
import { publicBatch } from "../auth/tenant";
import { artifacts, auditEntries, signingKeys } from "../db/schema";
import type { Env } from "../env";
import type { ArtifactVerification } from "../schemas/artifacts";
import { signer } from "../signing/signer";
import { checkReceipt, storedLeafHash } from "./artifact-receipt";
import { anchorOf } from "./artifact-registration";

type Reason = ArtifactVerification["reasons"][number];
type AnchorAnswer = ArtifactVerification["anchor"];

const UNKNOWN_ANCHOR: AnchorAnswer = {
  status: "unknown",
  log_id: null,
  leaf_hash: null,
  leaf_index: null,
  tree_size: null,
  audit_path: null,
  checkpoint: null,
};

/**
 * The public verdict on a receipt (and optionally the digest its holder computed): the
 * signature under the published key set, the digest, the signing key's window, the ledger entry
 * it names (with that entry's inclusion proof) and the artifact row it names. Says nothing the
 * holder does not already hold: the signed claims, whether they match, and the proof.
 */
export async function verifyReceipt(
  env: Env,
  receipt: string,
  digest: string | undefined,
): Promise<ArtifactVerification> {
  const { keys } = await signer(env);
  const check = await checkReceipt(keys, receipt);
  const reasons: Reason[] = check.problem ? [check.problem] : [];
  const claims = check.claims;
  let matches: boolean | null = null;
  if (digest !== undefined && claims) {
    matches = claims.digest === digest;
    if (!matches) {
      reasons.push({
        code: "digest_mismatch",
        message: "the digest is not the one the receipt signs",
      });
    }
  }
  let anchor = UNKNOWN_ANCHOR;
  if (claims && check.kid !== null) {
    const leaf = claims.entry.leaf_hash;
    // One transaction, three lookups by what the receipt names: the entry by its leaf hash, the
    // artifact row by its id and digest together (each setting opens exactly one RLS policy),
    // and the signing key's window (signing_keys has no org).
    const [entries, rows, windows] = await publicBatch(
      env,
      {
        "app.leaf_hash": leaf,
        "app.artifact_id": claims.sub,
        "app.artifact_digest": claims.digest,
      },
      (db) => [
        db.select().from(auditEntries).where(eq(auditEntries.leafHash, leaf)),
        db
          .select({
            orgId: artifacts.orgId,
            livemode: artifacts.livemode,
            digest: artifacts.digest,
          })
          .from(artifacts)
          .where(and(eq(artifacts.id, claims.sub), eq(artifacts.digest, claims.digest))),
        db
          .select({ retiredAt: signingKeys.retiredAt })
          .from(signingKeys)
          .where(eq(signingKeys.kid, check.kid as string)),
      ],
    );
    // A retired key's window is closed when the sweep noted its successor; what it signed
    // after that was not signed while it was trusted. The current key's window is open,
    // whatever the table says before the next sweep (as in the trust list).
    const retiredAt = windows[0]?.retiredAt ?? null;
    if (check.key_status === "retired" && retiredAt && claims.iat * 1000 > retiredAt.getTime()) {
      reasons.push({
        code: "signed_after_retirement",
        message: "issued after its signing key was retired",
      });
    }
    const entry = entries[0];
    if (!entry) {
      reasons.push({ code: "not_found", message: "the ledger holds no entry with this leaf hash" });
    } else if (
      entry.orgId !== claims.org ||
      entry.id !== claims.entry.id ||
      entry.sequence !== claims.entry.sequence ||
      entry.hash !== claims.entry.hash ||
      entry.type !== "artifact.registered" ||
      entry.subjectId !== claims.sub
    ) {
      reasons.push({ code: "entry_mismatch", message: "the ledger entry is not the one signed" });
    } else {
      anchor = await anchorOf(env, entry.orgId, entry.sequence, entry.leafHash);
    }
    const row = rows[0];
    if (
      !row ||
      row.orgId !== claims.org ||
      row.livemode !== claims.livemode ||
      row.digest !== claims.digest
    ) {
      reasons.push({
        code: "digest_not_registered",
        message: "no artifact with this id is registered with this digest, org and mode",
      });
    }
  }
  return {
    object: "artifact_verification",
    valid: reasons.length === 0,
    reasons,
    receipt: {
      signature_valid: check.signature_valid,
      kid: check.kid,
      key_status: check.key_status,
      claims,
    },
    digest: digest === undefined ? null : { value: digest, matches, registered: null },
    anchor,
  };
}

/**
 * Proof of existence for a digest alone: whether some org registered it in live mode, and the
 * inclusion proof of the earliest such registration. Never the org, the name, the metadata
 * or the time beyond what the signed checkpoint says. `valid` is always null: this is not a
 * verdict on anything the caller holds but an assertion of the service (`registered`).
 */
export async function verifyDigest(env: Env, digest: string): Promise<ArtifactVerification> {
  const [rows] = await publicBatch(env, { "app.artifact_digest": digest }, (db) => [
    db
      .select({
        orgId: artifacts.orgId,
        sequence: artifacts.auditSequence,
        receipt: artifacts.receipt,
      })
      .from(artifacts)
      // RLS shows this lookup live rows only; said again here, so the query means it too.
      .where(and(eq(artifacts.digest, digest), eq(artifacts.livemode, true)))
      .orderBy(asc(artifacts.createdAt), asc(artifacts.id))
      .limit(1),
  ]);
  const first = rows[0];
  const reasons: Reason[] = first
    ? []
    : [{ code: "not_found", message: "no live registration of this digest" }];
  // The leaf hash from the stored receipt (the service's own row): the entry itself is not
  // visible to a digest lookup.
  const leaf = first ? storedLeafHash(first.receipt) : null;
  return {
    object: "artifact_verification",
    valid: null,
    reasons,
    receipt: null,
    digest: { value: digest, matches: null, registered: first !== undefined },
    anchor: first && leaf ? await anchorOf(env, first.orgId, first.sequence, leaf) : UNKNOWN_ANCHOR,
  };
}
