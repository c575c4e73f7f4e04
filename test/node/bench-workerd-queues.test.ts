import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { QUEUE_CONSUMERS, QUEUE_PRODUCERS } from "../../scripts/bench/assess-workerd";

// The benchmarks' plain-workerd stack (scripts/bench/assess-workerd.ts) consumes the Queues as
// `wrangler dev` does, from wrangler.toml: the two must not drift apart.

function blocks(toml: string, table: string): Record<string, string>[] {
  return toml
    .split(`[[${table}]]`)
    .slice(1)
    .map((block) => block.split(/\n\s*\n|\n\[/)[0] ?? "")
    .map((block) =>
      Object.fromEntries(
        [...block.matchAll(/^(\w+) = "?([\w-]+)"?$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]),
      ),
    );
}

describe("the plain-workerd benchmark stack's Queues", () => {
  const toml = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");

  it("are wrangler.toml's producers and consumers", () => {
    const producers = blocks(toml, "queues.producers");
    expect(Object.fromEntries(producers.map((p) => [p.binding, p.queue]))).toEqual(QUEUE_PRODUCERS);
    const consumers = blocks(toml, "queues.consumers").map((c) => [
      c.queue,
      {
        maxBatchSize: Number(c.max_batch_size),
        maxBatchTimeout: Number(c.max_batch_timeout),
        maxRetries: Number(c.max_retries),
        ...(c.dead_letter_queue ? { deadLetterQueue: c.dead_letter_queue } : {}),
      },
    ]);
    expect(Object.fromEntries(consumers)).toEqual(QUEUE_CONSUMERS);
  });
});
