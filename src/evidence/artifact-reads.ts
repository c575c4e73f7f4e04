import { and, eq } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { listById, mapPage, type Page } from "../db/pagination";
import { artifacts, auditEntries } from "../db/schema";
import { orNotFound } from "../errors";
import { signer } from "../signing/signer";
import { checkReceipt } from "./artifact-receipt";
import { anchorOf, toArtifact } from "./artifact-registration";

/** A page of the caller's mode's artifacts, newest first, by digest if asked. */
export async function listArtifacts(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; digest?: string | undefined },
): Promise<Page<ReturnType<typeof toArtifact>>> {
  const { limit, cursor, digest } = query;
  const list = await listById(
    tenant,
    artifacts,
    { limit, cursor },
    digest ? eq(artifacts.digest, digest) : undefined,
  );
  return mapPage(list, toArtifact);
}

/** One artifact of the caller's mode, with whether its receipt holds and where it is anchored. */
export async function getArtifact(tenant: Tenant, id: string) {
  const [rows] = await tenant.batch((db) => [
    db
      .select({ row: artifacts, leafHash: auditEntries.leafHash })
      .from(artifacts)
      .innerJoin(
        auditEntries,
        and(
          eq(auditEntries.orgId, artifacts.orgId),
          eq(auditEntries.sequence, artifacts.auditSequence),
        ),
      )
      .where(and(eq(artifacts.id, id), eq(artifacts.livemode, tenant.livemode))),
  ]);
  const found = orNotFound(rows[0]);
  const { row, leafHash } = found;
  const [check, anchor] = await Promise.all([
    signer(tenant.env).then(({ keys }) => checkReceipt(keys, row.receipt)),
    anchorOf(tenant.env, row.orgId, row.auditSequence, leafHash),
  ]);
  return {
    ...toArtifact(row),
    receipt_valid:
      check.signature_valid &&
      check.claims?.sub === row.id &&
      check.claims.digest === row.digest &&
      check.claims.org === row.orgId &&
      check.claims.livemode === row.livemode,
    anchor,
  };
}
