/**
 * Stage timings for `Server-Timing`. A Worker's clock advances only across I/O (a Spectre
 * mitigation, in workerd locally as in production), in whole milliseconds: a pure stage reads
 * 0 and its cost shows in the next I/O stage. The pure stages' cost is measured outside the
 * runtime by `npm run bench:assess` (docs/performance.md).
 */
const STAGES = ["context", "kya", "policy", "risk", "sign", "persist"] as const;
export type Stage = (typeof STAGES)[number];

export class Stopwatch {
  private readonly stages: [Stage, number][] = [];

  async time<T>(stage: Stage, run: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await run();
    } finally {
      this.stages.push([stage, performance.now() - start]);
    }
  }

  timeSync<T>(stage: Stage, run: () => T): T {
    const start = performance.now();
    try {
      return run();
    } finally {
      this.stages.push([stage, performance.now() - start]);
    }
  }

  /**
   * `context;dur=1.20, kya;dur=0.12, …`: every stage of the pipeline, 0 for those a request
   * skipped (a replay stops after `context`).
   */
  header(): string {
    const spent = new Map<string, number>();
    for (const [stage, ms] of this.stages) spent.set(stage, (spent.get(stage) ?? 0) + ms);
    return STAGES.map((stage) => `${stage};dur=${(spent.get(stage) ?? 0).toFixed(2)}`).join(", ");
  }
}
