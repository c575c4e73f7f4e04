import { z } from "zod";

// An injected network round trip per SQL request, so a local run shows what a Worker far from
// its database (or near it) waits for. The endpoint sleeps half of each sample before running
// the request and half after: the statements reach the database one way later and the answer
// comes back the other way, and the database's locks are held only while it runs, as on Neon,
// where a batch transaction runs server-side in one HTTP request.

/** One round trip's delay in milliseconds, drawn anew for each request. */
export type DelaySampler = () => number;

const millis = z.number().finite().nonnegative().max(60_000);
const number = String.raw`\d+(?:\.\d+)?`;

/** Box–Muller: a standard normal sample from two uniform ones. */
function standardNormal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const fixed = z
  .string()
  .regex(new RegExp(`^${number}$`))
  .transform((text) => ({ kind: "fixed" as const, ms: Number(text) }))
  .pipe(z.object({ kind: z.literal("fixed"), ms: millis }));

const normal = z
  .string()
  .regex(new RegExp(`^${number}(?:±|\\+-)${number}$`))
  .transform((text) => {
    const [mean, sd] = text.split(/±|\+-/).map(Number);
    return { kind: "normal" as const, mean, sd };
  })
  .pipe(z.object({ kind: z.literal("normal"), mean: millis, sd: millis }));

const uniform = z
  .string()
  .regex(new RegExp(`^uniform:${number}-${number}$`))
  .transform((text) => {
    const [low, high] = text.slice("uniform:".length).split("-").map(Number);
    return { kind: "uniform" as const, low, high };
  })
  .pipe(
    z
      .object({ kind: z.literal("uniform"), low: millis, high: millis })
      .refine((d) => d.low <= d.high, "the low end must not be above the high end"),
  );

/**
 * `--db-rtt`: `MS` (fixed), `MEAN±SD` or `MEAN+-SD` (normal, clipped at 0), or
 * `uniform:LOW-HIGH`; milliseconds, at most 60,000.
 */
export const DbRtt = z.union([fixed, normal, uniform], {
  error: "expected MS, MEAN±SD (or MEAN+-SD) or uniform:LOW-HIGH, in milliseconds",
});
export type DbRtt = z.infer<typeof DbRtt>;

/** The sampler of a parsed `--db-rtt`; `random` is replaceable so tests can pin draws. */
export function delaySampler(rtt: DbRtt, random: () => number = Math.random): DelaySampler {
  switch (rtt.kind) {
    case "fixed":
      return () => rtt.ms;
    case "normal":
      return () => Math.max(0, rtt.mean + rtt.sd * standardNormal(random));
    case "uniform":
      return () => rtt.low + (rtt.high - rtt.low) * random();
  }
}

/** Parses a `--db-rtt` value; throws a readable error naming the accepted forms. */
export function parseDbRtt(text: string): DelaySampler {
  const parsed = DbRtt.safeParse(text.trim());
  if (!parsed.success) {
    throw new Error(`--db-rtt ${JSON.stringify(text)}: ${z.prettifyError(parsed.error)}`);
  }
  return delaySampler(parsed.data);
}

/** A readable form of a parsed value, for the benchmark's report. */
export function describeDbRtt(text: string): string {
  const rtt = DbRtt.parse(text.trim());
  switch (rtt.kind) {
    case "fixed":
      return `${rtt.ms} ms`;
    case "normal":
      return `${rtt.mean}±${rtt.sd} ms (normal)`;
    case "uniform":
      return `${rtt.low}–${rtt.high} ms (uniform)`;
  }
}

export function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** The mean of a `--db-rtt` value in ms (a clipped normal's is taken as its mean). */
export function meanDbRtt(text: string): number {
  const rtt = DbRtt.parse(text.trim());
  switch (rtt.kind) {
    case "fixed":
      return rtt.ms;
    case "normal":
      return rtt.mean;
    case "uniform":
      return (rtt.low + rtt.high) / 2;
  }
}
