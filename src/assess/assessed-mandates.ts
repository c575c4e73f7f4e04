import type { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { mandates } from "../db/schema";
import type { Mandate } from "../schemas/mandates";
import type { ActionKind } from "../schemas/vocabulary";

type MandateView = z.infer<typeof Mandate>;

/** A mandate as an assessment stored it. */
export type MandateRow = typeof mandates.$inferSelect;

/** A mandate as the API shows it. */
export function toMandate(row: MandateRow): MandateView {
  return {
    object: "mandate",
    id: row.id,
    assessment_id: row.assessmentId,
    kind: row.kind as MandateView["kind"],
    mandate_type: row.mandateType,
    vct: row.vct,
    content_hash: row.contentHash,
    mandate_hash: row.mandateHash,
    mandate: row.mandate as Record<string, unknown>,
    livemode: row.livemode,
    created: row.createdAt.toISOString(),
    erased_at: row.erasedAt?.toISOString() ?? null,
    erased_fields: row.erasedFields ?? [],
  };
}

/** A page of the mandates the caller's mode assessed, newest first, by kind if asked. */
export async function listAssessedMandates(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined; kind?: ActionKind | undefined },
): Promise<Page<MandateView>> {
  const { limit, cursor, kind } = query;
  const list = await listById(
    tenant,
    mandates,
    { limit, cursor },
    kind ? eq(mandates.kind, kind) : undefined,
  );
  return mapPage(list, toMandate);
}

/** One mandate of the caller's mode (404 otherwise, and for the other mode's). */
export async function getAssessedMandate(tenant: Tenant, id: string): Promise<MandateView> {
  return toMandate(await getById(tenant, mandates, id));
}
