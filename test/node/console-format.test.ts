import { describe, expect, it } from "vitest";
import { exponentOf, minorOf, money } from "../../console/src/format";

// How the console writes amounts (console/src/format.ts): minor units in the currency's own
// exponent (ISO 4217), never a fixed two decimals.

describe("money", () => {
  it("writes USD with two decimals", () => {
    expect(money(12345, "USD")).toBe("$123.45");
    expect(money(12345, "usd")).toBe("$123.45");
  });

  it("writes JPY without decimals: its minor unit is the yen", () => {
    expect(money(48000, "JPY")).toBe("¥48,000");
  });

  it("writes KWD with three decimals", () => {
    // Intl separates the code from the number with a no-break space.
    expect(money(1250, "KWD")).toBe("KWD\u00a01.250");
  });
});

describe("exponentOf and minorOf", () => {
  it("knows each currency's exponent", () => {
    expect([exponentOf("JPY"), exponentOf("usd"), exponentOf("KWD")]).toEqual([0, 2, 3]);
  });

  it("reads a typed major amount as minor units of the currency", () => {
    expect(minorOf("12.5", "USD")).toBe(1250);
    expect(minorOf("12", "USD")).toBe(1200);
    expect(minorOf("48000", "JPY")).toBe(48000);
    expect(minorOf("1.25", "KWD")).toBe(1250);
  });

  it("refuses what is not an amount of that currency", () => {
    expect(minorOf("12.5", "JPY")).toBeNull();
    expect(minorOf("1.001", "USD")).toBeNull();
    expect(minorOf("-1", "USD")).toBeNull();
    expect(minorOf("1e3", "USD")).toBeNull();
    expect(minorOf("", "USD")).toBeNull();
  });
});
