import { describe, expect, inject, it } from "vitest";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, liveKey, unexpected, withKey } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: policies", () => {
  const browser = useBrowser("console-policies");

  it("creates a draft, and shows the server's error for an invalid rule at that rule", async () => {
    const tab = await openSignedIn(browser, newUser("policies"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/policies/new`);
    await page.getByRole("heading", { level: 1, name: "New policy draft" }).waitFor();
    await page.getByLabel("Name").fill("Large payments");
    await page.getByRole("button", { name: "Add a rule" }).click();
    await page.getByRole("button", { name: "Add a rule" }).click();
    await page.getByRole("button", { name: "Create draft" }).click();
    // Created: the page of the new draft.
    await page.getByRole("heading", { level: 1, name: "Large payments" }).waitFor();
    expect(page.url()).toMatch(/#\/policies\/[0-9a-f-]{36}$/);

    // The second rule reads a risk level that does not exist: the server names its path.
    const second = page.getByTestId("rule-2");
    await second
      .getByLabel("Condition (JSON)")
      .fill(JSON.stringify({ attr: "risk.level", op: "eq", value: "high" }));
    await page.getByRole("button", { name: "Save as new draft" }).click();
    const condition = second.getByLabel("Condition (JSON)");
    await second.getByText("when.value: must be one of normal, elevated, highest").waitFor();
    expect(await condition.getAttribute("aria-invalid")).toBe("true");
    // The message describes the condition, next to it, with the served rule language's address.
    const describedBy = (await condition.getAttribute("aria-describedby"))?.split(" ") ?? [];
    const errors = page.locator(`[id="${describedBy.find((id) => id.endsWith("-errors"))}"]`);
    expect(await errors.innerText()).toContain("must be one of normal, elevated, highest");
    expect(await errors.getByRole("link").getAttribute("href")).toBe(
      "/docs#description/policy-rules",
    );
    expect(await page.content()).not.toContain("docs/rules.md");
    // The first rule is fine and is not marked.
    const first = page.getByTestId("rule-1").getByLabel("Condition (JSON)");
    expect(await first.getAttribute("aria-invalid")).toBeNull();
    await page.getByText("The policy was not saved: 1 problem").waitFor();
    await tab.screenshot("invalid-rule");
    await expectAccessible(page, "policy page with an invalid rule");

    expect(
      unexpected(await tab.problems(), [
        FIRST_SIGN_IN,
        { status: 400, method: "POST", path: "/v1/policies" },
      ]),
    ).toEqual([]);
  });

  it("creates a policy from the form: 2,150.00 USD is stored as 215000 minor units", async () => {
    const tab = await openSignedIn(browser, newUser("policy-form"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/policies/new`);
    await page.getByRole("heading", { level: 1, name: "New policy draft" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Typed limits");
    await page.getByLabel("Largest amount", { exact: true }).fill("2,150.00");
    await page.getByLabel("Currency of the largest amount").selectOption("USD");
    // The pickers take a code or a name from the ISO list, with Enter or Add.
    await page.getByLabel("Add a currency").fill("USD");
    await page.getByLabel("Add a currency").press("Enter");
    await page.getByLabel("Add a currency").fill("EUR — Euro");
    await page
      .getByRole("group", { name: "Allowed currencies" })
      .getByRole("button", { name: "Add" })
      .click();
    await page.getByLabel("Add a country").fill("Germany");
    await page.getByLabel("Add a country").press("Enter");
    await page.getByLabel("Add a country").fill("XX");
    await page.getByLabel("Add a country").press("Enter");
    await page.getByText("XX is not a country code of the list").waitFor();
    expect(await page.getByLabel("Add a country").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("At most").fill("20");
    await page.getByLabel("per", { exact: true }).fill("15");
    await page.getByLabel("Window unit").selectOption("m");
    await page.getByRole("button", { name: "Remove DE (Germany)" }).waitFor();

    // A condition that does not parse is caught as it is typed, linked to the reference.
    await page.getByRole("button", { name: "Add a rule" }).click();
    const condition = page.getByTestId("rule-1").getByLabel("Condition (JSON)");
    await condition.fill('{"attr": "amount", "op": "greater", "value": 1}');
    const fault = page.getByTestId("rule-1").getByText(/^when\.op: must be one of eq, ne/);
    await fault.waitFor();
    expect(await condition.getAttribute("aria-invalid")).toBe("true");
    const link = page
      .getByTestId("rule-1")
      .getByRole("link", { name: "the rule language in the API reference" });
    expect(await link.getAttribute("href")).toBe("/docs#description/policy-rules");
    await tab.screenshot("condition-fault");
    await expectAccessible(page, "policy form with a condition fault");
    await condition.fill('{"attr": "amount", "op": "gt", "value": 100000}');
    expect(await condition.getAttribute("aria-invalid")).toBeNull();

    await page.getByRole("button", { name: "Create draft" }).click();
    await page.getByRole("heading", { level: 1, name: "Typed limits" }).waitFor();
    const id = /#\/policies\/([0-9a-f-]{36})$/.exec(page.url())?.[1];
    const { body } = await asSession(tab, "GET", `/v1/policies/${id}`);
    expect(body.rules).toEqual({
      max_amount: 215000,
      currencies: ["USD", "EUR"],
      geo: { allow: ["DE"] },
      velocity: { max: 20, window: "15m" },
      grammar: 1,
      rules: [
        { id: "rule-1", action: "review", when: { attr: "amount", op: "gt", value: 100000 } },
      ],
    });
    // The new draft's editor shows the limits as they were typed.
    expect(await page.getByLabel("Largest amount", { exact: true }).inputValue()).toBe("2150.00");
    await tab.screenshot("created-from-form");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });

  it("backtests a draft over the org's assessments: the chart and the labeled metrics", async () => {
    const tab = await openSignedIn(browser, newUser("backtest"));
    const { page } = tab;
    // History: four messages assessed, two of them labeled.
    const key = await liveKey(tab, ["assess:write", "assess:read"]);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await withKey(key, "POST", "/v1/assess", {
        kind: "message_send",
        mandate: { to: "+15550100", body: `hello ${crypto.randomUUID()}` },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      ids.push(answer.body.assessmentId);
    }
    for (const [id, label] of [
      [ids[0], "fraud"],
      [ids[1], "legitimate"],
    ]) {
      const answer = await withKey(key, "POST", `/v1/assessments/${id}/feedback`, { label });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    }
    const { body: policy } = await asSession(tab, "POST", "/v1/policies", {
      name: "No messages",
      rules: {
        grammar: 1,
        rules: [
          {
            id: "deny-messages",
            action: "deny",
            when: { attr: "kind", op: "eq", value: "message_send" },
          },
        ],
      },
    });

    await page.goto(`${origin}/console/#/policies/${policy.id}`);
    await page.getByRole("heading", { level: 1, name: "No messages" }).waitFor();
    await page.getByRole("button", { name: "Run backtest" }).click();
    const result = page.getByTestId("backtest-result");
    await result.waitFor();
    await result.locator(".chart canvas").first().waitFor();
    expect(await result.getByRole("status").innerText()).toMatch(/^Replayed 4 assessments/);
    const metrics = await result.getByTestId("backtest-metrics").innerText();
    for (const name of ["Precision", "Recall", "Fire rate"]) expect(metrics).toContain(name);
    // Under this policy every message is denied: the fraud is caught, the legitimate blocked.
    const row = (name: string) =>
      result.getByTestId("backtest-metrics").getByRole("row").filter({ hasText: name });
    expect(await row("Fraud caught").innerText()).toMatch(/Fraud caught\s+\d+\s+1$/);
    expect(await row("Legitimate blocked").innerText()).toMatch(/Legitimate blocked\s+\d+\s+1$/);
    expect(await row("Fire rate").innerText()).toMatch(/100\.0 %$/);
    await result.locator(".chart").scrollIntoViewIfNeeded();
    await tab.screenshot("backtest");

    // Activating shows first what the policy would change over the last 30 days, and waits.
    await page.getByRole("button", { name: "Activate…" }).click();
    const preview = page.getByTestId("activation-backtest");
    await preview.waitFor();
    const summary = await preview.getByRole("status").innerText();
    expect(summary).toMatch(/^Over the last 30 days, 4 assessments replayed: \d would change/);
    const recorded = (await asSession(tab, "GET", "/v1/assessments?limit=10")).body.data as {
      decision: string;
    }[];
    const changed = recorded.filter((a) => a.decision !== "deny").length;
    expect(summary).toContain(`${changed} would change`);
    const confirm = page.getByRole("button", { name: "Confirm activation" });
    await confirm.waitFor();
    // Nothing is active until the confirmation.
    expect((await asSession(tab, "GET", `/v1/policies/${policy.id}`)).body.status).toBe("draft");
    await tab.screenshot("activation-preview");
    await expectAccessible(page, "activation preview");
    await confirm.click();
    await page.getByText("Activated: this policy now decides, as version 1.").waitFor();
    expect((await asSession(tab, "GET", `/v1/policies/${policy.id}`)).body.status).toBe("active");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });

  it("activates, shadows and rolls back to the policy active before", async () => {
    const tab = await openSignedIn(browser, newUser("rollback"));
    const { page } = tab;
    const create = async (name: string, activate: boolean) =>
      (await asSession(tab, "POST", "/v1/policies", { name, rules: {}, activate })).body;
    const first = await create("First", true);
    const second = await create("Second", false);

    // Activate the second from its page.
    await page.goto(`${origin}/console/#/policies/${second.id}`);
    await page.getByRole("button", { name: "Activate…" }).click();
    await page.getByRole("button", { name: "Confirm activation" }).click();
    await page.getByText("Activated: this policy now decides, as version 2.").waitFor();

    // The first, now a draft, shadows the second.
    await page.goto(`${origin}/console/#/policies/${first.id}`);
    await page.getByRole("button", { name: "Start shadow" }).click();
    await page.getByRole("button", { name: "Stop shadow" }).waitFor();
    await page.getByRole("button", { name: "Show shadow report" }).click();
    await page.getByTestId("shadow-report").getByText("0 assessments shadowed").waitFor();

    // The list offers to roll back to the first (the draft with the highest version).
    await page.goto(`${origin}/console/#/policies`);
    const rollback = page.getByRole("button", { name: "Roll back to First (version 1)" });
    await rollback.click();
    // As any activation, the rollback shows its backtest first (no assessments here).
    await page
      .getByTestId("activation-backtest")
      .getByText("Over the last 30 days, 0 assessments replayed: 0 would change.")
      .waitFor();
    await page.getByRole("button", { name: "Confirm rollback" }).click();
    await page.getByText("Rolled back: First is active again as version 3.").waitFor();
    await page.getByRole("button", { name: "Roll back to Second (version 2)" }).waitFor();
    const { body } = await asSession(tab, "GET", `/v1/policies/${first.id}`);
    expect([body.status, body.version, body.shadow]).toEqual(["active", 3, false]);
    await tab.screenshot("rolled-back");
    await expectAccessible(page, "policies list");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
