import { mkdirSync } from "node:fs";
import { PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { assertMigrationHistory } from "../migration-history";
import {
  type Backend,
  BackendUnavailableError,
  type SqlRequest,
  type SqlStatement,
  type StatementResult,
} from "./backend";
import { SerialQueue } from "./serial-queue";
import { resetSessionSql, runTransaction, type Session } from "./transaction";

type RawRow = (string | null)[];

const identity = (value: string): string => value;

/**
 * PGlite parses values by type OID (and serializes params by inferred type, e.g. it rejects a
 * bytea param that is not a Uint8Array). The driver does both itself, so every type the
 * instance knows gets an identity parser/serializer; types PGlite does not know are passed
 * through as text anyway. Set on the instance itself (its own copies of the maps), not per
 * query: a query's own `parsers` are merged into a new object with the instance's on every
 * query, a hundred-odd entries each time.
 */
function readRawText(db: PGlite): QueryOptions {
  const oids = new Set([...Object.keys(db.parsers), ...Object.keys(db.serializers)]);
  for (const oid of oids) {
    db.parsers[oid] = identity;
    db.serializers[oid] = identity;
  }
  return { rowMode: "array" };
}

function toStatementResult(result: Results<RawRow>): StatementResult {
  return {
    command: result.command ?? "",
    rowCount: result.rowCount ?? null,
    rows: result.rows,
    // PGlite only reports name and type; the driver only reads those two.
    fields: result.fields.map(({ name, dataTypeID }) => ({
      name,
      tableID: 0,
      columnID: 0,
      dataTypeID,
      dataTypeSize: -1,
      dataTypeModifier: -1,
      format: "text",
    })),
  };
}

/**
 * Rows written since the last ANALYZE after which the planner's statistics are refreshed.
 * PGlite has no autovacuum daemon, so without this a table filled after start-up (a history
 * import of 50,000 payments, the network's contributions) keeps the statistics of an empty
 * one, and the planner picks nested loops that PostgreSQL's autoanalyze would have spared it:
 * a training run's network read took minutes where it takes seconds analyzed. PostgreSQL
 * analyzes a table after 50 rows plus 10 % of it change; one threshold for the whole database
 * is that rule's spirit at the embedded database's scale.
 */
export const ANALYZE_AFTER_ROWS = 10_000;

const WRITES = new Set(["INSERT", "UPDATE", "DELETE", "MERGE", "COPY"]);

class PgliteBackend implements Backend {
  readonly name = "pglite";
  // PGlite is a single session: a request's BEGIN..COMMIT must never interleave with another's.
  readonly #queue = new SerialQueue();
  readonly #session: Session;
  readonly #reset: string;
  #closed = false;
  /** Rows written since the last ANALYZE, and whether one is queued. */
  #written = 0;
  #analyzing = false;

  /** `owner`: the session's own user, which every request's reset returns to. */
  constructor(
    private readonly db: PGlite,
    owner: string,
  ) {
    this.#reset = resetSessionSql(owner);
    const options = readRawText(db);
    this.#session = {
      execute: async (sql) => {
        await db.exec(sql);
      },
      query: async ({ query, params }: SqlStatement) =>
        toStatementResult(await db.query<RawRow>(query, params, options)),
    };
  }

  run(request: SqlRequest, onStatement: () => void): Promise<StatementResult[]> {
    if (this.#closed) return Promise.reject(new BackendUnavailableError("PGlite is closed"));
    const answered = this.#queue.run(async () => {
      try {
        return await runTransaction(this.#session, request, onStatement);
      } finally {
        await this.#session.execute(this.#reset);
      }
    });
    return answered.then((results) => {
      this.#count(results);
      return results;
    });
  }

  /** Counts a transaction's written rows; past the threshold, queues an ANALYZE behind it. */
  #count(results: readonly StatementResult[]) {
    for (const result of results) {
      if (WRITES.has(result.command)) this.#written += result.rowCount ?? 0;
    }
    if (this.#written < ANALYZE_AFTER_ROWS || this.#analyzing || this.#closed) return;
    this.#analyzing = true;
    this.#written = 0;
    // As the owner (the session's own user after every reset), between two requests.
    void this.#queue
      .run(() => this.db.exec("ANALYZE"))
      .catch(() => undefined)
      .finally(() => {
        this.#analyzing = false;
      });
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    // Queued behind in-flight requests; closing removes postmaster.pid from the data directory.
    return this.#queue.run(() => this.db.close());
  }
}

export async function openPgliteBackend(options: {
  dataDir?: string;
  migrationsFolder: string;
  log: (line: string) => void;
}): Promise<Backend> {
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  const db = await PGlite.create(options.dataDir);
  let owner: string;
  try {
    // The user every request's reset returns the session to (`resetSessionSql`).
    const [self] = (await db.query<{ user: string }>("select session_user as user")).rows;
    if (!self) throw new Error("PGlite named no session user");
    owner = self.user;
    // An existing data directory made by another migration history is refused, not migrated.
    await assertMigrationHistory(
      async (sql) => (await db.query<Record<string, unknown>>(sql)).rows,
      options.migrationsFolder,
    );
    await migrate(drizzle(db), { migrationsFolder: options.migrationsFolder });
  } catch (error) {
    await db.close();
    throw error;
  }
  options.log(`sql-endpoint: PGlite ready (${options.dataDir ?? "in memory"})`);
  return new PgliteBackend(db, owner);
}
