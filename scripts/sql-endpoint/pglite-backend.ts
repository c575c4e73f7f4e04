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
 * How often, at most, the endpoint asks which tables are due an ANALYZE. PGlite has no
 * autovacuum daemon, so without this a table filled after start-up (a history import of 50,000
 * payments, the network's contributions written by a function) keeps the statistics of an empty
 * one, and the planner picks nested loops that PostgreSQL's autoanalyze would have spared it: a
 * training run's network read took minutes where it takes seconds analyzed. The question is one
 * catalog read (about a millisecond) between two requests.
 */
export const ANALYZE_CHECK_MS = 1_000;

/**
 * PostgreSQL's autoanalyze rule, with its default settings: a table is due once more rows
 * changed since its last ANALYZE than 50 plus 10 % of the rows it had then
 * (`autovacuum_analyze_threshold`, `autovacuum_analyze_scale_factor`).
 */
const DUE_FOR_ANALYZE = `
  select format('%I.%I', s.schemaname, s.relname) as name
  from pg_stat_user_tables s
  join pg_class c on c.oid = s.relid
  where s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)`;

class PgliteBackend implements Backend {
  readonly name = "pglite";
  // PGlite is a single session: a request's BEGIN..COMMIT must never interleave with another's.
  readonly #queue = new SerialQueue();
  readonly #session: Session;
  readonly #reset: string;
  #closed = false;
  /** When the tables due an ANALYZE were last looked for, and whether a look is queued. */
  #checkedAt = 0;
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
    return answered.finally(() => this.#analyzeDue());
  }

  /** Queues, behind this request, an ANALYZE of the tables due one (at most once a second). */
  #analyzeDue() {
    const now = Date.now();
    if (now - this.#checkedAt < ANALYZE_CHECK_MS || this.#analyzing || this.#closed) return;
    this.#checkedAt = now;
    this.#analyzing = true;
    // As the owner (the session's own user after every reset), between two requests.
    void this.#queue
      .run(async () => {
        const due = await this.db.query<{ name: string }>(DUE_FOR_ANALYZE);
        if (due.rows.length > 0)
          await this.db.exec(`ANALYZE ${due.rows.map((r) => r.name).join(", ")}`);
      })
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
