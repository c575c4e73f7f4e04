import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import { checkCount, importHistory, listImports } from "../history/import";
import { ROUTE_BODY_BYTES, sizeText } from "../http/body-limit";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { listOf, PageQuery } from "../schemas/common";
import {
  HistoryImport,
  HistoryRecord,
  HistoryRecordsNdjson,
  ImportHistoryRequest,
  MAX_HISTORY_RECORDS,
} from "../schemas/history";

const tags = ["History"];

const LIMIT = sizeText(ROUTE_BODY_BYTES["POST /v1/history/transactions"] ?? 0);

/**
 * The body is read and checked here and in the domain, not by the route's validator: a fault is
 * reported per record (`records.<i>.<path>`, with the record's index and id), the NDJSON form
 * has no JSON validator, and 10,000 records are checked once. So the document names the
 * schemas by reference, which the validator does not run.
 */
const transactions = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/history/transactions",
      tags,
      summary: "Import an org's payment history (docs/history.md)",
      description:
        `1 to ${MAX_HISTORY_RECORDS.toLocaleString("en")} records per call, as JSON ` +
        "`{records: [...]}` or NDJSON (`application/x-ndjson`, one record per line); the body " +
        `may reach ${LIMIT}. Idempotent by record id per mode: a record already stored with ` +
        "the same content is counted as `unchanged`, the same id with other content is 409 " +
        "`history_record_conflict` naming each. Any bad record (its schema, a time ahead of the " +
        "clock, a repeated id, an unknown agent) is a 400 listing every bad record by index, " +
        "and nothing of the call is stored. One `history.imported` ledger entry per call. " +
        "Imported records feed every window, velocity and payee statistic of `POST /v1/assess` " +
        "and never appear as assessments. Scope `policy:write`: history changes how the org's " +
        "payments are judged, as a policy does.",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: { $ref: "#/components/schemas/ImportHistoryRequest" },
            },
            "application/x-ndjson": {
              schema: { $ref: "#/components/schemas/HistoryRecordsNdjson" },
            },
          },
        },
      },
      responses: {
        201: json(HistoryImport, "The import: what the call stored and what it found unchanged"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { rateLimit: "expensive" },
  ),
);

const imports = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/history/imports",
    tags,
    summary: "List the history imports of the key's mode, newest first",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(HistoryImport, "HistoryImportList"), "A page of imports"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const NDJSON = "application/x-ndjson";

/** The media type of the request, without parameters (`; charset=utf-8`). */
function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** An NDJSON body's records, a line each (blank lines skipped); a line that is not JSON is a 400. */
function ndjsonRecords(text: string): unknown[] {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  checkCount(lines.length);
  const faults: { index: number; id: null; path: string; message: string; code: string }[] = [];
  const records = lines.map((line, index) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      faults.push({
        index,
        id: null,
        path: `records.${index}`,
        message: "the line is not JSON",
        code: "invalid_json",
      });
      return undefined;
    }
  });
  if (faults.length > 0) throw new ApiError("invalid_request", faults);
  return records;
}

/** A JSON body's records: `{records: [...]}` and nothing else. */
function jsonRecords(text: string): unknown[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json");
  }
  const records = (body as { records?: unknown } | null)?.records;
  if (typeof body !== "object" || body === null || !Array.isArray(records)) {
    throw new ApiError("invalid_request", [
      { path: "records", message: "the body must be {records: [...]}", code: "invalid_type" },
    ]);
  }
  const extra = Object.keys(body).filter((name) => name !== "records");
  if (extra.length > 0) {
    throw new ApiError(
      "invalid_request",
      extra.map((name) => ({
        path: name,
        message: "is not a member of the body",
        code: "unrecognized_keys",
      })),
    );
  }
  return records;
}

export function registerHistory(app: OpenAPIHono<AppEnv>) {
  // Named here: the routes' body refers to them, and no validator registers them.
  app.openAPIRegistry.register("ImportHistoryRequest", ImportHistoryRequest);
  app.openAPIRegistry.register("HistoryRecordsNdjson", HistoryRecordsNdjson);
  app.openAPIRegistry.register("HistoryRecord", HistoryRecord);

  app.openapi(transactions, async (c) => {
    const type = mediaType(c.req.header("content-type"));
    if (type !== "application/json" && type !== NDJSON) {
      throw new ApiError("invalid_request", [
        { path: "content-type", message: `must be application/json or ${NDJSON}` },
      ]);
    }
    const text = await c.req.text();
    const records = type === NDJSON ? ndjsonRecords(text) : jsonRecords(text);
    return c.json(await importHistory(c.var.tenant, records), 201);
  });

  app.openapi(imports, async (c) => {
    return c.json(await listImports(c.var.tenant, c.req.valid("query")), 200);
  });
}
