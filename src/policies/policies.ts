import type { z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { normalizeRules, type PolicyRules } from "../assess/policy";
import type { CreatePolicy, ListPoliciesQuery, Policy } from "../assess/policy-schemas";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { policies } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
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
 * Activation: the policy as it will stand, read before the write so its entry commits with it,
 * and the write in one transaction: the active policy (if another) returns to draft, this one
 * takes the next version (and stops shadowing: the active policy is never its own shadow). The
 * unique indexes on the active policy and the version decide a race; the loser answers 409 and
 * can retry. An active policy answers unchanged and records nothing (its activation is).
 */
async function activate(tenant: Tenant, id: string): Promise<PolicyRow | undefined> {
  const [rows, versions] = await tenant.batch((db) => [
    db.select().from(policies).where(eq(policies.id, id)),
    maxVersion(db),
  ]);
  const current = rows[0];
  if (!current || current.status === "active") return current;
  const activated: PolicyRow = {
    ...current,
    status: "active",
    shadow: false,
    version: Number(versions[0]?.max ?? 0) + 1,
    activatedAt: new Date(),
  };
  const change = activation(activated);
  const { results } = await commit(tenant, { ...change, once: [change.once] }, (db) => [
    db
      .update(policies)
      .set({ status: "draft" })
      .where(
        and(
          eq(policies.status, "active"),
          ne(policies.id, id),
          // Only while the draft is there to take its place (a race may have taken it).
          sql`exists (select 1 from policies d where d.id = ${id} and d.status = 'draft')`,
        ),
      ),
    db
      .update(policies)
      .set({
        status: "active",
        shadow: false,
        version: activated.version,
        activatedAt: activated.activatedAt,
      })
      .where(and(eq(policies.id, id), eq(policies.status, "draft")))
      .returning(),
  ]).catch(activationConflict);
  // A twin activating this very draft landed first: the policy as it left it. Anything else
  // took the draft between the read and the write: the loser retries.
  const landed = results[1][0] ?? (await readPolicy(tenant, id));
  if (landed?.status === "active" && landed.version === activated.version) return landed;
  return activationConflict({ code: UNIQUE_VIOLATION });
}

/** The org's highest policy version so far (0 before any activation). */
function maxVersion(db: Database) {
  return db.select({ max: sql<number>`coalesce(max(${policies.version}), 0)::int` }).from(policies);
}

/** The ledger change of an activation: once per version. */
function activation(row: Omit<PolicyRow, "orgId">) {
  return {
    type: "policy.activated",
    subject: { type: "policy", id: row.id },
    payload: toPolicy(row),
    once: `policy.activated:${row.id}:${row.version}`,
  };
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
 * Creates a policy as the org's active one in one transaction with its two entries (created,
 * activated): the active policy (if any) returns to draft and the new one is inserted active
 * with the next version, read before. The unique indexes decide a race; the loser's whole
 * transaction rolls back (409), leaving its entries as the record of the attempt.
 */
async function createActive(tenant: Tenant, values: typeof policies.$inferInsert) {
  const [versions] = await tenant.batch((db) => [maxVersion(db)]);
  const created: Omit<PolicyRow, "orgId"> = {
    ...values,
    rules: values.rules,
    velocityWindowSeconds: values.velocityWindowSeconds ?? null,
    aggregates: values.aggregates ?? [],
    id: values.id as string,
    status: "active",
    shadow: false,
    version: Number(versions[0]?.max ?? 0) + 1,
    activatedAt: new Date(),
    createdAt: new Date(),
  };
  const { results } = await commit(
    tenant,
    {
      type: "policy.created",
      subject: { type: "policy", id: created.id },
      payload: toPolicy(created),
      also: [activation(created)],
    },
    (db) => [
      db.update(policies).set({ status: "draft" }).where(eq(policies.status, "active")),
      db.insert(policies).values(created).returning(),
    ],
  ).catch((error: unknown) => activationConflict(error, "activate"));
  return results[1];
}

/**
 * Shadowing, committed only as a change (a draft that does not shadow yet), in one transaction:
 * the previous shadow policy (if another) stops, this draft starts. The partial unique index
 * keeps "one shadow" true under races (the loser: 409).
 */
async function shadow(tenant: Tenant, id: string): Promise<PolicyRow> {
  const row = orNotFound(await readPolicy(tenant, id));
  if (row.status === "active") throw shadowOfActive();
  if (row.shadow) return row;
  const shadowing = { ...row, shadow: true };
  const { results } = await commit(
    tenant,
    {
      type: "policy.shadowed",
      subject: { type: "policy", id },
      payload: toPolicy(shadowing),
    },
    (db) => [
      db
        .update(policies)
        .set({ shadow: false })
        .where(
          and(
            eq(policies.shadow, true),
            ne(policies.id, id),
            // Only while the draft is there to take its place (it may be activated meanwhile).
            sql`exists (select 1 from policies d where d.id = ${id} and d.status = 'draft')`,
          ),
        ),
      db
        .update(policies)
        .set({ shadow: true })
        .where(and(eq(policies.id, id), eq(policies.status, "draft"), eq(policies.shadow, false)))
        .returning(),
    ],
  ).catch((error: unknown) => {
    if (isUniqueViolation(error)) {
      throw new ApiError("policy_shadow_conflict", [
        { path: "id", message: "another policy was made the shadow at the same time; retry" },
      ]);
    }
    throw error;
  });
  const written = results[1][0];
  if (written) return written;
  // A twin made it the shadow first: as it left it; activated meanwhile: the active policy decides.
  const now = orNotFound(await readPolicy(tenant, id));
  if (now.status === "active") throw shadowOfActive();
  return now;
}

function shadowOfActive(): ApiError {
  return new ApiError("policy_active", [
    { path: "id", message: "the active policy decides; only a draft can shadow it" },
  ]);
}

async function readPolicy(tenant: Tenant, id: string): Promise<PolicyRow | undefined> {
  const [rows] = await tenant.batch((db) => [
    db.select().from(policies).where(eq(policies.id, id)),
  ]);
  return rows[0];
}

const UNIQUE_VIOLATION = "23505";

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === UNIQUE_VIOLATION;
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
  // policy back with it, so a 409 leaves no stray draft behind.
  const row = (await createActive(tenant, values))[0];
  if (!row) throw new ApiError("internal_error");
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
  return toPolicy(orNotFound(await activate(tenant, id)));
}

/** Makes a draft the org's shadow policy; only a change is recorded. */
export async function shadowPolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  return toPolicy(await shadow(tenant, id));
}

/** Stops shadowing with a policy; only a change is recorded (a repeated stop records nothing). */
export async function unshadowPolicy(tenant: Tenant, id: string): Promise<PolicyView> {
  const row = orNotFound(await readPolicy(tenant, id));
  if (!row.shadow) return toPolicy(row);
  const stopped = { ...row, shadow: false };
  await commit(
    tenant,
    {
      type: "policy.unshadowed",
      subject: { type: "policy", id },
      payload: toPolicy(stopped),
    },
    (db) => [
      db
        .update(policies)
        .set({ shadow: false })
        .where(and(eq(policies.id, id), eq(policies.shadow, true))),
    ],
  );
  return toPolicy(stopped);
}
