import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { artifacts, auditEntries } from "../db/schema";
import { orNotFound } from "../errors";
import { checkReceipt } from "../evidence/artifact-receipt";
import { anchorOf, registerArtifact, toArtifact } from "../evidence/artifact-registration";
import type { AppEnv } from "../http/context";
import { listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  Artifact,
  ArtifactWithState,
  ListArtifactsQuery,
  RegisterArtifact,
  artifactTags as tags,
} from "../schemas/artifacts";
import { listOf } from "../schemas/common";
import { signer } from "../signing/signer";

const register = createRoute(
  guarded(["artifact:write", "assess:write"], {
    method: "post",
    path: "/v1/artifacts",
    tags,
    summary: "Register a file's SHA-256 and get a signed receipt (the file never leaves you)",
    description:
      "Registering a digest the caller's org already registered in the same mode answers 200 " +
      "with that first registration unchanged; the repeat's other fields are ignored.",
    request: { body: jsonBody(RegisterArtifact) },
    responses: {
      200: json(Artifact, "Already registered: the first registration"),
      201: json(Artifact, "Registered"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const list = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/artifacts",
    tags,
    summary: "Artifacts of the caller's mode, newest first",
    request: { query: ListArtifactsQuery },
    responses: {
      200: json(listOf(Artifact, "ArtifactList"), "A page of artifacts"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/artifacts/{id}",
    tags,
    summary: "An artifact with its receipt's validity and its anchor (inclusion proof)",
    request: { params: IdParam },
    responses: {
      200: json(ArtifactWithState, "The artifact"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerArtifacts(app: OpenAPIHono<AppEnv>) {
  app.openapi(register, async (c) => {
    const { row, created } = await registerArtifact(c.var.tenant, c.req.valid("json"));
    return created ? c.json(toArtifact(row), 201) : c.json(toArtifact(row), 200);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, digest } = c.req.valid("query");
    const list = await listById(
      c.var.tenant,
      artifacts,
      { limit, cursor },
      eq(artifacts.livemode, c.var.tenant.livemode),
      digest ? eq(artifacts.digest, digest) : undefined,
    );
    return c.json(mapPage(list, toArtifact), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .select({ row: artifacts, leafHash: auditEntries.leafHash })
        .from(artifacts)
        .innerJoin(
          auditEntries,
          and(
            eq(auditEntries.orgId, artifacts.orgId),
            eq(auditEntries.sequence, artifacts.auditSequence),
          ),
        )
        .where(and(eq(artifacts.id, id), eq(artifacts.livemode, c.var.tenant.livemode))),
    ]);
    const found = orNotFound(rows[0]);
    const { row, leafHash } = found;
    const [check, anchor] = await Promise.all([
      signer(c.env).then(({ keys }) => checkReceipt(keys, row.receipt)),
      anchorOf(c.env, row.orgId, row.auditSequence, leafHash),
    ]);
    return c.json(
      {
        ...toArtifact(row),
        receipt_valid:
          check.signature_valid &&
          check.claims?.sub === row.id &&
          check.claims.digest === row.digest &&
          check.claims.org === row.orgId &&
          check.claims.livemode === row.livemode,
        anchor,
      },
      200,
    );
  });
}
