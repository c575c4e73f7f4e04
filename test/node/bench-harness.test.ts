/**
 * The run harness every benchmark uses (scripts/bench/harness.ts), run as the benches run: in a
 * Node process of its own (`node --import tsx`), since it owns signals and ends the process.
 * Each case is a tiny bench whose cleanups print their names.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../..");
const HARNESS = resolve(REPO, "scripts/bench/harness.ts");

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `body` (the source of a `runBench` body over `run`) with `--timeout` `timeoutS`. */
async function bench(
  body: string,
  { timeoutS = 60, signalAfter }: { timeoutS?: number; signalAfter?: string } = {},
): Promise<Ended> {
  const source = `
    import { runBench } from ${JSON.stringify(HARNESS)};
    const say = (line) => process.stdout.write(line + "\\n");
    const cleanup = (name) => () => say("cleanup " + name);
    await runBench("bench:test", ${timeoutS}, async (run) => { ${body} });
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
    if (signalAfter && stdout.includes(signalAfter)) {
      signalAfter = undefined;
      child.kill("SIGINT");
    }
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

const lines = (text: string) => text.split("\n").filter((line) => line.startsWith("cleanup"));

describe("the bench run harness", () => {
  it("runs the cleanups newest first, each once, and exits 0 when the body ends", async () => {
    const ended = await bench(`
      run.defer(cleanup("a")); run.defer(cleanup("b")); run.defer(cleanup("c"));
      say("measured");
    `);
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain("measured");
    expect(lines(ended.stdout)).toEqual(["cleanup c", "cleanup b", "cleanup a"]);
  });

  it("exits 1 with the error and still cleans up when the body fails", async () => {
    const ended = await bench(`
      run.defer(cleanup("a")); run.defer(cleanup("b"));
      throw new Error("the endpoint refused");
    `);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain("bench:test failed: Error: the endpoint refused");
    expect(lines(ended.stdout)).toEqual(["cleanup b", "cleanup a"]);
  });

  it("exits 130 on SIGINT after cleaning up, a duplicate signal changing nothing", async () => {
    const ended = await bench(
      `
      run.defer(cleanup("a"));
      run.defer(() => { process.kill(process.pid, "SIGINT"); say("cleanup b"); });
      say("ready");
      await new Promise(() => {});
    `,
      { signalAfter: "ready" },
    );
    expect(ended.code).toBe(130);
    expect(ended.stderr).toContain("bench:test: SIGINT received: stopping and cleaning up");
    expect(lines(ended.stdout)).toEqual(["cleanup b", "cleanup a"]);
  });

  it("exits 124 with a clear message at the hard time limit, after cleaning up", async () => {
    const ended = await bench(`run.defer(cleanup("a")); await new Promise(() => {});`, {
      timeoutS: 1,
    });
    expect(ended.code).toBe(124);
    expect(ended.stderr).toContain("bench:test: hard time limit of 1 s reached (--timeout)");
    expect(lines(ended.stdout)).toEqual(["cleanup a"]);
  });

  it("cleans up what finishes starting after the stop, and stops the body there", async () => {
    const ended = await bench(
      `
      run.defer(cleanup("a"));
      const starting = new Promise((done) => setTimeout(() => done("db"), 300));
      say("ready");
      const db = await run.started(starting, (value) => say("cleanup " + value));
      say("went on with " + db);
    `,
      { signalAfter: "ready" },
    );
    expect(ended.code).toBe(130);
    expect(lines(ended.stdout)).toEqual(["cleanup db", "cleanup a"]);
    expect(ended.stdout).not.toContain("went on");
  });

  it("exits 1 when a cleanup fails, and runs the others", async () => {
    const ended = await bench(`
      run.defer(cleanup("a"));
      run.defer(() => { throw new Error("drop database failed"); });
    `);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain("cleanup: drop database failed");
    expect(lines(ended.stdout)).toEqual(["cleanup a"]);
  });

  it("hands out measured time only up to the deadline minus what cleaning up needs", async () => {
    const ended = await bench(`say("budget " + run.budgetMs()); run.budgetMs();`, {
      timeoutS: 20,
    });
    const budget = Number(/budget (\d+)/.exec(ended.stdout)?.[1]);
    expect(budget).toBeGreaterThan(0);
    expect(budget).toBeLessThanOrEqual(5_000);
    const late = await bench(`run.budgetMs();`, { timeoutS: 10 });
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("out of time (--timeout 10)");
  });
});
