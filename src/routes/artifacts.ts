import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getArtifact, listArtifacts } from "../evidence/artifact-reads";
import { registerArtifact, toArtifact } from "../evidence/artifact-registration";
import type { AppEnv } from "../http/context";
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
    return c.json(await listArtifacts(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getArtifact(c.var.tenant, id), 200);
  });
}
