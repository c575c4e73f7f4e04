import type { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { payloadDigest } from "#audit/digest";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { getById, listById } from "../db/pagination";
import { principals } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { CreatePrincipal, ListPrincipalsQuery, PersonalData } from "../schemas/principals";
import { voidPrincipalVerdicts } from "../status-lists/revocation";
import { type MasterKey, masterKey, openPersonalData, sealPersonalData } from "./personal-data";

type PrincipalRow = typeof principals.$inferSelect;

async function toPrincipal(master: MasterKey | null, row: PrincipalRow) {
  let data: Partial<PersonalData> = {};
  if (row.wrappedKey && row.ciphertext && master) {
    const sealed = { wrappedKey: row.wrappedKey, ciphertext: row.ciphertext };
    data = (await openPersonalData(
      master,
      { orgId: row.orgId, principalId: row.id },
      sealed,
    )) as Partial<PersonalData>;
  }
  return {
    object: "principal" as const,
    id: row.id,
    type: row.type,
    status: row.status,
    name: data.name ?? null,
    email: data.email ?? null,
    phone: data.phone ?? null,
    address: data.address ?? null,
    external_ref: data.external_ref ?? null,
    metadata: row.metadata,
    created: row.createdAt.toISOString(),
    erased_at: row.erasedAt?.toISOString() ?? null,
  };
}

/** The master key, needed only when some row still has personal data to open. */
async function keyFor(env: Env, rows: PrincipalRow[]): Promise<MasterKey | null> {
  return rows.some((row) => row.wrappedKey) ? masterKey(env) : null;
}

/** The ledger holds what happened, never the personal data, nor a guessable digest of it. */
function ledgerPayload(
  row: Pick<PrincipalRow, "id" | "type" | "status" | "ciphertext" | "erasedAt">,
) {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    sealed_digest: row.ciphertext ? payloadDigest(row.ciphertext) : null,
    erased_at: row.erasedAt?.toISOString() ?? null,
  };
}

/**
 * Creates a principal, its personal data sealed under a fresh data key, and commits
 * `principal.created` with it in one transaction. Without a usable master key nothing is
 * written: unsealed data is never stored.
 */
export async function createPrincipal(tenant: Tenant, body: z.infer<typeof CreatePrincipal>) {
  const { type, metadata, ...personal } = body;
  // Who is asking first (401/403 before anything else), then fail before writing anything
  // when the key is missing: never store unsealed data.
  const who = await tenant.caller();
  const master = await masterKey(tenant.env);
  const id = newId();
  const sealed = await sealPersonalData(master, { orgId: who.orgId, principalId: id }, personal);
  const values = { id, type, metadata: metadata ?? {}, ...sealed };
  const { results } = await commit(
    tenant,
    {
      type: "principal.created",
      subject: { type: "principal", id },
      payload: ledgerPayload({ ...values, status: "active", erasedAt: null }),
    },
    (db) => [db.insert(principals).values(values).returning()],
  );
  const row = results[0][0];
  if (!row) throw new ApiError("internal_error");
  return toPrincipal(master, row);
}

/** A page of the org's principals, newest first, their personal data opened. */
export async function listPrincipals(tenant: Tenant, query: z.infer<typeof ListPrincipalsQuery>) {
  const { limit, cursor, status } = query;
  const list = await listById(
    tenant,
    principals,
    { limit, cursor },
    status ? eq(principals.status, status) : undefined,
  );
  const master = await keyFor(tenant.env, list.data);
  const data = await Promise.all(list.data.map((row) => toPrincipal(master, row)));
  return { ...list, data };
}

/** One principal of the org, its personal data opened (404 otherwise). */
export async function getPrincipal(tenant: Tenant, id: string) {
  const row = await getById(tenant, principals, id);
  return toPrincipal(await keyFor(tenant.env, [row]), row);
}

/**
 * Erases a principal's personal data and its copies, committed with `principal.erased` (once
 * per principal) in one transaction; a repeat records nothing and still erases copies.
 */
export async function erasePrincipal(tenant: Tenant, id: string) {
  // The data key is overwritten in place; the ciphertext stays, unreadable by anyone. A
  // repeated erase finds the row erased and reads it back unchanged. In the same transaction,
  // the copies of the principal's data in its agents' mandates and assessments are erased (a
  // repeat reaches only those stored since): docs/identity.md.
  const current = await getById(tenant, principals, id);
  const eraseCopies = (db: Database) => db.execute(sql`select erase_principal_copies(${id}::uuid)`);
  const reread = (db: Database) => db.select().from(principals).where(eq(principals.id, id));
  if (current.status !== "active") {
    const [, again] = await tenant.batch((db) => [eraseCopies(db), reread(db)]);
    return toPrincipal(null, orNotFound(again[0]));
  }
  const erased = {
    status: "erased" as const,
    wrappedKey: null,
    metadata: {},
    erasedAt: new Date(),
  };
  // Still conditional on the row being active: an erase that lost a race reads the row as the
  // other left it.
  const { results } = await commit(
    tenant,
    {
      type: "principal.erased",
      subject: { type: "principal", id },
      payload: ledgerPayload({ ...current, ...erased }),
      once: [`principal.erased:${id}`],
    },
    // A replay (a retry after a failed write, a racing twin) writes the first attempt's time.
    (db, { terms }) => [
      db
        .update(principals)
        .set({ ...erased, erasedAt: terms.erased_at ? new Date(terms.erased_at) : erased.erasedAt })
        .where(and(eq(principals.id, id), eq(principals.status, "active"))),
      eraseCopies(db),
      // What the service vouched for before the erasure no longer stands (docs/status-lists.md).
      voidPrincipalVerdicts(db, id),
      reread(db),
    ],
  );
  return toPrincipal(null, orNotFound(results[3][0]));
}
