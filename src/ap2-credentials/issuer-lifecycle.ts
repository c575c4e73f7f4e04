import type { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { credentialIssuers } from "../db/schema";
import { orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import type {
  CreateCredentialIssuer,
  CredentialIssuer,
  ListCredentialIssuersQuery,
} from "./issuer-schemas";
import { createIssuer, toIssuer } from "./issuers";

/**
 * Registers an issuer, committing `credential_issuer.created` with it as the API shows it in
 * the same transaction (createIssuer).
 */
export async function registerIssuer(
  tenant: Tenant,
  body: CreateCredentialIssuer,
): Promise<CredentialIssuer> {
  return toIssuer(await createIssuer(tenant, body));
}

/** A page of the org's issuers, newest first, by status if asked. */
export async function listIssuers(
  tenant: Tenant,
  query: z.infer<typeof ListCredentialIssuersQuery>,
): Promise<Page<CredentialIssuer>> {
  const { limit, cursor, status } = query;
  const page = await listById(
    tenant,
    credentialIssuers,
    { limit, cursor },
    status ? eq(credentialIssuers.status, status) : undefined,
  );
  return mapPage(page, toIssuer);
}

/** One issuer of the org (404 otherwise). */
export async function getIssuer(tenant: Tenant, id: string): Promise<CredentialIssuer> {
  return toIssuer(await getById(tenant, credentialIssuers, id));
}

/**
 * Revokes an issuer: its keys never verify a root again. The revocation is committed with its
 * entry, once per issuer; a revoked one answers unchanged and records nothing.
 */
export async function revokeIssuer(tenant: Tenant, id: string): Promise<CredentialIssuer> {
  const current = await getById(tenant, credentialIssuers, id);
  if (current.status !== "active") return toIssuer(current);
  const revokedAt = new Date();
  // Still conditional: a revoke that lost a race to another reads the revoked row back.
  const { results } = await commit(
    tenant,
    {
      type: "credential_issuer.revoked",
      subject: { type: "credential_issuer", id },
      payload: { id, revoked_at: revokedAt.toISOString() },
      once: [`credential_issuer.revoked:${id}`],
    },
    // A replay (a retry after a failed write, a racing twin) writes the first attempt's time.
    (db, { terms }) => [
      db
        .update(credentialIssuers)
        .set({ status: "revoked", revokedAt: new Date(terms.revoked_at) })
        .where(and(eq(credentialIssuers.id, id), eq(credentialIssuers.status, "active"))),
      db.select().from(credentialIssuers).where(eq(credentialIssuers.id, id)),
    ],
  );
  return toIssuer(orNotFound(results[1][0]));
}
