import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, desc, eq, lt } from "drizzle-orm";
import { auditCheckpoints, auditEntries } from "../db/schema";
import { publicBatch } from "../db/tenant";
import { publicBaseUrl } from "../env";
import { ApiError, orNotFound } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { decodeSequenceCursor, page } from "../http/pagination";
import { errorResponses, json } from "../http/schemas";
import { logIdFor } from "../ledger/checkpoint";
import { ledgerOf } from "../ledger/ledger";
import { checkpointRecord } from "../ledger/ledger-rows";
import { Checkpoint } from "../schemas/audit";
import { listOf, PageQuery } from "../schemas/common";

// Public, credential-free: signed checkpoints and proofs, found by a pseudonymous log id or a
// leaf hash. Nothing here reveals an org id, an entry's content, or anything a holder of the
// hash does not already know.

const tags = ["Transparency"];
const LogParam = z.object({
  logId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .openapi({ param: { name: "logId", in: "path" }, example: "9f2c4e1a0b7d3c5e8f6a1b2c3d4e5f60" }),
});
const LeafParam = z.object({
  leafHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .openapi({ param: { name: "leafHash", in: "path" } }),
});

const TransparencyLog = z
  .object({
    object: z.literal("transparency_log"),
    log_id: z.string(),
    latest_checkpoint: Checkpoint,
    key_set: z.string().openapi({ description: "Where the checkpoint signing keys are" }),
  })
  .openapi("TransparencyLog");

const InclusionProof = z
  .object({
    object: z.literal("inclusion_proof"),
    log_id: z.string(),
    leaf_hash: z.string(),
    status: z.enum(["pending", "anchored"]),
    leaf_index: z.number().int().nullable(),
    tree_size: z.number().int().nullable(),
    audit_path: z.array(z.string()).nullable(),
    checkpoint: Checkpoint.omit({ object: true }).nullable(),
  })
  .openapi("InclusionProof");

const ConsistencyProof = z
  .object({
    object: z.literal("consistency_proof"),
    log_id: z.string(),
    first: z.number().int(),
    second: z.number().int(),
    proof: z.array(z.string()),
  })
  .openapi("ConsistencyProof");

const logRoute = createRoute({
  method: "get",
  path: "/v1/transparency/logs/{logId}",
  tags,
  summary: "A ledger's newest signed checkpoint",
  request: { params: LogParam },
  responses: { 200: json(TransparencyLog, "The log"), ...errorResponses(400, 404, 429, 503) },
});

const checkpointsRoute = createRoute({
  method: "get",
  path: "/v1/transparency/logs/{logId}/checkpoints",
  tags,
  summary: "Every signed checkpoint of a ledger, newest first",
  request: { params: LogParam, query: PageQuery },
  responses: {
    200: json(listOf(Checkpoint, "PublicCheckpointList"), "A page"),
    ...errorResponses(400, 404, 429, 503),
  },
});

const consistencyRoute = createRoute({
  method: "get",
  path: "/v1/transparency/logs/{logId}/consistency",
  tags,
  summary: "An RFC 6962 consistency proof between two tree sizes",
  request: {
    params: LogParam,
    query: z.object({
      first: z.coerce.number().int().min(0),
      second: z.coerce.number().int().min(1),
    }),
  },
  responses: { 200: json(ConsistencyProof, "The proof"), ...errorResponses(400, 404, 429, 503) },
});

const proofRoute = createRoute({
  method: "get",
  path: "/v1/transparency/proofs/{leafHash}",
  tags,
  summary: "The inclusion proof of a leaf, by its RFC 6962 leaf hash",
  request: { params: LeafParam },
  responses: { 200: json(InclusionProof, "The proof"), ...errorResponses(400, 404, 429, 503) },
});

/** A log's newest signed checkpoint (with the org it belongs to, which is never returned). */
async function newestCheckpoint(c: AppContext, logId: string) {
  const [rows] = await publicBatch(c.env, { "app.log_id": logId }, (db) => [
    db
      .select()
      .from(auditCheckpoints)
      .where(eq(auditCheckpoints.logId, logId))
      .orderBy(desc(auditCheckpoints.treeSize))
      .limit(1),
  ]);
  const row = orNotFound(rows[0]);
  return row;
}

export function registerTransparency(app: OpenAPIHono<AppEnv>) {
  app.openapi(logRoute, async (c) => {
    const { logId } = c.req.valid("param");
    const row = await newestCheckpoint(c, logId);
    return c.json(
      {
        object: "transparency_log" as const,
        log_id: logId,
        latest_checkpoint: { object: "checkpoint" as const, ...checkpointRecord(row) },
        key_set: `${publicBaseUrl(c.env)}/.well-known/jwks.json`,
      },
      200,
    );
  });

  app.openapi(checkpointsRoute, async (c) => {
    const { logId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const before = decodeSequenceCursor(cursor);
    const [rows] = await publicBatch(c.env, { "app.log_id": logId }, (db) => [
      db
        .select()
        .from(auditCheckpoints)
        .where(
          and(
            eq(auditCheckpoints.logId, logId),
            before === null ? undefined : lt(auditCheckpoints.treeSize, before),
          ),
        )
        .orderBy(desc(auditCheckpoints.treeSize))
        .limit(limit + 1),
    ]);
    if (rows.length === 0 && before === null) throw new ApiError("not_found");
    const data = rows.map((row) => ({ object: "checkpoint" as const, ...checkpointRecord(row) }));
    return c.json(
      page(data, limit, (cp) => cp.tree_size),
      200,
    );
  });

  app.openapi(consistencyRoute, async (c) => {
    const { logId } = c.req.valid("param");
    const { first, second } = c.req.valid("query");
    const latest = await newestCheckpoint(c, logId);
    // Only sizes a signed checkpoint has reached are public.
    if (first > second || second > latest.treeSize) {
      throw new ApiError("invalid_request", [
        { path: "second", message: `must be ≥ first and ≤ ${latest.treeSize}` },
      ]);
    }
    const proof = await ledgerOf(c.env, latest.orgId).consistency(first, second);
    if (!proof) throw new ApiError("not_found");
    return c.json(
      { object: "consistency_proof" as const, log_id: logId, first, second, proof },
      200,
    );
  });

  app.openapi(proofRoute, async (c) => {
    const { leafHash } = c.req.valid("param");
    const [rows] = await publicBatch(c.env, { "app.leaf_hash": leafHash }, (db) => [
      db
        .select({ orgId: auditEntries.orgId, sequence: auditEntries.sequence })
        .from(auditEntries)
        .where(eq(auditEntries.leafHash, leafHash)),
    ]);
    const row = orNotFound(rows[0]);
    const answer = await ledgerOf(c.env, row.orgId).inclusion(row.sequence);
    return c.json(
      {
        object: "inclusion_proof" as const,
        log_id: logIdFor(row.orgId),
        leaf_hash: leafHash,
        status: answer ? ("anchored" as const) : ("pending" as const),
        leaf_index: answer?.leaf_index ?? null,
        tree_size: answer?.tree_size ?? null,
        audit_path: answer?.audit_path ?? null,
        checkpoint: answer?.checkpoint ?? null,
      },
      200,
    );
  });
}
