import { beforeAll, describe, expect, it } from "vitest";
import { closedDocument, schemaErrors } from "../support/openapi-contract";
import { callRaw, newOrg, type TestOrg } from "./support/api";
import { ROUTES, type RouteCase } from "./support/routes";

// The document's response schemas against what the Worker really answers: one representative
// call of every route (the route table's body and resource), its status documented and its body
// valid against the schema documented for that status (docs/api.md, "The OpenAPI document").

type Json = Record<string, any>;

/** The public routes, called with made-up parameters: their answers are checked all the same. */
const PUBLIC: RouteCase[] = [
  { method: "GET", path: "/", scope: null },
  { method: "GET", path: "/health", scope: null },
  { method: "GET", path: "/.well-known/jwks.json", scope: null },
  { method: "GET", path: "/v1/trust-list", scope: null },
  { method: "GET", path: `/v1/verify/artifact?digest=sha256:${"ab".repeat(32)}`, scope: null },
  { method: "GET", path: "/v1/transparency/logs/{logId}", scope: null },
  { method: "GET", path: "/v1/transparency/logs/{logId}/checkpoints", scope: null },
  { method: "GET", path: "/v1/transparency/proofs/{leafHash}", scope: null },
];

/**
 * The routes whose table call cannot succeed: its body names an agent, a principal, a set or a
 * grant that does not exist. Their error answers are checked against the document all the same.
 */
const NOT_SUCCESS = new Set([
  "POST /v1/agents",
  "POST /v1/agents/verify-card",
  "POST /v1/evals/run",
  "POST /v1/history/transactions",
  "POST /v1/action-mandates",
  "POST /v1/action-grants/redeem",
  "POST /v1/sessions",
  "POST /v1/sessions/{id}/events",
]);

/** The request a route is called with: the document's own example for POST /v1/assess. */
function bodyFor(route: RouteCase, document: Json): unknown {
  if (route.method !== "POST" || route.path !== "/v1/assess") return route.body;
  return document.paths["/v1/assess"].post.requestBody.content["application/json"].example;
}

function pathFor(route: RouteCase, made: string | Record<string, string> | undefined): string {
  const named = typeof made === "string" ? { id: made } : (made ?? {});
  return route.path.replace(
    /\{(\w+)\}/g,
    (_, name: string) => named[name] ?? "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
  );
}

function documentedPath(route: RouteCase): string {
  return route.path.split("?")[0] as string;
}

describe("every route answers what the document says", () => {
  let document: Json;
  let org: TestOrg;
  let key: string;
  /** For the test-only routes, which refuse a live key. */
  let testKey: string;

  beforeAll(async () => {
    // Closed: a member the document does not name is a disagreement too.
    document = closedDocument((await callRaw("/openapi.json")).json);
    org = await newOrg();
    ({ key } = await org.key());
    ({ key: testKey } = await org.key(undefined, "test"));
  });

  it.each([...ROUTES, ...PUBLIC])("$method $path", async (route) => {
    const made = route.resource ? await route.resource(org) : undefined;
    const credential =
      route.sessionOnly || route.orgless
        ? { token: org.token }
        : route.scope
          ? { key: route.testOnly ? testKey : key }
          : {};
    const res = await callRaw(pathFor(route, made), {
      method: route.method,
      body: bodyFor(route, document),
      ...credential,
    });
    const operation = document.paths[documentedPath(route)]?.[route.method.toLowerCase()];
    expect(operation, "documented").toBeDefined();
    const response = operation.responses[String(res.status)];
    expect(response, `${res.status} is documented: ${res.text.slice(0, 300)}`).toBeDefined();
    const [type, media] = Object.entries<Json>(response.content ?? {})[0] ?? [];
    if (type === "application/json") {
      expect(schemaErrors(document, media?.schema, res.json), res.text.slice(0, 500)).toEqual([]);
    } else {
      expect(res.headers.get("content-type") ?? "").toContain(type ?? "");
    }
    const name = `${route.method} ${route.path}`;
    if (route.scope && !NOT_SUCCESS.has(name)) expect(res.status, res.text).toBeLessThan(300);
  });
});
