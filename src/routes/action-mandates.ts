import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { type MandateRow, mandateRevocation, mandateTerms, toMandate } from "../action/records";
import { actionMandates, agents, auditEntries } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { getById, listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { recordDeferred, recordRevocation } from "../ledger/ledger";
import { auditEntryRow } from "../ledger/ledger-postgres";
import { newId } from "../lib/ids";
import { ActionMandate, CreateActionMandate, actionTags as tags } from "../schemas/actions";
import { RowUuid } from "../schemas/agents";
import { listOf, PageQuery } from "../schemas/common";
import { MANDATE_STATUSES } from "../schemas/vocabulary";

const ListMandatesQuery = PageQuery.extend({
  status: z.enum(MANDATE_STATUSES).optional(),
  agent_id: RowUuid.optional(),
});

const create = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/action-mandates",
      tags,
      summary: "Create bounded authority for an agent: an action, a resource, a window, limits",
      request: { body: jsonBody(CreateActionMandate) },
      responses: {
        201: json(ActionMandate, "The mandate"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/action-mandates",
    tags,
    summary: "List action mandates, newest first",
    request: { query: ListMandatesQuery },
    responses: {
      200: json(listOf(ActionMandate, "ActionMandateList"), "A page of mandates"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/action-mandates/{id}",
    tags,
    summary: "Retrieve an action mandate, with what it has used",
    request: { params: IdParam },
    responses: { 200: json(ActionMandate, "The mandate"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const revoke = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/action-mandates/{id}/revoke",
      tags,
      summary: "Revoke an action mandate: no more ALLOWs, and its grants no longer redeem",
      description: "Revoking a revoked mandate answers 200 with the unchanged record.",
      request: { params: IdParam },
      responses: {
        200: json(ActionMandate, "The revoked mandate"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

type CreateBody = z.infer<typeof CreateActionMandate>;

function invalid(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message }]);
}

/** The window, checked against now: a mandate that can never be used is refused. */
function windowOf(body: CreateBody, now: Date) {
  const notBefore = body.not_before ? new Date(body.not_before) : now;
  const expiresAt = new Date(body.expires_at);
  if (expiresAt <= notBefore) throw invalid("expires_at", "must be after not_before");
  if (expiresAt <= now) throw invalid("expires_at", "must be in the future");
  return { notBefore, expiresAt };
}

/**
 * One read (which also authenticates) checks the agent; the ledger object then sequences the
 * creation, and one transaction writes its entry and the mandate, which names that entry.
 */
async function createMandate(c: AppContext, body: CreateBody): Promise<MandateRow> {
  const now = new Date();
  const window = windowOf(body, now);
  const [found] = await c.var.tenant.batch((db) => [
    db
      .select({ principalId: agents.principalId, status: agents.status })
      .from(agents)
      .where(eq(agents.id, body.agent_id)),
  ]);
  const agent = found[0];
  if (!agent) throw invalid("agent_id", "no such agent");
  if (agent.status === "revoked") {
    throw new ApiError("agent_revoked", [{ path: "agent_id", message: "the agent is revoked" }]);
  }
  if (body.principal_id !== undefined && body.principal_id !== agent.principalId) {
    throw invalid("principal_id", "the agent does not act for this principal");
  }
  const who = await c.var.tenant.caller();
  const draft = {
    id: newId(now.getTime()),
    orgId: who.orgId,
    agentId: body.agent_id,
    principalId: body.principal_id ?? null,
    action: body.action,
    resource: body.resource,
    notBefore: window.notBefore,
    expiresAt: window.expiresAt,
    currency: body.currency ?? null,
    maxAmountPerUse: body.max_amount_per_use ?? null,
    maxAmountTotal: body.max_amount_total ?? null,
    maxUses: body.max_uses ?? null,
    uses: 0,
    amountUsed: 0,
    status: "active" as const,
    metadata: body.metadata ?? {},
    createdAt: now,
    revokedAt: null,
  };
  const terms = mandateTerms(draft);
  const { entry } = await recordDeferred(
    c.env,
    who,
    {
      type: "action_mandate.created",
      subject: { type: "action_mandate", id: draft.id },
      payload: terms,
      once: [`action_mandate.created:${draft.id}`],
    },
    JSON.stringify(terms),
  );
  const row: MandateRow = { ...draft, auditEntryId: entry.id, auditSequence: entry.sequence };
  await c.var.tenant.batch((db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
    db.insert(actionMandates).values(row),
  ]);
  return row;
}

export function registerActionMandates(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    return c.json(toMandate(await createMandate(c, c.req.valid("json"))), 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, status, agent_id } = c.req.valid("query");
    const list = await listById(
      c.var.tenant,
      actionMandates,
      { limit, cursor },
      status ? eq(actionMandates.status, status) : undefined,
      agent_id ? eq(actionMandates.agentId, agent_id) : undefined,
    );
    return c.json(mapPage(list, toMandate), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getById(c.var.tenant, actionMandates, id);
    return c.json(toMandate(row), 200);
  });

  app.openapi(revoke, async (c) => {
    const id = rowId(c.req.valid("param").id);
    // The second statement reads the row as committed after the first: a repeated revoke (or
    // one that lost a race) answers the revoked mandate as it stands.
    const [, rows] = await c.var.tenant.batch((db) => [
      db
        .update(actionMandates)
        .set({ status: "revoked", revokedAt: sql`now()` })
        .where(and(eq(actionMandates.id, id), eq(actionMandates.status, "active"))),
      db.select().from(actionMandates).where(eq(actionMandates.id, id)),
    ]);
    const row = orNotFound(rows[0]);
    // Recorded on every call, once per mandate: a retry after a failed append still records it.
    // The ledger object voids the mandate's grants in the same step, so a redemption that read
    // the mandate as active before this update is still refused if it comes after: once this
    // answers 200, no grant under the mandate redeems (docs/action-authority.md).
    const revocation = mandateRevocation(row);
    await recordRevocation(
      c.env,
      await c.var.tenant.caller(),
      {
        type: "action_mandate.revoked",
        subject: { type: "action_mandate", id },
        payload: revocation,
        once: `action_mandate.revoked:${id}`,
      },
      { key: `action_mandate:${id}`, at: revocation.revoked_at ?? new Date().toISOString() },
    );
    return c.json(toMandate(row), 200);
  });
}
