import { describe, expect, it } from "vitest";
import {
  HistoryEvents,
  type HistoryRow,
  historyWindow,
  readHistory,
} from "../../src/risk-models/history-read.ts";

// What the training consumer makes of the history rows it reads (src/risk-models/history-read.ts):
// the events the trainer's features see, as the assess path's context read would.

const DAY = 86_400_000;

function row(over: Partial<HistoryRow>): HistoryRow {
  return {
    t: 0,
    id: crypto.randomUUID(),
    agent_id: "a1",
    currency: "USD",
    counterparty: "p1",
    amount: 100,
    fraud: null,
    legit: null,
    ...over,
  };
}

describe("history events", () => {
  it("keys an agent's history by currency, as the context read reads an agent's payments", () => {
    const built = new HistoryEvents();
    built.add([
      row({ t: 1 }),
      row({ t: 2, currency: "EUR" }),
      row({ t: 3 }),
      row({ t: 4, agent_id: "a2" }),
    ]);
    const agents = built.events.map((e) => e.agent);
    expect(agents[0]).toBe(agents[2]);
    expect(new Set(agents).size).toBe(3);
  });

  it("carries each payment's currency, one string per code", () => {
    const built = new HistoryEvents();
    built.add([row({ t: 1 }), row({ t: 2, currency: "EUR" }), row({ t: 3, currency: null })]);
    expect(built.events.map((e) => e.currency)).toEqual(["USD", "EUR", null]);
  });

  it("gives a payment without an agent or a payee no history on that side", () => {
    const built = new HistoryEvents();
    built.add([
      row({ agent_id: null, counterparty: null }),
      row({ agent_id: null, counterparty: null }),
    ]);
    const [a, b] = built.events;
    expect(a?.agent).not.toBe(b?.agent);
    expect(a?.payee).not.toBe(b?.payee);
  });

  it("carries when a fraud and a legitimate label became known", () => {
    const built = new HistoryEvents();
    built.add([row({ t: 10, fraud: 20, legit: null }), row({ t: 11, legit: 30 })]);
    expect(built.events.map((e) => [e.time, e.fraudKnownAt, e.labelKnownAt])).toEqual([
      [10, 20, null],
      [11, null, 30],
    ]);
  });
});

describe("the history window", () => {
  it("starts one feature horizon before the rows trained on", () => {
    const asOf = Date.parse("2026-10-01T00:00:00Z");
    const window = historyWindow(true, asOf, 7 * DAY, 14 * DAY);
    // 14 days of window, 7 of delay, and the features' 30 days plus the delay before them.
    expect(window).toEqual({ livemode: true, from: asOf - (14 + 7 + 30 + 7) * DAY, asOf });
  });

  it("reads page after page until a short one, in order", async () => {
    const asked: number[] = [];
    let served = 0;
    const events = await readHistory(
      { livemode: true, from: 0, asOf: 100 },
      async () => {
        asked.push(served);
        const size = served < 2 * 3 ? 3 : 1;
        const page = Array.from({ length: size }, (_, i) => row({ t: served + i }));
        served += size;
        return page;
      },
      3,
    );
    expect(asked).toEqual([0, 3, 6]);
    expect(events.map((e) => e.time)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});
