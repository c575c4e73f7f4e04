import { and, eq } from "drizzle-orm";
import { logIdFor } from "#audit/checkpoint";
import type { Tenant } from "../auth/tenant";
import { artifacts } from "../db/schema";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { commit, ORPHANED } from "../ledger/commit";
import { ledgerOf, reachLedger } from "../ledger/ledger";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { type Signer, signer } from "../signing/signer";
import { signArtifactReceipt } from "./artifact-receipt";

export type ArtifactRow = typeof artifacts.$inferSelect;

export interface RegisterInput {
  digest: string;
  name: string;
  media_type?: string | undefined;
  size_bytes?: number | undefined;
  metadata?: Record<string, string> | undefined;
}

/**
 * What the ledger entry is a digest of (`sha256(JCS(terms))`): the registration as the API
 * shows it, without the receipt (which names the entry, so cannot be in it).
 */
export interface ArtifactTerms {
  object: "artifact";
  id: string;
  digest: string;
  name: string;
  media_type: string | null;
  size_bytes: number | null;
  metadata: Record<string, string>;
  livemode: boolean;
  created: string;
}

export function termsOf(row: Omit<ArtifactRow, "receipt" | "auditEntryId" | "auditSequence">) {
  return {
    object: "artifact" as const,
    id: row.id,
    digest: row.digest,
    name: row.name,
    media_type: row.mediaType,
    size_bytes: row.sizeBytes,
    metadata: row.metadata,
    livemode: row.livemode,
    created: row.createdAt.toISOString(),
  } satisfies ArtifactTerms;
}

export function toArtifact(row: ArtifactRow) {
  return {
    ...termsOf(row),
    receipt: row.receipt,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

function byDigest(livemode: boolean, digest: string) {
  return and(eq(artifacts.livemode, livemode), eq(artifacts.digest, digest));
}

/**
 * Registers a digest once per org and mode. A repeat (or a racing duplicate) gets the first
 * registration unchanged, with `created: false`. The ledger object's `once` key
 * `artifact:<live|test>:<digest>` lets exactly one append happen per digest and mode; every
 * caller that reaches it writes the first caller's terms (its attachment) and the receipt,
 * which is a pure function of them and the entry, so all writers store the same row.
 *
 * An orphan (the first writer died after its append and before its row, and its terms expired
 * a day later) is gone past as `commit` describes.
 */
export async function registerArtifact(
  tenant: Tenant,
  input: RegisterInput,
): Promise<{ row: ArtifactRow; created: boolean }> {
  const livemode = tenant.livemode;
  const stored = async () => {
    const [rows] = await tenant.batch((db) => [
      db.select().from(artifacts).where(byDigest(livemode, input.digest)),
    ]);
    return rows[0];
  };
  const first = await stored();
  if (first) return { row: first, created: false };

  const who = await tenant.caller();
  const now = new Date();
  const draft = termsOf({
    id: newId(now.getTime()),
    orgId: who.orgId,
    livemode,
    digest: input.digest,
    name: input.name,
    mediaType: input.media_type ?? null,
    sizeBytes: input.size_bytes ?? null,
    metadata: input.metadata ?? {},
    createdAt: now,
  });
  // The key before the ledger: without one, nothing is appended that no receipt could name.
  const key = await signer(tenant.env);
  const committed = await commit(
    tenant,
    {
      type: "artifact.registered",
      subject: { type: "artifact", id: draft.id },
      payload: draft,
      once: [`artifact:${livemode ? "live" : "test"}:${input.digest}`],
    },
    async (db, { entry, terms }) => {
      const row = await rowOf(key, who.orgId, livemode, terms, entry);
      // Read back in the same transaction: whoever wrote first, that is the one.
      return [
        db.insert(artifacts).values(row).onConflictDoNothing(),
        db.select().from(artifacts).where(byDigest(livemode, terms.digest)),
      ];
    },
    {
      // The first registration's row was written then, unless its writer died.
      expired: async () => {
        const again = await stored();
        return again ? { row: again, created: false } : ORPHANED;
      },
    },
  );
  if (!("entry" in committed)) return committed;
  const written = committed.results[1][0];
  if (!written) throw new ApiError("internal_error");
  return { row: written, created: !committed.replayed };
}

/** The row of a registration the ledger sequenced, with its receipt (a pure function of both). */
async function rowOf(
  key: Signer,
  orgId: string,
  livemode: boolean,
  terms: ArtifactTerms,
  entry: StoredEntry,
): Promise<ArtifactRow> {
  const registeredAt = new Date(terms.created);
  const receipt = await signArtifactReceipt(
    key,
    { artifactId: terms.id, orgId, livemode, digest: terms.digest, registeredAt },
    entry,
  );
  return {
    id: terms.id,
    orgId,
    livemode,
    digest: terms.digest,
    name: terms.name,
    mediaType: terms.media_type,
    sizeBytes: terms.size_bytes,
    metadata: terms.metadata,
    receipt,
    createdAt: registeredAt,
    auditEntryId: entry.id,
    auditSequence: entry.sequence,
  };
}

/**
 * The ledger position of an entry: its inclusion proof against the newest checkpoint, if any.
 * Asked of the ledger object on every call (no cache). A failure to reach it is a 503, as for
 * every ledger call, never a 500.
 */
export async function anchorOf(env: Env, orgId: string, sequence: number, leafHash: string) {
  let answer: Awaited<ReturnType<ReturnType<typeof ledgerOf>["inclusion"]>>;
  try {
    answer = await reachLedger(() => ledgerOf(env, orgId).inclusion(sequence));
  } catch (error) {
    // reachLedger's own answers (a missing binding, a database outage) stand; anything else
    // from the ledger object is an unavailable ledger, never a 500.
    if (error instanceof ApiError) throw error;
    throw new ApiError("ledger_unavailable", undefined, { cause: error });
  }
  return {
    status: answer ? ("anchored" as const) : ("pending" as const),
    log_id: logIdFor(orgId),
    leaf_hash: leafHash,
    leaf_index: sequence - 1,
    tree_size: answer?.tree_size ?? null,
    audit_path: answer?.audit_path ?? null,
    checkpoint: answer?.checkpoint ?? null,
  };
}
