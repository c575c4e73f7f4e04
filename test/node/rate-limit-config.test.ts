import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RATE_LIMITS } from "../../src/http/rate-limit";

// wrangler.toml's limits are the production and `npm run dev` defaults (docs/api.md, Rate limits).

function wranglerLimits(): Map<string, { limit: number; period: number }> {
  const toml = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");
  const blocks = toml.split("[[ratelimits]]").slice(1);
  return new Map(
    blocks.map((block) => {
      const name = /name = "(\w+)"/.exec(block)?.[1];
      const simple = /simple = \{ limit = (\d+), period = (\d+) \}/.exec(block);
      if (!name || !simple) throw new Error(`unreadable [[ratelimits]] block: ${block}`);
      return [name, { limit: Number(simple[1]), period: Number(simple[2]) }];
    }),
  );
}

describe("the rate limits of wrangler.toml", () => {
  const limits = wranglerLimits();

  it("binds every door the code limits, with the period the code answers in Retry-After", () => {
    expect([...limits.keys()].sort()).toEqual(
      Object.values(RATE_LIMITS)
        .map((door) => door.binding)
        .sort(),
    );
    for (const door of Object.values(RATE_LIMITS)) {
      expect(limits.get(door.binding)?.period).toBe(door.period);
    }
  });

  it("lets one key assess 100 times a second, with room for the benchmark", () => {
    const assess = limits.get(RATE_LIMITS.assess.binding);
    expect(assess && assess.limit / assess.period).toBeGreaterThanOrEqual(300);
  });

  it("lets a client retry a mistyped key, and holds a guesser to a lookup a second at most", () => {
    const failed = limits.get(RATE_LIMITS.failed_auth.binding);
    expect(failed?.limit).toBeGreaterThanOrEqual(10);
    expect(failed && failed.limit / failed.period).toBeLessThanOrEqual(1);
  });

  it("limits a burst of 1,000 requests from one client on a public route, across any two windows", () => {
    const pub = limits.get(RATE_LIMITS.public.binding);
    expect(pub && pub.limit * 2).toBeLessThan(1000);
    // The worker test of that burst uses the same value.
    const vitest = readFileSync(new URL("../../vitest.config.ts", import.meta.url), "utf8");
    const mirrored = /TEST_RATE_LIMIT_PUBLIC: \{ simple: \{ limit: (\d+), period: (\d+) \} \}/.exec(
      vitest,
    );
    expect(mirrored && { limit: Number(mirrored[1]), period: Number(mirrored[2]) }).toEqual(pub);
  });
});
