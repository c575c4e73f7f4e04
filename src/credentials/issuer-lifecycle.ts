import type { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { credentialIssuers } from "../db/schema";
import { orNotFound } from "../errors";
import { record } from "../ledger/ledger";
import type {
  CreateCredentialIssuer,
  CredentialIssuer,
  ListCredentialIssuersQuery,
} from "./issuer-schemas";
import { createIssuer, toIssuer } from "./issuers";

/** Registers an issuer and records `credential_issuer.created` with it as the API shows it. */
export async function registerIssuer(
  tenant: Tenant,
  body: CreateCredentialIssuer,
): Promise<CredentialIssuer> {
  const issuer = toIssuer(await createIssuer(tenant, body));
  await record(tenant.env, await tenant.caller(), {
    type: "credential_issuer.created",
    subject: { type: "credential_issuer", id: issuer.id },
    payload: issuer,
  });
  return issuer;
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
 * Revokes an issuer: its keys never verify a root again. A revoked one answers unchanged; the
 * revocation is recorded once per issuer.
 */
export async function revokeIssuer(tenant: Tenant, id: string): Promise<CredentialIssuer> {
  // A repeated revoke matches no active row and reads the revoked one back unchanged.
  const [, rows] = await tenant.batch((db) => [
    db
      .update(credentialIssuers)
      .set({ status: "revoked", revokedAt: sql`now()` })
      .where(and(eq(credentialIssuers.id, id), eq(credentialIssuers.status, "active"))),
    db.select().from(credentialIssuers).where(eq(credentialIssuers.id, id)),
  ]);
  const issuer = toIssuer(orNotFound(rows[0]));
  await record(tenant.env, await tenant.caller(), {
    type: "credential_issuer.revoked",
    subject: { type: "credential_issuer", id },
    payload: { id, revoked_at: issuer.revoked_at },
    once: `credential_issuer.revoked:${id}`,
  });
  return issuer;
}
