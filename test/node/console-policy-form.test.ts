import { describe, expect, it } from "vitest";
import { fromMinor, toMinor } from "../../console/src/format";
import {
  bodyOf,
  conditionFaults,
  draftOf,
  type PolicyDraft,
  sortIssues,
  windowOf,
  windowSeconds,
} from "../../console/src/pages/policy-form";

// The console's policy form (console/src/pages/policy-form.ts): the create shape from the
// form's fields (amounts in major units, code lists, a velocity as count per duration) and
// back, the condition's check before sending, and the server's 400 details sorted to the
// field they name.

describe("sortIssues", () => {
  it("puts each detail at the rule and field its path names, keeping the inner path", () => {
    const issues = sortIssues([
      {
        path: "rules.rules.1.when.any.1.value",
        message: "must be one of normal, elevated, highest",
      },
      { path: "rules.rules.0.id", message: "repeats a" },
      { path: "rules.rules.2", message: "Invalid input" },
      { path: "rules.rules.3.extra", message: "unrecognized key" },
      { path: "rules.max_amount", message: "must be >= 0" },
      { path: "rules.currencies.1", message: "repeats USD" },
      { path: "rules.geo.allow.0", message: "must be an ISO 3166-1 alpha-2 code" },
      { path: "rules.velocity.window", message: "must be between 1s and 90d" },
      { path: "rules.grammar", message: "required with rules" },
      { path: "name", message: "Too small" },
      { path: "rules.rules", message: "more than 1000 conditions in all" },
      { path: "", message: "unrepresentable input" },
    ]);
    expect([...issues.rules.entries()].map(([i, f]) => [i, [...f.entries()]])).toEqual([
      [1, [["when", ["when.any.1.value: must be one of normal, elevated, highest"]]]],
      [0, [["id", ["repeats a"]]]],
      [2, [["", ["Invalid input"]]]],
      [3, [["", ["extra: unrecognized key"]]]],
    ]);
    expect([...issues.limits.entries()]).toEqual([
      ["max_amount", ["must be >= 0"]],
      ["currencies", ["1: repeats USD"]],
      ["geo", ["allow.0: must be an ISO 3166-1 alpha-2 code"]],
      ["velocity", ["window: must be between 1s and 90d"]],
    ]);
    expect(issues.name).toEqual(["Too small"]);
    expect(issues.other).toEqual([
      "rules.grammar: required with rules",
      "rules.rules: more than 1000 conditions in all",
      "unrepresentable input",
    ]);
  });

  it("reads details that are not a list of issues as nothing to place", () => {
    expect(sortIssues({ message: "x" }).other).toEqual([]);
    expect(sortIssues([{ message: "no path" }]).other).toEqual(["no path"]);
  });
});

describe("amounts typed in major units (console/src/format.ts)", () => {
  it("reads grouping and the currency's own exponent", () => {
    expect(toMinor("2,150.00", "USD")).toEqual({ ok: true, minor: 215000 });
    expect(toMinor("2150.5", "USD")).toEqual({ ok: true, minor: 215050 });
    expect(toMinor(" 2 150 ", "EUR")).toEqual({ ok: true, minor: 215000 });
    expect(toMinor("0.29", "USD")).toEqual({ ok: true, minor: 29 });
    expect(toMinor("2,150", "JPY")).toEqual({ ok: true, minor: 2150 });
    expect(toMinor("1.234", "KWD")).toEqual({ ok: true, minor: 1234 });
  });

  it("refuses more decimals than the currency has, and what is not an amount", () => {
    expect(toMinor("2,150.5", "JPY")).toEqual({
      ok: false,
      message: "JPY has no minor unit: type a whole amount",
    });
    expect(toMinor("1.001", "USD")).toEqual({ ok: false, message: "USD has 2 decimals at most" });
    expect(toMinor("-5", "USD").ok).toBe(false);
    expect(toMinor("1e3", "USD").ok).toBe(false);
    expect(toMinor("99999999999999999", "USD")).toEqual({ ok: false, message: "is too large" });
  });

  it("writes minor units back as a person would type them", () => {
    expect(fromMinor(215000, "USD")).toBe("2150.00");
    expect(fromMinor(5, "USD")).toBe("0.05");
    expect(fromMinor(2150, "JPY")).toBe("2150");
    expect(fromMinor(1234, "KWD")).toBe("1.234");
  });
});

describe("velocity windows", () => {
  it("reads both duration forms in seconds and shows them in the largest unit", () => {
    expect(windowSeconds("1h")).toBe(3600);
    expect(windowSeconds("PT15M")).toBe(900);
    expect(windowSeconds("P1W")).toBe(604800);
    expect(windowSeconds("1M")).toBeNull();
    expect(windowOf(3600)).toEqual({ value: "1", unit: "h" });
    expect(windowOf(604800)).toEqual({ value: "7", unit: "d" });
    expect(windowOf(90)).toEqual({ value: "90", unit: "s" });
  });
});

describe("conditionFaults", () => {
  it("passes each form and names the path of a fault inside the condition", () => {
    expect(conditionFaults({ attr: "amount", op: "gt", value: 1 })).toEqual([]);
    expect(
      conditionFaults({ any: [{ attr: "amount", op: "gt", value: 1 }, { not: { attr: "x" } }] }),
    ).toEqual([
      "when.any.1.not.op: must be one of eq, ne, lt, lte, gt, gte, between, in, not_in, contains, contains_any, contains_all, exists",
      "when.any.1.not.value: required",
    ]);
    expect(conditionFaults({ all: [] })).toEqual([
      "when.all: must be a non-empty list of conditions",
    ]);
    expect(conditionFaults({ attr: "a", op: "eq", value: 1, any: [] })).toEqual([
      "when: must be exactly one of {all}, {any}, {not} or a comparison {attr, op, value}",
    ]);
    expect(conditionFaults({ atr: "amount" })).toEqual(["when: unknown key atr"]);
    expect(conditionFaults([1])[0]).toMatch(/^when: must be an object/);
  });
});

describe("draftOf and bodyOf", () => {
  const rules = {
    max_amount: 215000,
    currencies: ["USD", "EUR"],
    geo: { allow: ["US", "DE"] },
    velocity: { window: "15m", max: 20 },
    grammar: 1 as const,
    rules: [
      {
        id: "big",
        action: "review" as const,
        when: { attr: "amount", op: "gt" as const, value: 100 },
        description: "large",
      },
    ],
  };

  it("shows the limits as typed: the amount in the first allowed currency, the window in units", () => {
    const draft = draftOf("P", rules);
    expect(draft).toMatchObject({
      maxAmount: "2150.00",
      amountCurrency: "USD",
      currencies: ["USD", "EUR"],
      countries: ["US", "DE"],
      velocityMax: "20",
      velocityWindow: "15",
      velocityUnit: "m",
    });
  });

  it("round-trips a policy's rules through the form", () => {
    const built = bodyOf(draftOf("P", rules));
    expect(built).toEqual({ ok: true, body: { name: "P", rules } });
  });

  it("builds the create shape from what a person types: 2,150.00 USD is 215000", () => {
    const draft: PolicyDraft = {
      ...draftOf("Typed", undefined),
      maxAmount: "2,150.00",
      amountCurrency: "USD",
      currencies: ["USD"],
      countries: ["FR"],
      velocityMax: "5",
      velocityWindow: "1",
      velocityUnit: "d",
    };
    expect(bodyOf(draft)).toEqual({
      ok: true,
      body: {
        name: "Typed",
        rules: {
          max_amount: 215000,
          currencies: ["USD"],
          geo: { allow: ["FR"] },
          velocity: { max: 5, window: "1d" },
        },
      },
    });
    expect(bodyOf({ ...draft, amountCurrency: "JPY", maxAmount: "2,150" })).toMatchObject({
      ok: true,
      body: { rules: { max_amount: 2150 } },
    });
  });

  it("sends no grammar without rules, and {} for empty limits", () => {
    expect(bodyOf(draftOf("Empty", undefined))).toEqual({
      ok: true,
      body: { name: "Empty", rules: {} },
    });
  });

  it("stops at an amount, a velocity or a condition it cannot send, at its field", () => {
    const draft = draftOf("P", rules);
    const broken = {
      ...draft,
      maxAmount: "2,150.5",
      amountCurrency: "JPY",
      velocityMax: "0",
      rules: draft.rules.map((r) => ({ ...r, when: "{" })),
    };
    const built = bodyOf(broken);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect([...built.issues.limits.entries()]).toEqual([
      ["max_amount", ["JPY has no minor unit: type a whole amount"]],
      ["velocity", ["the count must be a whole number of 1 or more"]],
    ]);
    expect(built.issues.rules.get(0)?.get("when")?.[0]).toMatch(/^not JSON: /);
  });
});
