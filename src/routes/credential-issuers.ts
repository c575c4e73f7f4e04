import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  getIssuer,
  listIssuers,
  registerIssuer,
  revokeIssuer,
  updateIssuer,
} from "../ap2-credentials/issuer-lifecycle";
import {
  CreateCredentialIssuer,
  CredentialIssuer,
  ListCredentialIssuersQuery,
  credentialIssuerTags as tags,
  UpdateCredentialIssuer,
} from "../ap2-credentials/issuer-schemas";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { listOf } from "../schemas/common";

const create = createRoute(
  guarded(
    "issuers:write",
    {
      method: "post",
      path: "/v1/credential-issuers",
      tags,
      summary: "Register a credential issuer: who may sign the root of an AP2 credential chain",
      description:
        "Inline public keys (`jwks`) or an https JWKS URL (`jwks_url`); EC P-256 (ES256) and " +
        "Ed25519 (EdDSA) keys only, private members refused. A root is verified with the " +
        "active issuer key whose `kid` equals the root header's `kid` (docs/credentials.md). " +
        "An issuer is a trust anchor: it decides whose signatures make a mandate verified, so " +
        "registering one takes its own scope, held by owner and admin sessions and by keys " +
        "created with it.",
      request: { body: jsonBody(CreateCredentialIssuer) },
      responses: {
        201: json(CredentialIssuer, "The issuer"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("issuers:read", {
    method: "get",
    path: "/v1/credential-issuers",
    tags,
    summary: "List credential issuers, newest first (revoked ones included unless filtered)",
    request: { query: ListCredentialIssuersQuery },
    responses: {
      200: json(listOf(CredentialIssuer, "CredentialIssuerList"), "A page of issuers"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("issuers:read", {
    method: "get",
    path: "/v1/credential-issuers/{id}",
    tags,
    summary: "Retrieve a credential issuer",
    request: { params: IdParam },
    responses: { 200: json(CredentialIssuer, "The issuer"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const update = createRoute(
  guarded(
    "issuers:write",
    {
      method: "post",
      path: "/v1/credential-issuers/{id}",
      tags,
      summary: "Update a credential issuer: its name and the constraints it requires disclosed",
      description:
        "`required_constraints` replaces the list whole, and applies from the next assessment: " +
        "a root of this issuer whose open mandate does not disclose one of them is " +
        "`constraint_withheld` (docs/credentials.md). Keys are not updated: register a new " +
        "issuer and revoke this one. An update that changes nothing records nothing.",
      request: { params: IdParam, body: jsonBody(UpdateCredentialIssuer) },
      responses: {
        200: json(CredentialIssuer, "The issuer"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

const revoke = createRoute(
  guarded(
    "issuers:write",
    {
      method: "post",
      path: "/v1/credential-issuers/{id}/revoke",
      tags,
      summary: "Revoke a credential issuer; its keys never verify a root again",
      description:
        "Takes effect on the very next assessment: a root only it could verify is " +
        "`untrusted_issuer`. Revoking a revoked issuer answers 200 with the unchanged record.",
      request: { params: IdParam },
      responses: {
        200: json(CredentialIssuer, "The revoked issuer"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerCredentialIssuers(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    return c.json(await registerIssuer(c.var.tenant, c.req.valid("json")), 201);
  });

  app.openapi(list, async (c) => {
    return c.json(await listIssuers(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getIssuer(c.var.tenant, id), 200);
  });

  app.openapi(update, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await updateIssuer(c.var.tenant, id, c.req.valid("json")), 200);
  });

  app.openapi(revoke, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await revokeIssuer(c.var.tenant, id), 200);
  });
}
