/** The Neon SQL-over-HTTP wire format, as `@neondatabase/serverless` 1.2.0 speaks it. */
import type { IncomingHttpHeaders } from "node:http";
import type { IsolationLevel, SqlRequest, SqlStatement, StatementResult } from "./backend";

/** The request itself is malformed (answered 400 with a message, like Neon does). */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** The user that means "no SET ROLE": run as the endpoint's own connection role. */
export const OWNER_ROLE = "owner";

const ISOLATION_LEVELS: readonly IsolationLevel[] = [
  "ReadUncommitted",
  "ReadCommitted",
  "RepeatableRead",
  "Serializable",
];

// The fields the driver copies from a 400 answer onto its NeonDbError.
const ERROR_FIELDS = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

export interface PostgresError {
  message: string;
  code: string;
  severity: string;
}

/** Both node-postgres and PGlite throw errors carrying the backend's ErrorResponse fields. */
export function isPostgresError(error: unknown): error is PostgresError & Record<string, unknown> {
  if (!(error instanceof Error)) return false;
  const fields = error as unknown as Record<string, unknown>;
  return typeof fields.code === "string" && typeof fields.severity === "string";
}

export function postgresErrorBody(error: PostgresError & Record<string, unknown>): object {
  const body: Record<string, unknown> = { message: error.message };
  for (const field of ERROR_FIELDS) {
    if (error[field] !== undefined) body[field] = error[field];
  }
  return body;
}

export function resultBody(request: SqlRequest, results: StatementResult[]): object {
  const shaped = results.map((result) => ({ ...result, rowAsArray: true }));
  if (request.batch) return { results: shaped };
  const [single] = shaped;
  if (single === undefined) throw new Error("a single query produced no result");
  return single;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function booleanHeader(headers: IncomingHttpHeaders, name: string): boolean | undefined {
  const value = header(headers, name);
  if (value === undefined) return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new ProtocolError(`${name} must be "true" or "false", got "${value}"`);
}

function roleFromConnectionString(headers: IncomingHttpHeaders): string | null {
  const connectionString = header(headers, "Neon-Connection-String");
  if (connectionString === undefined) throw new ProtocolError("missing Neon-Connection-String");
  let user: string;
  try {
    user = decodeURIComponent(new URL(connectionString).username);
  } catch {
    throw new ProtocolError("Neon-Connection-String is not a valid URL");
  }
  if (user === "") throw new ProtocolError("Neon-Connection-String has no user");
  if (user.includes("\0")) throw new ProtocolError("invalid user in Neon-Connection-String");
  return user === OWNER_ROLE ? null : user;
}

function parseStatement(value: unknown, where: string): SqlStatement {
  if (typeof value !== "object" || value === null) {
    throw new ProtocolError(`${where} must be an object`);
  }
  const { query, params = [] } = value as { query?: unknown; params?: unknown };
  if (typeof query !== "string") throw new ProtocolError(`${where}.query must be a string`);
  if (!Array.isArray(params)) throw new ProtocolError(`${where}.params must be an array`);
  return {
    query,
    params: params.map((param: unknown, index) => {
      if (param === null || typeof param === "string") return param;
      if (typeof param === "number" || typeof param === "boolean") return String(param);
      throw new ProtocolError(`${where}.params[${index}] must be a string or null`);
    }),
  };
}

function parseBody(body: string): Pick<SqlRequest, "statements" | "batch"> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ProtocolError("request body is not valid JSON");
  }
  if (typeof parsed === "object" && parsed !== null && "queries" in parsed) {
    const { queries } = parsed;
    if (!Array.isArray(queries)) throw new ProtocolError("queries must be an array");
    const statements = queries.map((query: unknown, i) => parseStatement(query, `queries[${i}]`));
    return { statements, batch: true };
  }
  return { statements: [parseStatement(parsed, "body")], batch: false };
}

/** Only the driver's raw-text, array-mode answers are implemented; refuse the other shapes. */
function requireRawArrayMode(headers: IncomingHttpHeaders): void {
  for (const name of ["Neon-Raw-Text-Output", "Neon-Array-Mode"]) {
    if (header(headers, name) !== "true")
      throw new ProtocolError(`only "${name}: true" is supported`);
  }
}

function isolationLevel(headers: IncomingHttpHeaders): IsolationLevel | undefined {
  const value = header(headers, "Neon-Batch-Isolation-Level");
  if (value === undefined) return undefined;
  const level = ISOLATION_LEVELS.find((candidate) => candidate === value);
  if (level === undefined) throw new ProtocolError(`unknown isolation level "${value}"`);
  return level;
}

export function parseSqlRequest(headers: IncomingHttpHeaders, body: string): SqlRequest {
  requireRawArrayMode(headers);
  const role = roleFromConnectionString(headers);
  const options = {
    isolationLevel: isolationLevel(headers),
    readOnly: booleanHeader(headers, "Neon-Batch-Read-Only"),
    deferrable: booleanHeader(headers, "Neon-Batch-Deferrable"),
  };
  return { role, options, ...parseBody(body) };
}
