import { describe, expect, it } from "vitest";
import { acpRiskSignals } from "../../src/assess/rails/acp";
import { riskCheckScore, riskCheckTier, serviceDid } from "../../src/assess/rails/x402";
import { networkOf } from "../../src/assess/telemetry";

// docs/rails.md: the score mapping, ACP's actions and the networks telemetry is kept by.

describe("x402's score and tier of a verdict", () => {
  it.each([
    [0, "approve", 100, "low"],
    [20, "approve", 80, "low"],
    [21, "approve", 79, "medium"],
    [39, "approve", 61, "medium"],
    [40, "review", 59, "high"],
    [70, "review", 30, "high"],
    [71, "review", 29, "critical"],
    [70, "deny", 29, "critical"],
    [100, "deny", 0, "critical"],
  ] as const)("risk_score %i, %s: x402 %i, %s", (risk, decision, score, tier) => {
    expect(riskCheckScore(risk, decision)).toBe(score);
    expect(riskCheckTier(score)).toBe(tier);
  });

  it("names the service by did:web, its port percent-encoded", () => {
    expect(serviceDid("https://risk.example.com")).toBe("did:web:risk.example.com");
    expect(serviceDid("http://localhost:8787")).toBe("did:web:localhost%3A8787");
  });
});

describe("ACP's action of a verdict", () => {
  it.each([
    ["approve", "authorized"],
    ["review", "manual_review"],
    ["deny", "blocked"],
  ] as const)("%s is %s", (decision, action) => {
    const facts = { decision, riskScore: 42 } as Parameters<typeof acpRiskSignals>[0];
    expect(acpRiskSignals(facts)).toEqual([{ type: "card_testing", score: 42, action }]);
  });
});

describe("the network of an address", () => {
  it.each([
    ["203.0.113.7", "203.0.113.0/24"],
    ["::ffff:203.0.113.7", "203.0.113.0/24"],
    ["2001:db8:1::5", "2001:db8:1::/48"],
    ["2001:0DB8:0001:ffff::1", "2001:db8:1::/48"],
    ["::1", "0:0:0::/48"],
    ["2001:db8::ffff:1.2.3.4", "2001:db8:0::/48"],
    ["not an address", null],
  ])("%s is %s", (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});
