import { eq } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { getById, listById, type Page } from "../db/pagination";
import { mandates } from "../db/schema";
import type { ActionKind } from "../schemas/vocabulary";

/** A mandate as an assessment stored it. */
export type MandateRow = typeof mandates.$inferSelect;

/** A page of the mandates the caller's mode assessed, newest first, by kind if asked. */
export function listAssessedMandates(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; kind?: ActionKind | undefined },
): Promise<Page<MandateRow>> {
  const { limit, cursor, kind } = query;
  return listById(tenant, mandates, { limit, cursor }, kind ? eq(mandates.kind, kind) : undefined);
}

/** One mandate of the caller's mode (404 otherwise, and for the other mode's). */
export function getAssessedMandate(tenant: Tenant, id: string): Promise<MandateRow> {
  return getById(tenant, mandates, id);
}
