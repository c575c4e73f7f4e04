import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { TrainingEvent } from "../../src/model/training-set";
import { networkDigest, networkKeys } from "../../src/network/keys";
import type { EventIdentifiers } from "../../src/risk-models/history-read";
import { attachNetworkCounts, type SeriesAsk } from "../../src/risk-models/network-read";

// src/risk-models/network-read.ts: a training run's network features are the counts a request
// at the start of each payment's UTC day would have read (docs/risk-model.md, "Network
// features"), zeros when the org's mode does not consume.

const DAY = 86_400_000;
const T = Date.UTC(2026, 5, 10, 12);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const env = {
  NETWORK_KEYS: JSON.stringify([
    { kty: "oct", k: randomBytes(32).toString("base64url"), kid: "nk-train" },
  ]),
};
const key = networkKeys(env)?.[0] as NonNullable<ReturnType<typeof networkKeys>>[number];
const d = (kind: Parameters<typeof networkDigest>[1], value: string) =>
  networkDigest(key, kind, value);

function history(): { events: TrainingEvent[]; ids: EventIdentifiers[] } {
  const event = (time: number): TrainingEvent => ({
    time,
    agent: 0,
    payee: 0,
    amount: 100,
    fraudKnownAt: null,
  });
  return {
    events: [event(T - 40 * DAY), event(T), event(T + DAY)],
    ids: [
      { payee: "p1", agent: "agent-1", agent_key: "a1", issuer_key: null, instrument: null },
      // Assessed: its own key, issuer key and instrument.
      { payee: "p1", agent: "agent-1", agent_key: "a1", issuer_key: "i1", instrument: "c1" },
      // Imported history: no identifiers of its own; its agent's keys are a2 and a3.
      { payee: "p1", agent: "agent-2" },
    ],
  };
}

describe("a training run's network features", () => {
  it("are the counts of the day before each payment, the largest of a history payment's agent keys", async () => {
    const { events, ids } = history();
    const asks: SeriesAsk[] = [];
    let loads = 0;
    const answers: Record<string, unknown[]> = {
      payee: [
        { digest: d("payee", "p1"), day: day(T - DAY), fraud_orgs: 2, legitimate_orgs: 1 },
        { digest: d("payee", "p1"), day: day(T), fraud_orgs: 3, legitimate_orgs: 0 },
      ],
      agent_key: [
        { digest: d("agent_key", "a2"), day: day(T), fraud_orgs: 1, legitimate_orgs: 5 },
        { digest: d("agent_key", "a3"), day: day(T), fraud_orgs: 4, legitimate_orgs: 0 },
        { digest: d("agent_key", "a1"), day: day(T), fraud_orgs: 9, legitimate_orgs: 0 },
      ],
      issuer: [{ digest: d("issuer", "i1"), day: day(T - DAY), fraud_orgs: 1, legitimate_orgs: 0 }],
      instrument: [],
    };
    const result = await attachNetworkCounts(
      env,
      true,
      events,
      ids,
      { from: T - DAY, asOf: T + 2 * DAY },
      async () => {
        loads++;
        return new Map([["agent-2", ["a2", "a3"]]]);
      },
      async (ask) => {
        asks.push(ask);
        return answers[ask.kind];
      },
    );
    expect(result).toEqual({ consumed: true, statements: 5 });
    expect(loads).toBe(1);
    expect(asks.map((a) => [a.kind, [...a.digests].sort(), a.from, a.to])).toEqual([
      ["payee", [d("payee", "p1")], day(T - 2 * DAY), day(T + DAY)],
      [
        "agent_key",
        [d("agent_key", "a1"), d("agent_key", "a2"), d("agent_key", "a3")].sort(),
        day(T - 2 * DAY),
        day(T + DAY),
      ],
      ["issuer", [d("issuer", "i1")], day(T - 2 * DAY), day(T + DAY)],
      ["instrument", [d("instrument", "c1")], day(T - 2 * DAY), day(T + DAY)],
    ]);
    expect(asks[0]).toMatchObject({ livemode: true, k: 3, keyId: "nk-train" });
    // Outside the window trained on: left alone.
    expect(events[0]?.network).toBeUndefined();
    expect(events[1]?.network).toEqual({
      payee_fraud_orgs: 2,
      payee_legitimate_orgs: 1,
      agent_key_fraud_orgs: 0,
      agent_key_legitimate_orgs: 0,
      issuer_fraud_orgs: 1,
      instrument_fraud_orgs: 0,
    });
    expect(events[2]?.network).toEqual({
      payee_fraud_orgs: 3,
      payee_legitimate_orgs: 0,
      agent_key_fraud_orgs: 4,
      agent_key_legitimate_orgs: 5,
      issuer_fraud_orgs: 0,
      instrument_fraud_orgs: 0,
    });
  });

  it("are zeros, and nothing more is asked, when the org's mode does not consume", async () => {
    const { events, ids } = history();
    let asked = 0;
    const result = await attachNetworkCounts(
      env,
      false,
      events,
      ids,
      { from: T - DAY, asOf: T + 2 * DAY },
      async () => new Map(),
      async () => {
        asked++;
        return null;
      },
    );
    expect(result).toEqual({ consumed: false, statements: 1 });
    expect(asked).toBe(1);
    expect(events.map((e) => e.network)).toEqual([undefined, undefined, undefined]);
  });

  it("asks nothing without network keys", async () => {
    const { events, ids } = history();
    const result = await attachNetworkCounts(
      {},
      true,
      events,
      ids,
      { from: T - DAY, asOf: T + 2 * DAY },
      async () => new Map(),
      async () => {
        throw new Error("asked");
      },
    );
    expect(result).toEqual({ consumed: false, statements: 0 });
  });
});
