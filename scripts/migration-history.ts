/**
 * Whether a database's migration history fits this checkout's `drizzle/` folder, checked before
 * anything is applied to an existing database (the local SQL endpoint, `npm run db:migrate`).
 *
 * drizzle's migrator decides what to apply by time alone: it runs every journal entry newer than
 * the newest row of `drizzle.__drizzle_migrations`, and never compares the rest. A database
 * migrated by another history (the pre-release migrations, squashed into one baseline; another
 * branch's migrations; a migration edited after it ran) therefore fails with an obscure
 * `relation "…" already exists`, or is silently left as it is. So the rows it recorded must be
 * the journal's first entries, in order, with the same timestamps and the same file hashes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrationFiles } from "drizzle-orm/migrator";

/** A row of `drizzle.__drizzle_migrations`: the file's SHA-256 and its journal `when`. */
export interface AppliedMigration {
  hash: string;
  createdAt: number;
}

export interface JournalMigration extends AppliedMigration {
  tag: string;
}

/** Runs one statement on the database to be migrated, as the migration role. */
export type Query = (sql: string) => Promise<Record<string, unknown>[]>;

/** Why a history does not fit drizzle/. */
export interface HistoryMismatch {
  /** E.g. which recorded migration drizzle/ does not have. */
  reason: string;
  /**
   * A recorded migration is not in the journal at all: what a database migrated before the
   * squash looks like (its first row is the old 0000_foundation).
   */
  unknownMigration: boolean;
}

/** What to say about a recorded migration unknown to drizzle/. */
export const SQUASH_NOTE =
  "The migrations were squashed into one baseline (drizzle/0000_baseline.sql) before the first " +
  "release; a database migrated before that cannot be upgraded and must be recreated.";

export class MigrationHistoryError extends Error {
  override readonly name = "MigrationHistoryError";
  readonly reason: string;
  readonly unknownMigration: boolean;

  constructor({ reason, unknownMigration }: HistoryMismatch) {
    super(
      `the database's migration history does not match drizzle/: ${reason}` +
        (unknownMigration ? `. ${SQUASH_NOTE}` : ""),
    );
    this.reason = reason;
    this.unknownMigration = unknownMigration;
  }
}

/** The journal's migrations, in order, hashed exactly as drizzle's migrator hashes them. */
export function journalMigrations(migrationsFolder: string): JournalMigration[] {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8"));
  const files = readMigrationFiles({ migrationsFolder });
  return files.map((file, i) => ({
    tag: String(journal.entries[i]?.tag),
    hash: file.hash,
    createdAt: file.folderMillis,
  }));
}

/** What drizzle's migrator recorded, in the order it applied them; none on a new database. */
export async function appliedMigrations(query: Query): Promise<AppliedMigration[]> {
  const [table] = await query("select to_regclass('drizzle.__drizzle_migrations')::text as name");
  if (!table?.name) return [];
  const rows = await query(
    "select hash, created_at::text as created_at from drizzle.__drizzle_migrations order by id",
  );
  return rows.map((row) => ({ hash: String(row.hash), createdAt: Number(row.created_at) }));
}

function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

/** Why `applied` is not a prefix of `journal`, or undefined when it is (then migrating is safe). */
export function historyMismatch(
  applied: AppliedMigration[],
  journal: JournalMigration[],
): HistoryMismatch | undefined {
  for (const [i, row] of applied.entries()) {
    const expected = journal[i];
    if (!expected) {
      const reason =
        `it recorded ${applied.length} migrations and drizzle/ has only ${journal.length}: ` +
        "it was migrated by another (newer?) checkout";
      return { reason, unknownMigration: false };
    }
    if (row.createdAt !== expected.createdAt) {
      const known = journal.find((entry) => entry.createdAt === row.createdAt);
      if (known) {
        const reason = `its migration #${i + 1} is ${known.tag}, where drizzle/ has ${expected.tag}`;
        return { reason, unknownMigration: false };
      }
      const reason =
        `its migration #${i + 1} (created_at ${row.createdAt}, sha256 ${shortHash(row.hash)}…) ` +
        `is not in drizzle/meta/_journal.json, whose #${i + 1} is ${expected.tag}`;
      return { reason, unknownMigration: true };
    }
    if (row.hash !== expected.hash) {
      const reason = `drizzle/${expected.tag}.sql was changed after this database applied it`;
      return { reason, unknownMigration: false };
    }
  }
  return undefined;
}

/** Refuses, with a MigrationHistoryError, a database that drizzle/ cannot migrate correctly. */
export async function assertMigrationHistory(
  query: Query,
  migrationsFolder: string,
): Promise<void> {
  const applied = await appliedMigrations(query);
  const mismatch = historyMismatch(applied, journalMigrations(migrationsFolder));
  if (mismatch) throw new MigrationHistoryError(mismatch);
}
