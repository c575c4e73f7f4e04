import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { assertMigrationHistory } from "../migration-history";
import {
  type Backend,
  BackendUnavailableError,
  type SqlRequest,
  type SqlStatement,
  type StatementResult,
} from "./backend";
import { createFreshDatabase, type FreshDatabase } from "./fresh-database";
import { isPostgresError } from "./protocol";
import { resetSessionSql, runTransaction, type Session } from "./transaction";

type RawRow = (string | null)[];

// Per query, not pg.types.setTypeParser: other code in the same process may use pg normally.
const RAW_TEXT_TYPES: pg.CustomTypesConfig = {
  getTypeParser: (() => (value: string) => value) as pg.CustomTypesConfig["getTypeParser"],
};

const POOL_SIZE = 10;
/** A pooled connection's own user is where `SET SESSION AUTHORIZATION DEFAULT` returns it. */
const RESET_SESSION = resetSessionSql(null);

function unavailable(error: unknown): BackendUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new BackendUnavailableError(message, { cause: error });
}

function clientSession(client: pg.PoolClient): Session {
  return {
    execute: async (sql) => {
      await client.query(sql);
    },
    query: async ({ query, params }: SqlStatement) => {
      const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
        text: query,
        values: params,
        rowMode: "array",
        types: RAW_TEXT_TYPES,
        // Neon runs every query as a prepared statement, so several statements in one query
        // string fail there; the simple protocol (pg's default without params) would accept them.
        queryMode: "extended",
      };
      const result = await client.query<RawRow>(config);
      return {
        command: result.command,
        rowCount: result.rowCount,
        rows: result.rows,
        fields: result.fields.map((field) => ({
          name: field.name,
          tableID: field.tableID,
          columnID: field.columnID,
          dataTypeID: field.dataTypeID,
          dataTypeSize: field.dataTypeSize,
          dataTypeModifier: field.dataTypeModifier,
          format: field.format,
        })),
      } satisfies StatementResult;
    },
  };
}

class PostgresBackend implements Backend {
  readonly name = "postgres";

  constructor(
    private readonly pool: pg.Pool,
    private readonly fresh: FreshDatabase | undefined,
  ) {}

  async run(request: SqlRequest, onStatement: () => void): Promise<StatementResult[]> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      // Even a Postgres error here (database dropped, auth) means no session to run SQL in.
      throw unavailable(error);
    }
    try {
      return await runTransaction(clientSession(client), request, onStatement);
    } catch (error) {
      // Anything that is not a Postgres ErrorResponse means the connection itself failed.
      throw isPostgresError(error) ? error : unavailable(error);
    } finally {
      // A client whose session could not be reset is destroyed rather than handed to the next request.
      const broken = await client.query(RESET_SESSION).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
    await this.fresh?.drop();
  }
}

export async function openPostgresBackend(options: {
  databaseUrl: string;
  fresh: boolean;
  migrationsFolder: string;
  log: (line: string) => void;
}): Promise<Backend> {
  const fresh = options.fresh ? await createFreshDatabase(options.databaseUrl) : undefined;
  const pool = new pg.Pool({ connectionString: fresh?.url ?? options.databaseUrl, max: POOL_SIZE });
  // An idle client dropped by the server (restart, DROP DATABASE) must not crash the process.
  pool.on("error", (error) => options.log(`sql-endpoint: idle client error: ${error.message}`));
  try {
    // A database used as is, made by another migration history, is refused, not migrated.
    await assertMigrationHistory(
      async (sql) => (await pool.query<Record<string, unknown>>(sql)).rows,
      options.migrationsFolder,
    );
    await migrate(drizzle(pool), { migrationsFolder: options.migrationsFolder });
  } catch (error) {
    await pool.end();
    await fresh?.drop();
    throw error;
  }
  options.log(
    `sql-endpoint: PostgreSQL ready (${fresh ? `fresh database ${fresh.name}` : "as is"})`,
  );
  return new PostgresBackend(pool, fresh);
}
