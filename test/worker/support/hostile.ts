import { env } from "cloudflare:test";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorStatus } from "../../../src/errors";
import { callRaw, newOrg, type TestOrg } from "./api";
import { fetchWith, type Json } from "./assess";
import { ROUTES, type RouteCase } from "./routes";

/**
 * The hostile-input suite (issue 17, item 8), shared by test/worker/hostile-inputs-*.test.ts:
 * every route of the route table, plus the public ones, called with generated path parameters,
 * query strings and bodies by a caller that holds every scope the route needs, so the input
 * reaches validation and beyond. The contract: never a 5xx, and every 4xx is the error
 * envelope, `{error, details?}`, with a code of the table in src/errors.ts and its status.
 */

/** Requests per route; with the route table's 80-odd routes, over 10,000 across the suite. */
const PER_ROUTE = 144;
/** Requests sent at once, in one property run. */
const BATCH = 8;

/** The public routes: no credential, but input all the same. */
const PUBLIC_ROUTES: RouteCase[] = [
  { method: "GET", path: "/", scope: null },
  { method: "GET", path: "/health", scope: null },
  { method: "GET", path: "/.well-known/jwks.json", scope: null },
  { method: "GET", path: "/v1/trust-list", scope: null },
  { method: "GET", path: "/v1/verify/artifact", scope: null },
  { method: "GET", path: "/v1/transparency/logs/{logId}", scope: null },
  { method: "GET", path: "/v1/transparency/logs/{logId}/checkpoints", scope: null },
  { method: "GET", path: "/v1/transparency/logs/{logId}/consistency", scope: null },
  { method: "GET", path: "/v1/transparency/proofs/{leafHash}", scope: null },
  { method: "POST", path: "/v1/billing/webhooks/stripe", scope: null, body: { type: "x" } },
];

const PUBLIC = new Set(PUBLIC_ROUTES.map((r) => r.path));

/** What a request was, to name it when it fails. */
interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

// --- Generators ---

/** Strings that have broken parsers, drivers and databases before. */
const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\u202e",
  "\ufeff",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-1",
  "0",
  "1e309",
  "-0",
  "0x10",
  "9".repeat(40),
  "true",
  "[]",
  "{}",
  "' or 1=1 --",
  '"; drop table orgs; --',
  "$1",
  "%",
  "%00",
  "%zz",
  "..",
  "../../etc/passwd",
  "\\",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "0190B7D2-8C5E-7C4A-9D3E-1F2A3B4C5D6E",
  "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e ",
  "{0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e}",
  "0190b7d28c5e7c4a9d3e1f2a3b4c5d6e",
  "2026-13-45T25:61:61Z",
  "0000-01-01T00:00:00Z",
  "275760-09-13T00:00:00.001Z",
  "2026-01-01",
  "2026-01-01T00:00:00",
  "1970-01-01T00:00:00+14:00",
  "sha256:",
  `sha256:${"g".repeat(64)}`,
  "e30.e30.",
  "..",
  "x".repeat(2_000),
  "é".repeat(600),
  "🦀".repeat(300),
];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uuid() },
  {
    weight: 1,
    arbitrary: fc.date().map((d) => (Number.isNaN(d.getTime()) ? "" : d.toISOString())),
  },
);

const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -1,
    -0,
    1.5,
    2 ** 31,
    2 ** 31 - 1,
    2 ** 53,
    2 ** 63,
    -(2 ** 63),
    1e308,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ),
);

/** Any JSON value a caller could send, the hostile ones favoured. */
const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.constantFrom("__proto__", "constructor", "x", ""), nastyString, {
      maxKeys: 3,
    }),
  },
);

/** A path parameter: a real id of the org, another id, or hostile text, percent-encoded. */
function pathParam(real: string | undefined) {
  return fc.oneof(
    { weight: real ? 3 : 0, arbitrary: fc.constant(real ?? "") },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 4, arbitrary: nastyString.map((s) => encodeURIComponent(toWellFormed(s))) },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~:@!$&'()*+,;=-]{0,80}$/) },
    { weight: 1, arbitrary: fc.constantFrom("%", "%2F", "%2e%2e", "%C0%AF", "a%00b", ";x=1") },
  );
}

/** A query string over the route's own parameters and some others, values hostile. */
function queryOf(known: string[]) {
  const name = fc.oneof(
    {
      weight: known.length > 0 ? 4 : 0,
      arbitrary: fc.constantFrom(...(known.length ? known : ["x"])),
    },
    { weight: 1, arbitrary: fc.constantFrom("limit", "cursor", "__proto__", "a[b]", "", "x") },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
  const value = fc.oneof(
    { weight: 3, arbitrary: nastyString },
    { weight: 1, arbitrary: nastyNumber.map(String) },
  );
  return fc.array(fc.tuple(name, value), { maxLength: 5 }).map((pairs) => {
    const params = new URLSearchParams();
    for (const [k, v] of pairs) params.append(toWellFormed(k), toWellFormed(v));
    const text = params.toString();
    return text ? `?${text}` : "";
  });
}

/** A body: the route's example with fields replaced, added or removed, or anything at all. */
function bodyOf(route: RouteCase, fields: string[]) {
  const example = (route.body ?? {}) as Json;
  const names = [...new Set([...Object.keys(example), ...fields])];
  const mutated = fc
    .record({
      replace: fc.dictionary(fc.constantFrom(...(names.length ? names : ["x"])), nastyJson, {
        maxKeys: 3,
      }),
      add: fc.dictionary(fc.string({ maxLength: 10 }), nastyJson, { maxKeys: 2 }),
      remove: fc.subarray(names),
    })
    .map(({ replace, add, remove }) => {
      const body: Json = { ...example, ...add };
      for (const key of remove) delete body[key];
      // defineProperty: a key named __proto__ is a field, not the prototype.
      for (const [key, value] of Object.entries(replace)) {
        Object.defineProperty(body, key, { value, enumerable: true, writable: true });
      }
      return JSON.stringify(body);
    });
  const text = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      "",
      "null",
      "[]",
      "0",
      '"x"',
      "{",
      '{"a":1,"a":2}',
      '{"a":"\\u0000"}',
      '{"a":"\\ud800"}',
      "[".repeat(5_000) + "]".repeat(5_000),
      `{"a":${"1".repeat(400)}}`,
      JSON.stringify({ ...example, pad: "x".repeat(2_000_000) }),
    ),
  );
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: text },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      "text/plain",
      "application/json; charset=utf-16",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ),
  },
);

/** Lone surrogates cannot go into a URL; keep the rest of the text. */
function toWellFormed(s: string): string {
  return s.replace(/[\ud800-\udfff]/g, (c, i: number) => {
    const code = c.charCodeAt(0);
    const next = s.charCodeAt(i + 1);
    const prev = s.charCodeAt(i - 1);
    const paired =
      (code < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) ||
      (code >= 0xdc00 && prev >= 0xd800 && prev < 0xdc00);
    return paired ? c : "\ufffd";
  });
}

// --- What the API documents about each route ---

interface Documented {
  query: string[];
  fields: string[];
}

/** Query parameter names and top-level body fields, from the OpenAPI document. */
function documented(openapi: Json, route: RouteCase): Documented {
  const operation = openapi.paths?.[route.path]?.[route.method.toLowerCase()] ?? {};
  const query = ((operation.parameters ?? []) as Json[])
    .filter((p) => p.in === "query")
    .map((p) => p.name as string);
  let schema = operation.requestBody?.content?.["application/json"]?.schema ?? {};
  if (schema.$ref) {
    schema = openapi.components?.schemas?.[String(schema.$ref).split("/").pop() as string] ?? {};
  }
  return { query, fields: Object.keys(schema.properties ?? {}) };
}

// --- The suite ---

/**
 * One shard of the route table (and of the public routes), so vitest runs the shards in
 * parallel: each file's requests take time, and the time of a request grows with what its
 * file has already done in the runtime.
 */
export function hostileInputTests(shard: number, shards: number) {
  const all = [...ROUTES, ...PUBLIC_ROUTES];
  const routes = all.filter((_, i) => i % shards === shard - 1);
  let org: TestOrg;
  let key: string;
  /** The key of the test-only routes, which refuse a live one before reading their input. */
  let testKey: string;
  let openapi: Json;
  let sent = 0;
  const byStatus = new Map<number, number>();

  beforeAll(async () => {
    org = await newOrg();
    ({ key } = await org.key());
    ({ key: testKey } = await org.key(undefined, "test"));
    openapi = (await callRaw("/openapi.json")).json;
  });

  afterAll(() => {
    const statuses = [...byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
    console.log(
      `hostile inputs, shard ${shard}/${shards}: ${sent} requests to ${routes.length} routes (${statuses.join(", ")})`,
    );
  });

  describe.each(routes)("$method $path", (route) => {
    it(`answers ${PER_ROUTE} generated requests with no 5xx, every 4xx in the error envelope`, async () => {
      const made = route.resource ? await route.resource(org) : undefined;
      const real = typeof made === "string" ? { id: made } : made;
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      const docs = documented(openapi, route);
      const credential: Record<string, string> = PUBLIC.has(route.path)
        ? {}
        : route.sessionOnly
          ? { authorization: `Bearer ${org.token}` }
          : { "x-api-key": route.testOnly ? testKey : key };
      const hasBody = route.method !== "GET";
      const request = fc
        .record({
          params: fc.tuple(...names.map((n) => pathParam(real?.[n]))),
          query: queryOf(docs.query),
          body: hasBody ? bodyOf(route, docs.fields) : fc.constant(undefined),
          type: contentType,
        })
        .map(({ params, query, body, type }): Sent => {
          let i = 0;
          const path = route.path.replace(/\{\w+\}/g, () => params[i++] as string) + query;
          const headers = {
            ...credential,
            ...(type && body !== undefined ? { "content-type": type } : {}),
          };
          return { method: route.method, path, headers, ...(body === undefined ? {} : { body }) };
        });

      const failures: string[] = [];
      let answered = 0;
      // Named in a failure, so the same requests can be generated again (fc.assert's `seed`).
      const seed = Math.floor(Math.random() * 2 ** 31);
      await fc
        .assert(
          fc.asyncProperty(
            fc.array(request, { minLength: BATCH, maxLength: BATCH }),
            async (batch) => {
              const answers = await Promise.all(batch.map(send));
              sent += batch.length;
              answered += batch.length;
              const wrong = answers.flatMap((answer, i) => {
                byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
                const problem = problemOf(answer);
                return problem ? [`${problem}\n  ← ${shown(batch[i] as Sent)}`] : [];
              });
              failures.push(...wrong);
              return wrong.length === 0;
            },
          ),
          { numRuns: PER_ROUTE / BATCH, endOnFailure: true, seed },
        )
        // A failed property is reported below, with the requests; anything else (a request
        // that could not even be sent) fails the test as it is.
        .catch((error) => {
          if (failures.length === 0) throw error;
        });
      expect(failures.slice(0, 5), `fast-check seed ${seed}`).toEqual([]);
      expect(answered).toBe(PER_ROUTE);
    });
  });
}

async function send(request: Sent) {
  return fetchWith({}, request.path, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
}

const ENVELOPE_MEMBERS = ["error", "message", "details", "doc_url"];

/** What is wrong with an answer, or null: a 5xx, or a 4xx that is not the error envelope. */
function problemOf(answer: { status: number; json: any; text: string }): string | null {
  const { status, json } = answer;
  if (status >= 500) return `${status} ${answer.text.slice(0, 300)}`;
  if (status < 400) return null;
  const envelope =
    json !== null &&
    typeof json === "object" &&
    !Array.isArray(json) &&
    Object.keys(json).every((k) => ENVELOPE_MEMBERS.includes(k)) &&
    typeof json.error === "string" &&
    (errorStatus as Record<string, number>)[json.error] === status &&
    typeof json.message === "string" &&
    json.message.length > 0 &&
    json.doc_url === `${env.PUBLIC_BASE_URL}/docs#description/${json.error}`;
  return envelope ? null : `${status} not the error envelope: ${answer.text.slice(0, 300)}`;
}

function shown(request: Sent): string {
  const body =
    request.body && request.body.length > 300 ? `${request.body.slice(0, 300)}…` : request.body;
  // The credential is the suite's own; what varies is the rest.
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([k]) => k !== "authorization" && k !== "x-api-key"),
  );
  return `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(headers)} ${body ?? ""}`;
}
