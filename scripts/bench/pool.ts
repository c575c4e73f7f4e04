/**
 * The append loop of `npm run bench:ledger`, shared by the in-workerd driver (ledger-driver.ts,
 * bundled into a second Worker) and the Node-side proxy mode: C lanes pull jobs from one queue
 * until it is empty, the first append fails, or the time budget is spent.
 */

/** The shape of OrgLedger's append input (kept local: scripts are typechecked without workers types). */
export interface BenchInput {
  type: string;
  actor: { type: string; id: string };
  subject: { type: string; id: string } | null;
  digest: string;
}

export interface PoolOutcome {
  /** From the first append's start to the last one's end. */
  elapsedMs: number;
  /** One per completed append, in completion order. */
  latenciesMs: number[];
  completed: number;
  failed: number;
  firstError: string | null;
}

const DIGEST = `sha256:${"ab".repeat(32)}`;

/** A realistic single-entry append: an API key acting on some subject. */
export function benchInput(index: number): BenchInput {
  return {
    type: "bench.appended",
    actor: { type: "api_key", id: "bench" },
    subject: { type: "thing", id: String(index) },
    digest: DIGEST,
  };
}

/** `perOrg` jobs for each org, interleaved (a, b, c, a, b, c, ...) so the orgs load evenly. */
export function interleavedJobs(orgIds: readonly string[], perOrg: number): string[] {
  const jobs: string[] = [];
  for (let round = 0; round < perOrg; round++) jobs.push(...orgIds);
  return jobs;
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

export async function runPool(
  jobs: readonly string[],
  concurrency: number,
  budgetMs: number,
  append: (orgId: string, index: number) => Promise<unknown>,
): Promise<PoolOutcome> {
  const latenciesMs: number[] = [];
  let next = 0;
  let failed = 0;
  let firstError: string | null = null;
  const start = performance.now();
  const stopAt = start + budgetMs;
  const lane = async () => {
    while (next < jobs.length && failed === 0 && performance.now() < stopAt) {
      const index = next++;
      const orgId = jobs[index] as string;
      const began = performance.now();
      try {
        await append(orgId, index);
        latenciesMs.push(performance.now() - began);
      } catch (error) {
        failed += 1;
        firstError ??= describe(error);
      }
    }
  };
  const lanes = Math.max(1, Math.min(concurrency, jobs.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return {
    elapsedMs: performance.now() - start,
    latenciesMs,
    completed: latenciesMs.length,
    failed,
    firstError,
  };
}
