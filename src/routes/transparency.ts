import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { publicBaseUrl } from "../env";
import type { AppEnv } from "../http/context";
import { errorResponses, json } from "../http/schemas";
import { checkpointRecord } from "../ledger/ledger-rows";
import {
  leafInclusion,
  logCheckpoints,
  logConsistency,
  newestCheckpoint,
} from "../ledger/transparency-reads";
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

export function registerTransparency(app: OpenAPIHono<AppEnv>) {
  app.openapi(logRoute, async (c) => {
    const { logId } = c.req.valid("param");
    const row = await newestCheckpoint(c.env, logId);
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
    return c.json(await logCheckpoints(c.env, logId, c.req.valid("query")), 200);
  });

  app.openapi(consistencyRoute, async (c) => {
    const { logId } = c.req.valid("param");
    const { first, second } = c.req.valid("query");
    return c.json(await logConsistency(c.env, logId, first, second), 200);
  });

  app.openapi(proofRoute, async (c) => {
    return c.json(await leafInclusion(c.env, c.req.valid("param").leafHash), 200);
  });
}
