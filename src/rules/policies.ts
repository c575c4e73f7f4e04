import type { z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { normalizeRules, type PolicyRules } from "../assess/policy";
import type { CreatePolicy, ListPoliciesQuery, Policy } from "../assess/policy-schemas";
import type { Tenant } from "../auth/tenant";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { policies } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";

type PolicyView = z.infer<typeof Policy>;

type PolicyRow = typeof policies.$inferSelect;

function toPolicy(row: Omit<PolicyRow, "orgId">): z.infer<typeof Policy> {
  return {
    object: "policy",
    id: row.id,
    name: row.name,
    status: row.status,
    version: row.version,
    rules: row.rules as z.infer<typeof PolicyRules>,
    shadow: row.shadow,
    created: row.createdAt.toISOString(),
    activated_at: row.activatedAt?.toISOString() ?? null,
  };
}

/**
 * Activation in one transaction: the active policy (if another) returns to draft, this one
 * takes the next version (and stops shadowing: the active policy is never its own shadow). The partial unique index keeps "one active" true under races; the
 * loser of a race answers 409 and can retry.
 */
async function activateInBatch(tenant: Tenant, id: string): Promise<PolicyRow | undefined> {
  const [, , rows] = await tenant
    .batch((db) => [
      db
        .update(policies)
        .set({ status: "draft" })
        .where(
          and(
            eq(policies.status, "active"),
            ne(policies.id, id),
            // Only when there is a draft to take its place: a bad id changes nothing.
            sql`exists (select 1 from policies d where d.id = ${id} and d.status = 'draft')`,
          ),
        ),
      db
        .update(policies)
        .set({
          status: "active",
          shadow: false,
          version: sql`(select coalesce(max(p.version), 0) + 1 from policies p)`,
          activatedAt: sql`now()`,
        })
        .where(and(eq(policies.id, id), eq(policies.status, "draft"))),
      db.select().from(policies).where(eq(policies.id, id)),
    ])
    .catch(activationConflict);
  return rows[0];
}

/** The loser of an activation race (the partial unique index said no): 409, retry. */
function activationConflict(error: unknown, path = "id"): never {
  if (isUniqueViolation(error)) {
    throw new ApiError("policy_activation_conflict", [
      { path, message: "another activation happened at the same time; retry" },
    ]);
  }
  throw error;
}

/**
 * Creates a policy as the org's active one in one transaction: the active policy (if any)
 * returns to draft and the new one is inserted active with the next version. The partial
 * unique index decides a race; the loser's whole transaction rolls back (409).
 */
async function createActive(tenant: Tenant, values: typeof policies.$inferInsert) {
  const [, rows] = await tenant
    .batch((db) => [
      db.update(policies).set({ status: "draft" }).where(eq(policies.status, "active")),
      db
        .insert(policies)
        .values({
          ...values,
          status: "active",
          version: sql`(select coalesce(max(p.version), 0) + 1 from policies p)`,
          activatedAt: sql`now()`,
        })
        .returning(),
    ])
    .catch((error: unknown) => activationConflict(error, "activate"));
  return [rows] as const;
}

/**
 * Shadowing in one transaction: the previous shadow policy (if another) stops, this draft
 * starts. The partial unique index keeps "one shadow" true under races (the loser: 409).
 */
async function shadowInBatch(tenant: Tenant, id: string) {
  const [, started, rows] = await tenant
    .batch((db) => [
      db
        .update(policies)
        .set({ shadow: false })
        .where(
          and(
            eq(policies.shadow, true),
            ne(policies.id, id),
            // Only when there is a draft to take its place: a bad id or the active one changes nothing.
            sql`exists (select 1 from policies d where d.id = ${id} and d.status = 'draft')`,
          ),
        ),
      db
        .update(policies)
        .set({ shadow: true })
        .where(and(eq(policies.id, id), eq(policies.status, "draft"), eq(policies.shadow, false)))
        .returning({ id: policies.id }),
      db.select().from(policies).where(eq(policies.id, id)),
    ])
    .catch((error: unknown) => {
      if (isUniqueViolation(error)) {
        throw new ApiError("policy_shadow_conflict", [
          { path: "id", message: "another policy was made the shadow at the same time; retry" },
        ]);
      }
      throw error;
    });
  return { row: rows[0], started: started.length > 0 };
}

/** Recorded once per version: a repeated activation of the active policy records nothing. */
async function recordActivation(tenant: Tenant, row: PolicyRow) {
  await record(tenant.env, await tenant.caller(), {
    type: "policy.activated",
    subject: { type: "policy", id: row.id },
    payload: toPolicy(row),
    once: `policy.activated:${row.id}:${row.version}`,
  });
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "23505";
}

/**
 * Creates a policy, as a draft or (with `activate`) as the org's active one, and records it
 * (and its activation).
 */
export async function createPolicy(
  tenant: Tenant,
  body: z.infer<typeof CreatePolicy>,
): Promise<PolicyView> {
  const id = newId();
  const normalized = normalizeRules(body.rules);
  const values = {
    id,
    name: body.name,
    rules: body.rules,
    velocityWindowSeconds: normalized.velocity?.window_seconds ?? null,
    aggregates: normalized.program?.aggregates ?? [],
  };
  if (!body.activate) {
    // A draft is known before it is written: it commits with its entry.
    const created = new Date();
    const draft = { ...values, createdAt: created };
    const { results } = await commit(
      tenant,
      {
        type: "policy.created",
        subject: { type: "policy", id },
        payload: toPolicy({
          ...draft,
          status: "draft",
          version: null,
          shadow: false,
          activatedAt: null,
        }),
      },
      (db) => [db.insert(policies).values(draft).returning()],
    );
    const row = results[0][0];
    if (!row) throw new ApiError("internal_error");
    return toPolicy(row);
  }
  // The insert and the activation are one transaction: a lost activation race rolls the new
  // policy back with it, so a 409 leaves no stray draft behind. The version is the database's,
  // so the creation is recorded after it.
  const [rows] = await createActive(tenant, values);
  const row = rows[0];
  if (!row) throw new ApiError("internal_error");
  const who = await tenant.caller();
  await record(tenant.env, who, {
    type: "policy.created",
    subject: { type: "policy", id },
    payload: toPolicy(row),
  });
  await recordActivation(tenant, row);
  return toPolicy(row);
}

/** A page of the org's policies, newest first, by status and shadowing if asked. */
export async function listPolicies(
  tenant: Tenant,
  query: z.infer<typeof ListPoliciesQuery>,
): Promise<Page<PolicyView>> {
  const { limit, cursor, status, shadow } = query;
  const list = await listById(
    tenant,
    policies,
    { limit, cursor },
    and(
      status ? eq(policies.status, status) : undefined,
      shadow ? eq(policies.shadow, shadow === "true") : undefined,
    ),
  );
  return mapPage(list, toPolicy);
}

/** One policy of the org (404 otherwise). */
export async function getPolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  return toPolicy(await getById(tenant, policies, id));
}

/** Makes a draft the org's active policy (the active one answers unchanged) and records it. */
export async function activatePolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  const row = await activateInBatch(tenant, id);
  if (!row) throw new ApiError("not_found");
  await recordActivation(tenant, row);
  return toPolicy(row);
}

/** Makes a draft the org's shadow policy; only a change is recorded. */
export async function shadowPolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  const { row, started } = await shadowInBatch(tenant, id);
  if (!row) throw new ApiError("not_found");
  if (row.status === "active") {
    throw new ApiError("policy_active", [
      { path: "id", message: "the active policy decides; only a draft can shadow it" },
    ]);
  }
  // Only a change is audited: shadowing the shadow policy again records nothing.
  if (started) {
    await record(tenant.env, await tenant.caller(), {
      type: "policy.shadowed",
      subject: { type: "policy", id: row.id },
      payload: toPolicy(row),
    });
  }
  return toPolicy(row);
}

/** Stops shadowing with a policy; only a change is recorded. */
export async function unshadowPolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  const [changed, rows] = await tenant.batch((db) => [
    db
      .update(policies)
      .set({ shadow: false })
      .where(and(eq(policies.id, id), eq(policies.shadow, true)))
      .returning({ id: policies.id }),
    db.select().from(policies).where(eq(policies.id, id)),
  ]);
  const row = orNotFound(rows[0]);
  // Only a change is audited: a repeated stop records nothing.
  if (changed.length > 0) {
    await record(tenant.env, await tenant.caller(), {
      type: "policy.unshadowed",
      subject: { type: "policy", id: row.id },
      payload: toPolicy(row),
    });
  }
  return toPolicy(row);
}
