import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DbRtt, delaySampler, describeDbRtt, parseDbRtt } from "../../scripts/sql-endpoint/delay";
import { startSqlEndpoint } from "../../scripts/sql-endpoint/index";

// The SQL endpoint's injected round trip (`--db-rtt`, docs/latency.md): the forms it accepts,
// the draws each gives, and that a request to the endpoint really waits for it.

const scratch = mkdtempSync(join(tmpdir(), "sql-endpoint-delay-test-"));
const migrationsFolder = join(scratch, "drizzle");
mkdirSync(join(migrationsFolder, "meta"), { recursive: true });
writeFileSync(
  join(migrationsFolder, "0000_role.sql"),
  `DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_user') THEN
    CREATE ROLE app_user NOLOGIN;
  END IF;
END $$;`,
);
writeFileSync(
  join(migrationsFolder, "meta", "_journal.json"),
  JSON.stringify({
    version: "7",
    dialect: "postgresql",
    entries: [
      { idx: 0, version: "7", when: 1_700_000_000_000, tag: "0000_role", breakpoints: true },
    ],
  }),
);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Returns the given draws in turn: pins what the uniform and normal samplers give. */
function pinned(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] as number;
}

describe("--db-rtt forms", () => {
  it("a number is a fixed delay", () => {
    expect(DbRtt.parse("20")).toEqual({ kind: "fixed", ms: 20 });
    expect(parseDbRtt("0")()).toBe(0);
    expect(parseDbRtt("80")()).toBe(80);
    expect(parseDbRtt("2.5")()).toBe(2.5);
  });

  it("MEAN±SD (or MEAN+-SD) is normal around the mean, never below zero", () => {
    expect(DbRtt.parse("20±5")).toEqual({ kind: "normal", mean: 20, sd: 5 });
    expect(DbRtt.parse("20+-5")).toEqual({ kind: "normal", mean: 20, sd: 5 });
    // u = 1 - 0 = 1 gives a zero radius: the mean itself.
    expect(delaySampler(DbRtt.parse("20±5"), pinned([0, 0]))()).toBe(20);
    // A draw far below the mean (a large radius, cos π = -1) is clipped at zero.
    expect(delaySampler(DbRtt.parse("1±50"), pinned([0.999999, 0.5]))()).toBe(0);
    const draws = Array.from({ length: 4000 }, parseDbRtt("20±5"));
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(mean).toBeGreaterThan(19);
    expect(mean).toBeLessThan(21);
  });

  it("uniform:LOW-HIGH spreads evenly between the two", () => {
    expect(DbRtt.parse("uniform:10-30")).toEqual({ kind: "uniform", low: 10, high: 30 });
    const sample = delaySampler(DbRtt.parse("uniform:10-30"), pinned([0, 0.5, 0.75]));
    expect([sample(), sample(), sample()]).toEqual([10, 20, 25]);
  });

  it("describes each form for the report", () => {
    expect(describeDbRtt("80")).toBe("80 ms");
    expect(describeDbRtt("20±5")).toBe("20±5 ms (normal)");
    expect(describeDbRtt("uniform:10-30")).toBe("10–30 ms (uniform)");
  });

  it.each(["", "-5", "abc", "20ms", "uniform:30-10", "uniform:10", "normal:20", "99999999"])(
    "refuses %j, naming the accepted forms",
    (text) => {
      expect(() => parseDbRtt(text)).toThrow(/--db-rtt/);
    },
  );
});

describe("the endpoint with an injected round trip", () => {
  it("answers each SQL request no sooner than the delay, and /stats at once", async () => {
    const endpoint = await startSqlEndpoint({ migrationsFolder, dbRtt: "150" });
    try {
      const post = () =>
        fetch(endpoint.url, {
          method: "POST",
          body: JSON.stringify({ query: "select 1 as one", params: [] }),
          headers: {
            "Neon-Connection-String": "postgresql://app_user:x@localhost/app",
            "Neon-Raw-Text-Output": "true",
            "Neon-Array-Mode": "true",
          },
        });
      await post();
      const started = performance.now();
      const res = await post();
      const elapsed = performance.now() - started;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { rows: unknown }).rows).toEqual([["1"]]);
      expect(elapsed).toBeGreaterThanOrEqual(145);
      const statsStarted = performance.now();
      const stats = (await (await fetch(new URL("/stats", endpoint.url))).json()) as {
        requests: number;
      };
      expect(performance.now() - statsStarted).toBeLessThan(145);
      expect(stats.requests).toBe(2);
    } finally {
      await endpoint.close();
    }
  });

  it("refuses a bad spec before opening the database", async () => {
    await expect(startSqlEndpoint({ migrationsFolder, dbRtt: "fast" })).rejects.toThrow(
      /--db-rtt "fast"/,
    );
  });
});
