/**
 * drizzle/ as drizzle-kit and the migrators read it.
 *
 * `npm run db:generate` diffs src/db/schema.ts against the newest snapshot in drizzle/meta, not
 * against the database or the SQL: if that snapshot differs from the schema, the next migration
 * repeats changes the database already has, or misses some. drizzle-kit runs here on a copy of
 * drizzle/, so the repository is never written to.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../..");
const DRIZZLE = join(REPO, "drizzle");
const DRIZZLE_KIT = join(REPO, "node_modules", "drizzle-kit", "bin.cjs");

const copy = mkdtempSync(join(tmpdir(), "drizzle-snapshot-test-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

async function drizzleKit(...args: string[]): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [DRIZZLE_KIT, ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    // A schema change it cannot decide alone (a rename?) makes it prompt: end it, do not hang.
    timeout: 45_000,
  });
  return stdout + stderr;
}

describe("drizzle/", () => {
  it("has a snapshot equal to src/db/schema.ts: drizzle-kit generate finds nothing to do", async () => {
    cpSync(DRIZZLE, copy, { recursive: true });
    // drizzle-kit puts "./" before --out, so the copy is named relative to the repository.
    const out = relative(REPO, copy);
    const common = ["--dialect", "postgresql", "--out", out];
    const generated = await drizzleKit(
      "generate",
      ...common,
      "--schema",
      "./src/db/schema.ts",
      "--name",
      "snapshot_test",
    );
    expect(generated).toContain("No schema changes, nothing to migrate");
    expect(readdirSync(copy, { recursive: true }).sort()).toEqual(
      readdirSync(DRIZZLE, { recursive: true }).sort(),
    );
    expect(await drizzleKit("check", ...common)).toContain("Everything's fine");
  }, 60_000);

  it("journals every SQL file, in order, with strictly increasing timestamps", () => {
    // The migrators apply only what the journal lists, and only entries newer than the newest
    // one a database recorded: a file left out, or an older `when`, would never run.
    const journal = JSON.parse(readFileSync(join(DRIZZLE, "meta", "_journal.json"), "utf8"));
    const entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] =
      journal.entries;
    const files = readdirSync(DRIZZLE).filter((name) => name.endsWith(".sql"));
    expect(entries.map((entry) => `${entry.tag}.sql`)).toEqual(files.sort());
    entries.forEach((entry, i) => {
      expect(entry.idx).toBe(i);
      expect(entry.breakpoints).toBe(true);
      if (i > 0) expect(entry.when).toBeGreaterThan(entries[i - 1]?.when ?? 0);
    });
  });
});
