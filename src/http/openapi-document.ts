import type { OpenAPIHono } from "@hono/zod-openapi";
import { sample } from "openapi-sampler";
import { API_VERSION } from "../env";
import { bodyLimitOf, sizeText } from "./body-limit";
import type { AppEnv } from "./context";
import { errorReference } from "./error-reference";
import { gettingStarted } from "./getting-started";
import { RESPONSE_EXAMPLES } from "./openapi-examples";
import { withUnionTypes } from "./openapi-types";
import { rulesReference } from "./rules-reference";

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;
type Media = { schema?: unknown; example?: unknown };
type Content = Record<string, Media>;

/**
 * Gives every JSON body of the document (request bodies and success responses) an example:
 * the one written for the operation in openapi-examples/, else the one written on its schema
 * (`.openapi({ example })`), else one built from the schema itself by openapi-sampler
 * (test/node/openapi-contract.test.ts validates each one against its schema).
 */
function withExamples(document: Document): Document {
  const sampled = (media: Media) => {
    if (media.schema === undefined || media.example !== undefined) return;
    // openapi-sampler's types name draft-07 schemas; the document's are OpenAPI 3.1 ones.
    media.example = sample(
      media.schema as Parameters<typeof sample>[0],
      { enablePatterns: true },
      document,
    );
  };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) {
        continue;
      }
      const written = RESPONSE_EXAMPLES[`${method.toUpperCase()} ${path}`];
      const body = operation.requestBody as { content?: Content } | undefined;
      for (const media of Object.values(body?.content ?? {})) sampled(media);
      const responses = operation.responses as Record<string, { content?: Content }>;
      for (const [status, response] of Object.entries(responses)) {
        if (!status.startsWith("2")) continue;
        const json = response.content?.["application/json"];
        if (json && written !== undefined) json.example = written;
        for (const media of Object.values(response.content ?? {})) sampled(media);
      }
    }
  }
  return document;
}

/**
 * The body limit is the whole app's (src/http/body-limit.ts), with the few routes that take
 * more named there: every operation that takes a body, and every write, documents its 413.
 */
function withBodyLimit(document: Document): Document {
  const tooLarge = (bytes: number) => ({
    description: `The request body is over ${sizeText(bytes)} (docs/api.md, Limits)`,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
  });
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) {
        continue;
      }
      if (method === "get" && operation.requestBody === undefined) continue;
      const responses = operation.responses as Record<string, unknown>;
      responses["413"] ??= tooLarge(bodyLimitOf(method, path));
    }
  }
  return document;
}

/**
 * Serves the OpenAPI 3.1 document at `/openapi.json`, built once per isolate: it is a pure
 * function of the routes (docs/api.md, "The OpenAPI document").
 */
export function serveOpenApiDocument(app: OpenAPIHono<AppEnv>): void {
  let document: Document | undefined;
  app.get("/openapi.json", (c) => {
    document ??= withUnionTypes(
      withBodyLimit(
        withExamples(
          app.getOpenAPI31Document({
            openapi: "3.1.0",
            info: {
              title: "Agent Action Risk Assessment API",
              version: API_VERSION,
              description: [gettingStarted(), rulesReference(), errorReference()].join("\n\n"),
            },
          }),
        ),
      ),
    );
    return c.json(document);
  });
}
