import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, desc, eq, gte, lt, lte, sql } from "drizzle-orm";
import { auditCheckpoints, auditEntries } from "../db/schema";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { decodeSequenceCursor, getById, page } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json } from "../http/schemas";
import { ledgerOf } from "../ledger/ledger";
import { checkpointRecord, entryRecord } from "../ledger/ledger-rows";
import { isUuid } from "../lib/ids";
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

// Anchored means a signed checkpoint covers the entry: derived, so the row never changes.
const anchored = sql<boolean>`${auditEntries.sequence} <= coalesce(
  (select max(c.tree_size) from audit_checkpoints c), 0)`;

export function registerAudit(app: OpenAPIHono<AppEnv>) {
  app.openapi(list, async (c) => {
    const query = c.req.valid("query");
    const before = decodeSequenceCursor(query.cursor);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .select({ row: auditEntries, anchored })
        .from(auditEntries)
        .where(
          and(
            before === null ? undefined : lt(auditEntries.sequence, before),
            query.type === undefined ? undefined : eq(auditEntries.type, query.type),
            query.from === undefined ? undefined : gte(auditEntries.time, new Date(query.from)),
            query.to === undefined ? undefined : lte(auditEntries.time, new Date(query.to)),
          ),
        )
        .orderBy(desc(auditEntries.sequence))
        .limit(query.limit + 1),
    ]);
    const data = rows.map(({ row, anchored }) => ({
      object: "audit_entry" as const,
      ...entryRecord(row),
      leaf_hash: row.leafHash,
      status: anchored ? ("anchored" as const) : ("pending" as const),
    }));
    return c.json(
      page(data, query.limit, (e) => e.sequence),
      200,
    );
  });

  app.openapi(proof, async (c) => {
    const { id } = c.req.valid("param");
    if (!isUuid(id)) throw new ApiError("not_found");
    const row = await getById(c.var.tenant, auditEntries, id);
    const who = await c.var.tenant.caller();
    const answer = await ledgerOf(c.env, who.orgId).inclusion(row.sequence);
    return c.json(
      {
        object: "audit_proof" as const,
        entry_id: row.id,
        sequence: row.sequence,
        leaf_hash: row.leafHash,
        status: answer ? ("anchored" as const) : ("pending" as const),
        leaf_index: row.sequence - 1,
        tree_size: answer?.tree_size ?? null,
        audit_path: answer?.audit_path ?? null,
        checkpoint: answer?.checkpoint ?? null,
      },
      200,
    );
  });

  app.openapi(checkpoints, async (c) => {
    const query = c.req.valid("query");
    const before = decodeSequenceCursor(query.cursor);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .select()
        .from(auditCheckpoints)
        .where(before === null ? undefined : lt(auditCheckpoints.treeSize, before))
        .orderBy(desc(auditCheckpoints.treeSize))
        .limit(query.limit + 1),
    ]);
    const data = rows.map((row) => ({ object: "checkpoint" as const, ...checkpointRecord(row) }));
    return c.json(
      page(data, query.limit, (cp) => cp.tree_size),
      200,
    );
  });
}
