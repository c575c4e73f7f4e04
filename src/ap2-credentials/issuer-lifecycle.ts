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
  UpdateCredentialIssuer,
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

/**
 * Changes an issuer's name or required constraints, committing `credential_issuer.updated` with
 * the issuer as it is after the change, in the same transaction. Required constraints apply from
 * the next assessment (the registry is read on every one); a review item already open is not
 * judged again against them (its chain is not kept). An update that changes nothing answers the
 * record and records nothing.
 */
export async function updateIssuer(
  tenant: Tenant,
  id: string,
  body: UpdateCredentialIssuer,
): Promise<CredentialIssuer> {
  const current = await getById(tenant, credentialIssuers, id);
  const next = {
    name: body.name ?? current.name,
    requiredConstraints: body.required_constraints
      ? [...body.required_constraints]
      : current.requiredConstraints,
    statusRequired: body.status_required ?? current.statusRequired,
  };
  const unchanged =
    next.name === current.name &&
    next.requiredConstraints.join(",") === current.requiredConstraints.join(",") &&
    next.statusRequired === current.statusRequired;
  if (unchanged) return toIssuer(current);
  const issuer = toIssuer({ ...current, ...next });
  const { results } = await commit(
    tenant,
    {
      type: "credential_issuer.updated",
      subject: { type: "credential_issuer", id },
      payload: issuer,
    },
    (db) => [
      db.update(credentialIssuers).set(next).where(eq(credentialIssuers.id, id)),
      db.select().from(credentialIssuers).where(eq(credentialIssuers.id, id)),
    ],
  );
  return toIssuer(orNotFound(results[1][0]));
}
