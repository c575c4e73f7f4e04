import { describe, expect, it } from "vitest";
import { normalizeRules, PolicyRules } from "../../src/assess/policy";
import { parseDuration } from "../../src/assess/rules/duration";

/** The issues of a refused rules object, as `path: message`. */
function issues(rules: unknown): string[] {
  const result = PolicyRules.safeParse(rules);
  if (result.success) throw new Error("expected the rules to be refused");
  return result.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => `${[...issue.path, key].join(".")}: unknown field`)
      : [`${issue.path.join(".")}: ${issue.message}`],
  );
}

describe("durations", () => {
  it.each([
    ["1s", 1],
    ["30s", 30],
    ["15m", 900],
    ["1h", 3_600],
    ["7d", 604_800],
    ["90d", 7_776_000],
    ["PT1S", 1],
    ["PT15M", 900],
    ["PT1H30M", 5_400],
    ["P1D", 86_400],
    ["P1DT12H", 129_600],
    ["P7D", 604_800],
    ["P2W", 1_209_600],
    ["PT7776000S", 7_776_000],
  ])("%s is %i seconds", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each([
    ["0s", "below 1 s"],
    ["91d", "above 90 d"],
    ["PT0S", "zero"],
    ["P13W", "above 90 d"],
    ["", "empty"],
    ["1", "no unit"],
    ["1H", "uppercase short unit (hour or month?)"],
    ["1w", "weeks only in ISO form"],
    ["1.5h", "a fraction"],
    ["-1h", "negative"],
    [" 1h", "padded"],
    ["1h30m", "two short units"],
    ["P", "no component"],
    ["PT", "no time component"],
    ["P1DT", "T without a time component"],
    ["P1M", "months vary in length"],
    ["P1Y", "years vary in length"],
    ["pt1h", "lowercase ISO"],
    ["PT1.5H", "an ISO fraction"],
    ["P1W1D", "weeks combined with days"],
  ])("%s is refused (%s)", (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe("PolicyRules", () => {
  const full = {
    max_amount: 100_000,
    currencies: ["EUR", "USD"],
    geo: { allow: ["DE", "FR"] },
    velocity: { window: "1h", max: 10 },
  };

  it("accepts the spec's create shape, and the empty object", () => {
    expect(PolicyRules.parse(full)).toEqual(full);
    expect(PolicyRules.parse({})).toEqual({});
  });

  it.each<[string, unknown, string[]]>([
    ["an unknown rule", { max_amonut: 1 }, ["max_amonut: unknown field"]],
    ["an unknown geo field", { geo: { allow: ["DE"], deny: ["FR"] } }, ["geo.deny: unknown field"]],
    [
      "an unknown velocity field",
      { velocity: { window: "1h", max: 1, burst: 2 } },
      ["velocity.burst: unknown field"],
    ],
    [
      "a lowercase currency",
      { currencies: ["eur"] },
      ["currencies.0: must be an ISO 4217 code of 3 uppercase letters"],
    ],
    [
      "a lowercase country",
      { geo: { allow: ["DE", "fr"] } },
      ["geo.allow.1: must be an ISO 3166-1 alpha-2 code of 2 uppercase letters"],
    ],
    ["a repeated currency", { currencies: ["EUR", "USD", "EUR"] }, ["currencies.2: repeats EUR"]],
    ["a repeated country", { geo: { allow: ["DE", "DE"] } }, ["geo.allow.1: repeats DE"]],
    [
      "an empty currency list",
      { currencies: [] },
      ["currencies: Too small: expected array to have >=1 items"],
    ],
    [
      "a negative max_amount",
      { max_amount: -1 },
      ["max_amount: Too small: expected number to be >=0"],
    ],
    [
      "a fractional max_amount",
      { max_amount: 1.5 },
      ["max_amount: Invalid input: expected int, received number"],
    ],
    [
      "a velocity max of 0",
      { velocity: { window: "1h", max: 0 } },
      ["velocity.max: Too small: expected number to be >=1"],
    ],
    [
      "a malformed window",
      { velocity: { window: "an hour", max: 1 } },
      ["velocity.window: must be a duration such as 30s, 15m, 1h, 7d, or ISO 8601 PT15M, P7D"],
    ],
    [
      "a window beyond 90 days",
      { velocity: { window: "P91D", max: 1 } },
      ["velocity.window: must be between 1s and 90d"],
    ],
    [
      "a velocity without its window",
      { velocity: { max: 1 } },
      ["velocity.window: Invalid input: expected string, received undefined"],
    ],
  ])("refuses %s", (_, rules, expected) => {
    expect(issues(rules)).toEqual(expected);
  });

  it("normalizes the velocity window to seconds", () => {
    expect(normalizeRules(PolicyRules.parse(full))).toEqual({
      ...full,
      velocity: { window: "1h", max: 10, window_seconds: 3_600 },
    });
    expect(normalizeRules({ max_amount: 5 })).toEqual({ max_amount: 5 });
  });

  it("refuses to normalize a window the schema would refuse", () => {
    expect(() => normalizeRules({ velocity: { window: "91d", max: 1 } })).toThrow();
  });
});
