import type {
  IsolationLevel,
  SqlRequest,
  SqlStatement,
  StatementResult,
  TransactionOptions,
} from "./backend";

/** One exclusive database session for the duration of a request. */
export interface Session {
  /** Simple-protocol SQL for transaction control; may hold several statements. */
  execute(sql: string): Promise<void>;
  /** Extended-protocol statement with text parameters, like Neon runs it. */
  query(statement: SqlStatement): Promise<StatementResult>;
}

const ISOLATION_SQL: Record<IsolationLevel, string> = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function beginSql(options: TransactionOptions): string {
  const parts = ["BEGIN"];
  if (options.isolationLevel !== undefined) {
    parts.push(`ISOLATION LEVEL ${ISOLATION_SQL[options.isolationLevel]}`);
  }
  if (options.readOnly !== undefined) parts.push(options.readOnly ? "READ ONLY" : "READ WRITE");
  if (options.deferrable !== undefined) {
    parts.push(options.deferrable ? "DEFERRABLE" : "NOT DEFERRABLE");
  }
  return parts.join(" ");
}

function openTransactionSql(request: SqlRequest): string {
  const begin = beginSql(request.options);
  // SET LOCAL: the role ends with the transaction, so it can never leak into the next request.
  return request.role === null
    ? begin
    : `${begin}; SET LOCAL ROLE ${quoteIdentifier(request.role)}`;
}

/**
 * Runs every request, even a single query, as one transaction under the requested role:
 * all statements commit together or none does.
 */
export async function runTransaction(
  session: Session,
  request: SqlRequest,
  onStatement: () => void,
): Promise<StatementResult[]> {
  const results: StatementResult[] = [];
  try {
    await session.execute(openTransactionSql(request));
    for (const statement of request.statements) {
      onStatement();
      results.push(await session.query(statement));
    }
    await session.execute("COMMIT");
    return results;
  } catch (error) {
    // The original error is what the client must see; a failed ROLLBACK adds nothing to it.
    await session.execute("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/**
 * What resets a session between requests. Sessions are reused across requests (PGlite has only
 * one), so a session-level `SET` or temp table from one request must not reach the next one,
 * possibly for another tenant.
 *
 * This is `DISCARD ALL` without `DISCARD PLANS`: every piece of session state a request can
 * leave behind, but not the cached plans, which hold none. Dropping them made every request
 * plan its triggers' and policies' statements again, which a pooled Neon connection does not
 * do (a transaction-mode pooler resets nothing between transactions): on PGlite the ledger's
 * batch insert took 2.9 ms instead of 1.9 (docs/performance.md, "The local endpoint's reset").
 *
 * The endpoint's own session user is a superuser, so a request may change the session's
 * authorization too. `owner` names that user when `SET SESSION AUTHORIZATION DEFAULT` cannot
 * find it: PGlite's single-user session has no default to return to, and kept whatever user a
 * request had set, even under `DISCARD ALL`. `RESET ALL` then resets the role with the other
 * settings.
 */
export function resetSessionSql(owner: string | null): string {
  return [
    "CLOSE ALL",
    owner === null
      ? "SET SESSION AUTHORIZATION DEFAULT"
      : `SET SESSION AUTHORIZATION ${quoteIdentifier(owner)}`,
    "RESET ALL",
    "DEALLOCATE ALL",
    "UNLISTEN *",
    "SELECT pg_advisory_unlock_all()",
    "DISCARD TEMP",
    "DISCARD SEQUENCES",
  ].join("; ");
}
