import { describe, expect, it } from "vitest";
import { bodyOf, draftOf, sortIssues } from "../../console/src/pages/policy-form";

// The console's rule editor (console/src/pages/policy-form.ts): the server's 400 details sorted
// to the rule and field they name, and the body built from the editor's texts.

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
    expect(issues.limits).toEqual(["max_amount: must be >= 0", "grammar: required with rules"]);
    expect(issues.name).toEqual(["Too small"]);
    expect(issues.other).toEqual([
      "rules.rules: more than 1000 conditions in all",
      "unrepresentable input",
    ]);
  });

  it("reads details that are not a list of issues as nothing to place", () => {
    expect(sortIssues({ message: "x" }).other).toEqual([]);
    expect(sortIssues([{ message: "no path" }]).other).toEqual(["no path"]);
  });
});

describe("draftOf and bodyOf", () => {
  const rules = {
    max_amount: 500,
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

  it("round-trips a policy's rules through the editor", () => {
    const built = bodyOf(draftOf("P", rules));
    expect(built).toEqual({ ok: true, body: { name: "P", rules } });
  });

  it("sends no grammar without rules, and {} for empty limits", () => {
    expect(bodyOf({ name: "Empty", limits: "  ", rules: [] })).toEqual({
      ok: true,
      body: { name: "Empty", rules: {} },
    });
  });

  it("stops at text that is not JSON, at its field", () => {
    const draft = draftOf("P", rules);
    const broken = {
      ...draft,
      limits: "[1]",
      rules: draft.rules.map((r) => ({ ...r, when: "{" })),
    };
    const built = bodyOf(broken);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.issues.limits).toEqual(["must be a JSON object"]);
    expect(built.issues.rules.get(0)?.get("when")?.[0]).toMatch(/^not JSON: /);
  });
});
