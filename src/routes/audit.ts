import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json } from "../http/schemas";
import { entryProof, listCheckpoints, listEntries } from "../ledger/audit-reads";
import { AuditEntry, AuditProof, Checkpoint } from "../schemas/audit";
import { DateTime, listOf, PageQuery, plainText } from "../schemas/common";

const tags = ["Audit"];

const ListQuery = PageQuery.extend({
  type: plainText(100).optional().openapi({ example: "api_key.created" }),
  from: DateTime.optional().openapi({ description: "time >= from" }),
  to: DateTime.optional().openapi({ description: "time <= to" }),
});

const list = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/audit",
    tags,
    summary: "Audit entries, newest first",
    request: { query: ListQuery },
    responses: {
      200: json(listOf(AuditEntry, "AuditEntryList"), "A page of entries"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const proof = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/audit/{id}/proof",
    tags,
    summary: "An entry's inclusion proof against the newest signed checkpoint",
    request: { params: IdParam },
    responses: { 200: json(AuditProof, "The proof"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const checkpoints = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/audit/checkpoints",
    tags,
    summary: "Signed checkpoints of the org's ledger, newest first",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(Checkpoint, "CheckpointList"), "A page of checkpoints"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

export function registerAudit(app: OpenAPIHono<AppEnv>) {
  app.openapi(list, async (c) =>
    c.json(await listEntries(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(proof, async (c) => {
    return c.json(await entryProof(c.var.tenant, c.req.valid("param").id), 200);
  });

  app.openapi(checkpoints, async (c) => {
    return c.json(await listCheckpoints(c.var.tenant, c.req.valid("query")), 200);
  });
}
