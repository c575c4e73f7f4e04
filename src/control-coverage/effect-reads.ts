import type { z } from "@hono/zod-openapi";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { listById, mapPage } from "../db/pagination";
import { controlEffects } from "../db/schema";
import { ApiError } from "../errors";
import type { ListEffectsQuery } from "../schemas/control-coverage";
import { effectFactsQuery, factsOf } from "./coverage";
import { toEffect } from "./effects";
import { effectGaps } from "./gaps";

/** A page of the caller's mode's observed effects, newest first, by the filters asked. */
export async function listEffects(tenant: Tenant, query: z.infer<typeof ListEffectsQuery>) {
  const hasGate = query.has_gate === undefined ? undefined : query.has_gate === "true";
  const list = await listById(
    tenant,
    controlEffects,
    { limit: query.limit, cursor: query.cursor },
    query.effect ? eq(controlEffects.effect, query.effect) : undefined,
    query.observer ? eq(controlEffects.observer, query.observer) : undefined,
    query.reference ? eq(controlEffects.reference, query.reference) : undefined,
    hasGate === undefined
      ? undefined
      : hasGate
        ? isNotNull(controlEffects.gateType)
        : isNull(controlEffects.gateType),
  );
  return mapPage(list, toEffect);
}

/** One observed effect of the caller's mode, with whether a gate matched it and the gaps if not. */
export async function getEffect(tenant: Tenant, id: string) {
  const mine = and(eq(controlEffects.id, id), eq(controlEffects.livemode, tenant.livemode));
  const [rows, facts] = await tenant.batch((db) => [
    db.select().from(controlEffects).where(mine),
    effectFactsQuery(db, mine, 1),
  ]);
  const row = rows[0];
  const fact = facts[0];
  if (!row || !fact) throw new ApiError("not_found");
  const gaps = effectGaps(factsOf(fact));
  const status = gaps.length === 0 ? ("gated" as const) : ("ungated" as const);
  return { ...toEffect(row), match: { status, gaps } };
}
