import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { normalizeRules, PolicyRules } from "../assess/policy";
import { policies } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { getById, listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";
import { listOf, PageQuery, plainText } from "../schemas/common";

const CreatePolicy = z
  .object({
    name: plainText(200),
    rules: PolicyRules,
    activate: z.boolean().default(false),
  })
  .strict()
  .openapi("CreatePolicyRequest");

const Policy = z
  .object({
    object: z.literal("policy"),
    id: z.string(),
    name: z.string(),
    status: z.enum(["draft", "active"]),
    version: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "Assigned at each activation from an org-wide counter (the `policy_version` of the " +
          "assessments it governs); null for a policy never activated",
      }),
    rules: PolicyRules,
    shadow: z.boolean().openapi({
      description:
        "The org's shadow policy: a draft evaluated on every assessment next to the active " +
        "one, recorded and never acted on (docs/shadow-policies.md)",
    }),
    created: z.string(),
    activated_at: z.string().nullable(),
  })
  .openapi("Policy");

const ListPoliciesQuery = PageQuery.extend({
  status: z.enum(["draft", "active"]).optional(),
  shadow: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "`true`: the org's shadow policy only (docs/shadow-policies.md)" }),
});

const tags = ["Policies"];

const create = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies",
      tags,
      summary: "Create a policy: a draft, or the org's active policy with `activate: true`",
      request: { body: jsonBody(CreatePolicy) },
      responses: {
        201: json(Policy, "The policy"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/policies",
    tags,
    summary: "List policies, newest first",
    request: { query: ListPoliciesQuery },
    responses: {
      200: json(listOf(Policy, "PolicyList"), "A page of policies"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/policies/{id}",
    tags,
    summary: "Retrieve a policy",
    request: { params: IdParam },
    responses: { 200: json(Policy, "The policy"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const activate = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies/{id}/activate",
      tags,
      summary: "Make a policy the org's one active policy",
      description:
        "The previously active policy returns to `draft`. The policy gets the next " +
        "`policy_version`. Activating the active policy changes nothing and answers 200.",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The active policy"),
        ...errorResponses(401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const shadow = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies/{id}/shadow",
      tags,
      summary: "Make a draft the org's one shadow policy",
      description:
        "The policy stays a `draft` with `shadow: true` and is evaluated on every assessment " +
        "next to the active policy, never acted on. A previous shadow policy stops shadowing. " +
        "Shadowing the shadow policy changes nothing and answers 200; the active policy " +
        "cannot be shadowed (409 `policy_active`).",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The shadow policy"),
        ...errorResponses(401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const unshadow = createRoute(
  guarded(
    "policy:write",
    {
      method: "delete",
      path: "/v1/policies/{id}/shadow",
      tags,
      summary: "Stop shadowing with a policy",
      description:
        "The policy stays a draft with `shadow: false`; its recorded shadow verdicts stay. " +
        "A policy that is not shadowing answers 200 unchanged.",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The policy"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

type PolicyRow = typeof policies.$inferSelect;

function toPolicy(row: PolicyRow): z.infer<typeof Policy> {
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
async function activateInBatch(c: AppContext, id: string): Promise<PolicyRow | undefined> {
  const [, , rows] = await c.var.tenant
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
async function createActive(c: AppContext, values: typeof policies.$inferInsert) {
  const [, rows] = await c.var.tenant
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
async function shadowInBatch(c: AppContext, id: string) {
  const [, started, rows] = await c.var.tenant
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
async function recordActivation(c: AppContext, row: PolicyRow) {
  await record(c.env, await c.var.tenant.caller(), {
    type: "policy.activated",
    subject: { type: "policy", id: row.id },
    payload: toPolicy(row),
    once: `policy.activated:${row.id}:${row.version}`,
  });
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "23505";
}

export function registerPolicies(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const id = newId();
    const normalized = normalizeRules(body.rules);
    const values = {
      id,
      name: body.name,
      rules: body.rules,
      velocityWindowSeconds: normalized.velocity?.window_seconds ?? null,
      aggregates: normalized.program?.aggregates ?? [],
    };
    // With `activate`, the insert and the activation are one transaction: a lost activation
    // race rolls the new policy back with it, so a 409 leaves no stray draft behind.
    const [rows] = body.activate
      ? await createActive(c, values)
      : await c.var.tenant.batch((db) => [db.insert(policies).values(values).returning()]);
    const row = rows[0];
    if (!row) throw new ApiError("internal_error");
    const who = await c.var.tenant.caller();
    await record(c.env, who, {
      type: "policy.created",
      subject: { type: "policy", id },
      payload: toPolicy(row),
    });
    if (body.activate) await recordActivation(c, row);
    return c.json(toPolicy(row), 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, status, shadow } = c.req.valid("query");
    const list = await listById(
      c.var.tenant,
      policies,
      { limit, cursor },
      and(
        status ? eq(policies.status, status) : undefined,
        shadow ? eq(policies.shadow, shadow === "true") : undefined,
      ),
    );
    return c.json(mapPage(list, toPolicy), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getById(c.var.tenant, policies, id);
    return c.json(toPolicy(row), 200);
  });

  app.openapi(activate, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await activateInBatch(c, id);
    if (!row) throw new ApiError("not_found");
    await recordActivation(c, row);
    return c.json(toPolicy(row), 200);
  });

  app.openapi(shadow, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const { row, started } = await shadowInBatch(c, id);
    if (!row) throw new ApiError("not_found");
    if (row.status === "active") {
      throw new ApiError("policy_active", [
        { path: "id", message: "the active policy decides; only a draft can shadow it" },
      ]);
    }
    // Only a change is audited: shadowing the shadow policy again records nothing.
    if (started) {
      await record(c.env, await c.var.tenant.caller(), {
        type: "policy.shadowed",
        subject: { type: "policy", id: row.id },
        payload: toPolicy(row),
      });
    }
    return c.json(toPolicy(row), 200);
  });

  app.openapi(unshadow, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const [changed, rows] = await c.var.tenant.batch((db) => [
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
      await record(c.env, await c.var.tenant.caller(), {
        type: "policy.unshadowed",
        subject: { type: "policy", id: row.id },
        payload: toPolicy(row),
      });
    }
    return c.json(toPolicy(row), 200);
  });
}
