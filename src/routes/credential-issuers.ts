import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createIssuer, toIssuer } from "../credentials/issuers";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { record } from "../ledger/ledger";
import {
  CreateCredentialIssuer,
  CredentialIssuer,
  credentialIssuerTags as tags,
} from "../schemas/credential-issuers";

const create = createRoute(
  guarded("agents:write", {
    method: "post",
    path: "/v1/credential-issuers",
    tags,
    summary: "Register a credential issuer: who may sign the root of an AP2 credential chain",
    description:
      "Inline public keys (`jwks`) or an https JWKS URL (`jwks_url`); EC P-256 (ES256) and " +
      "Ed25519 (EdDSA) keys only, private members refused. A root is verified with the " +
      "active issuer key whose `kid` equals the root header's `kid` (docs/credentials.md).",
    request: { body: jsonBody(CreateCredentialIssuer) },
    responses: {
      201: json(CredentialIssuer, "The issuer"),
      ...errorResponses(400, 401, 403, 409, 503),
    },
  }),
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
}
