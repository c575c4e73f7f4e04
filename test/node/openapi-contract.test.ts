import { isDeepStrictEqual } from "node:util";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";
import { serveOpenApiDocument } from "../../src/http/openapi-document";
import { RESPONSE_EXAMPLES } from "../../src/http/openapi-examples";
import { ErrorSchema, errorResponses, json, jsonBody } from "../../src/http/schemas";
import {
  type ContractExceptions,
  closedDocument,
  contractViolations,
  schemaErrors,
  servedRoutes,
} from "../support/openapi-contract";

/**
 * Everything the contract tolerates, each named and with its reason. A new route conforms or
 * is added here, in review, with a reason.
 */
const EXCEPTIONS: ContractExceptions = {
  // The document itself.
  undocumented: [
    "GET /openapi.json",
    // The console's sign-in: browser navigations (redirects, an HTML refusal page) between the
    // identity provider and the console, not API operations; docs/console.md documents them.
    "GET /console/auth/login",
    "GET /console/auth/callback",
    "POST /console/auth/logout",
  ],
  bodyless: [
    "POST /v1/api-keys/{id}/revoke",
    "POST /v1/webhooks/dispatch",
    "POST /v1/policies/{id}/activate",
    "POST /v1/policies/{id}/shadow",
    "POST /v1/risk-models/{id}/activate",
    "POST /v1/risk-models/{id}/shadow",
    "POST /v1/principals/{id}/erase",
    "POST /v1/agents/{id}/keys/{keyId}/revoke",
    "POST /v1/credential-issuers/{id}/revoke",
    "POST /v1/action-mandates/{id}/revoke",
    // The payment provider's signed event, read as raw text and verified (docs/billing.md);
    // its shape is the provider's.
    "POST /v1/billing/webhooks/stripe",
  ],
  freeForm: [
    // A mandate as submitted: an AP2 mandate (checked by its own schema, docs/assess.md) or,
    // for other kinds, any object.
    "AssessRequest.mandate",
    "AssessResponse.mandate",
    "Mandate.mandate",
    // An Agent Card, judged by the card verifier (docs/identity.md).
    "VerifyAgentCardRequest.card",
    // Public JWKs, imported and checked by jose.
    "RegisterAgentKeyRequest.jwk",
    "CredentialIssuerKeyInput",
    // A ledger entry exactly as hashed: its members vary with its type (docs/ledger.md).
    "IncidentPack.ledger[].entry",
    // NDJSON lines: one JSON document per line, which OpenAPI 3.1 cannot describe as a schema.
    "GET /v1/audit/export 200 application/x-ndjson",
  ],
};

async function documentOf(app: OpenAPIHono<any>) {
  const response = await app.request("/openapi.json");
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

describe("the OpenAPI document is the whole contract", () => {
  it("documents every route the app serves, with schemas, examples and the error envelope", async () => {
    const app = buildApp();
    const problems = contractViolations(
      await documentOf(app),
      servedRoutes(app.routes),
      EXCEPTIONS,
    );
    expect(problems).toEqual([]);
  });

  it("documents POST /v1/assess's body with the AssessRequest schema it is parsed with", async () => {
    const document = await documentOf(buildApp());
    const body = document.paths["/v1/assess"].post.requestBody.content["application/json"];
    expect(body.schema).toEqual({ $ref: "#/components/schemas/AssessRequest" });
    expect(Object.keys(document.components.schemas.AssessRequest.properties)).toEqual(
      expect.arrayContaining(["mandate", "credential", "kind", "idempotency_key", "audience"]),
    );
    expect(document.components.schemas).not.toHaveProperty("AssessRequestBody");
  });

  it("shows each written example on the success response of the operation it names", async () => {
    const document = await documentOf(buildApp());
    const misplaced = Object.entries(RESPONSE_EXAMPLES).filter(([name, example]) => {
      const [method = "", path = ""] = name.split(" ");
      const responses = document.paths[path]?.[method.toLowerCase()]?.responses ?? {};
      const success = Object.entries<any>(responses).find(([status]) => status.startsWith("2"));
      return !isDeepStrictEqual(success?.[1].content?.["application/json"]?.example, example);
    });
    expect(misplaced.map(([name]) => name)).toEqual([]);
  });

  it("writes examples that name no member their schema does not", async () => {
    const document = await documentOf(buildApp());
    const closed = closedDocument(document);
    const problems = Object.entries(RESPONSE_EXAMPLES).flatMap(([name, example]) => {
      const [method = "", path = ""] = name.split(" ");
      const responses = document.paths[path][method.toLowerCase()].responses;
      const [, success] = Object.entries<any>(responses).find(([s]) => s.startsWith("2")) ?? [];
      const schema = success.content["application/json"].schema;
      return schemaErrors(closed, schema, example).map((error) => `${name}: ${error}`);
    });
    expect(problems).toEqual([]);
  });

  it("keeps no exception that no longer applies", async () => {
    const app = buildApp();
    const document = await documentOf(app);
    const strict = contractViolations(document, servedRoutes(app.routes), {
      undocumented: [],
      bodyless: [],
      freeForm: [],
    });
    const listed = [...EXCEPTIONS.undocumented, ...EXCEPTIONS.bodyless, ...EXCEPTIONS.freeForm];
    const unused = listed.filter((entry) => !strict.some((problem) => problem.startsWith(entry)));
    expect(unused).toEqual([]);
  });
});

describe("the contract check", () => {
  /** A one-route app that follows every rule, plus whatever `extend` adds. */
  function tinyApp(extend: (app: OpenAPIHono) => void) {
    const app = new OpenAPIHono();
    const Widget = z.object({ id: z.string() }).openapi("Widget");
    const CreateWidget = z.object({ name: z.string() }).openapi("CreateWidget");
    app.openapi(
      createRoute({
        method: "post",
        path: "/v1/widgets",
        summary: "Create a widget",
        request: { body: jsonBody(CreateWidget) },
        responses: { 200: json(Widget, "The widget"), ...errorResponses(400) },
      }),
      (c) => c.json({ id: "w_1" }, 200),
    );
    extend(app);
    serveOpenApiDocument(app as OpenAPIHono<any>);
    return app;
  }

  async function problemsOf(app: OpenAPIHono) {
    const document = await documentOf(app as OpenAPIHono<any>);
    return contractViolations(document, servedRoutes(app.routes), {
      undocumented: [
        "GET /openapi.json",
        // The console's sign-in: browser navigations (redirects, an HTML refusal page) between the
        // identity provider and the console, not API operations; docs/console.md documents them.
        "GET /console/auth/login",
        "GET /console/auth/callback",
        "POST /console/auth/logout",
      ],
      bodyless: [],
      freeForm: [],
    });
  }

  it("passes a documented route", async () => {
    expect(await problemsOf(tinyApp(() => {}))).toEqual([]);
  });

  it("flags a route served outside the document", async () => {
    const app = tinyApp((app) => app.post("/v1/secret", (c) => c.json({ ok: true })));
    expect(await problemsOf(app)).toEqual([
      "POST /v1/secret: served but not in the document (define it with createRoute)",
    ]);
  });

  it("flags a write without a body schema, a free-form answer and an untyped error", async () => {
    const app = tinyApp((app) =>
      app.openapi(
        createRoute({
          method: "post",
          path: "/v1/gadgets/{id}",
          summary: "Create a gadget",
          responses: {
            200: json(z.record(z.string(), z.unknown()), "Anything"),
            404: { description: "Not found", content: { "text/plain": { schema: z.string() } } },
          },
        }),
        (c) => c.json({}, 200),
      ),
    );
    expect(await problemsOf(app)).toEqual([
      "POST /v1/gadgets/{id}: path parameter id not declared (request.params)",
      "POST /v1/gadgets/{id}: a write without a requestBody (document its body schema)",
      'POST /v1/gadgets/{id} 200 application/json: an inline schema; name it with .openapi("Name")',
      'POST /v1/gadgets/{id} 404 text/plain: an inline schema; name it with .openapi("Name")',
      "POST /v1/gadgets/{id} 404 text/plain: an error answers the ErrorResponse envelope",
    ]);
  });

  it("flags a free-form member of a component and an example its schema refuses", async () => {
    const Loose = z
      .object({ data: z.record(z.string(), z.unknown()), n: z.number().int() })
      .openapi("Loose", { example: { data: {}, n: 1.5 } });
    const app = tinyApp((app) =>
      app.openapi(
        createRoute({
          method: "get",
          path: "/v1/loose",
          summary: "Read a loose thing",
          responses: { 200: json(Loose, "Loose"), 500: json(ErrorSchema, "Error") },
        }),
        (c) => c.json({ data: {}, n: 1 }, 200),
      ),
    );
    expect(await problemsOf(app)).toEqual([
      'GET /v1/loose 200 application/json: the example is invalid: #/n: Instance type "number" is invalid. Expected "integer".',
      "Loose.data: a free-form object; give it a schema (or list it as free-form)",
    ]);
  });
});

describe("the closed document the worker test validates answers against", () => {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

  it("refuses a member the document does not name, in a plain and in an extended object", async () => {
    const closed = closedDocument(await documentOf(buildApp()));
    const notFound = { error: "not_found", message: "Nothing with this id exists." };
    expect(schemaErrors(closed, ref("ErrorResponse"), notFound)).toEqual([]);
    expect(schemaErrors(closed, ref("ErrorResponse"), { ...notFound, hint: 1 })).toEqual([
      "#/hint: False boolean schema.",
    ]);
    const created = {
      object: "webhook_endpoint",
      id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
      secret: "whsec_x",
    };
    const errors = (value: unknown) => schemaErrors(closed, ref("CreatedWebhookEndpoint"), value);
    expect(errors({ ...created, surprise: true })).toContain("#/surprise: False boolean schema.");
    expect(errors(created).some((error) => error.startsWith("#/surprise"))).toBe(false);
  });
});
