/**
 * The seeded draws of `npm run bench:assess` (scripts/bench/draw.ts): two runs with one seed
 * must send the same mix, or their decisions, and so their CPU figures, cannot be compared.
 */
import { describe, expect, it } from "vitest";
import { assessBodies } from "../../scripts/bench/assess-mandates.ts";
import type { Agent } from "../../scripts/bench/assess-tenant.ts";
import { Draw } from "../../scripts/bench/draw.ts";

const agents: Agent[] = [
  { id: "agent-1", jwk: { kty: "EC", crv: "P-256", x: "x1", y: "y1" } },
  { id: "agent-2", jwk: { kty: "EC", crv: "P-256", x: "x2", y: "y2" } },
];

const draws = (seed: number, n: number) => {
  const draw = new Draw(seed);
  return Array.from({ length: n }, () => draw.next());
};

/** What decides an assessment, without the ids each body draws at random on purpose. */
function decidingParts(body: string) {
  const { mandate, agent_id, kind } = JSON.parse(body);
  return {
    kind,
    agent_id,
    payee: mandate.payee?.id,
    amount: mandate.payment_amount?.amount,
    currency: mandate.payment_amount?.currency,
    country: mandate.risk_data?.country,
    max: mandate.constraints?.[0]?.max,
    to: mandate.to,
  };
}

describe("the bench's seeded draws", () => {
  it("repeat for one seed and differ between seeds", () => {
    expect(draws(1, 50)).toEqual(draws(1, 50));
    expect(draws(2, 50)).not.toEqual(draws(1, 50));
  });

  it("stay in [0, 1) and spread over it", () => {
    const values = draws(7, 20_000);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    // Ten equal bins: each within 10% of its expected 2,000.
    const bins = Array.from({ length: 10 }, () => 0);
    for (const v of values) bins[Math.floor(v * 10)] = (bins[Math.floor(v * 10)] ?? 0) + 1;
    for (const count of bins) expect(Math.abs(count - 2000)).toBeLessThan(200);
  });

  it("draw the same amounts, payees, agents and options for the same seed", () => {
    const first = assessBodies(new Draw(1), 200, agents).map((b) => decidingParts(b.body));
    const second = assessBodies(new Draw(1), 200, agents).map((b) => decidingParts(b.body));
    const other = assessBodies(new Draw(2), 200, agents).map((b) => decidingParts(b.body));
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
    expect(new Set(first.map((p) => p.payee)).size).toBeGreaterThan(5);
  });
});
