import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import {
  CreateCredentialIssuer,
  CredentialIssuer,
  ListCredentialIssuersQuery,
  credentialIssuerTags as tags,
} from "../credentials/issuer-schemas";
import { createIssuer, toIssuer } from "../credentials/issuers";
import { credentialIssuers } from "../db/schema";
import { orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { getById, listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { record } from "../ledger/ledger";
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
    const issuer = toIssuer(await createIssuer(c.var.tenant, c.req.valid("json")));
    await record(c.env, await c.var.tenant.caller(), {
      type: "credential_issuer.created",
      subject: { type: "credential_issuer", id: issuer.id },
      payload: issuer,
    });
    return c.json(issuer, 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, status } = c.req.valid("query");
    const page = await listById(
      c.var.tenant,
      credentialIssuers,
      { limit, cursor },
      status ? eq(credentialIssuers.status, status) : undefined,
    );
    return c.json(mapPage(page, toIssuer), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(toIssuer(await getById(c.var.tenant, credentialIssuers, id)), 200);
  });

  app.openapi(revoke, async (c) => {
    const id = rowId(c.req.valid("param").id);
    // A repeated revoke matches no active row and reads the revoked one back unchanged.
    const [, rows] = await c.var.tenant.batch((db) => [
      db
        .update(credentialIssuers)
        .set({ status: "revoked", revokedAt: sql`now()` })
        .where(and(eq(credentialIssuers.id, id), eq(credentialIssuers.status, "active"))),
      db.select().from(credentialIssuers).where(eq(credentialIssuers.id, id)),
    ]);
    const issuer = toIssuer(orNotFound(rows[0]));
    await record(c.env, await c.var.tenant.caller(), {
      type: "credential_issuer.revoked",
      subject: { type: "credential_issuer", id },
      payload: { id, revoked_at: issuer.revoked_at },
      once: `credential_issuer.revoked:${id}`,
    });
    return c.json(issuer, 200);
  });
}
