import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { assessFromNode, createKey, newUser, openSignedIn, shortId } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, horizontalOverflow, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: pages B on a phone", () => {
  const browser = useBrowser("console-layout-b");

  it("fits 390×844: every page B scrolls only vertically", async () => {
    const tab = await openSignedIn(browser, newUser("phone"), {
      viewport: { width: 390, height: 844 },
    });
    const { page } = tab;
    const { body: policy } = await asSession(tab, "POST", "/v1/policies", {
      name: "Phone policy",
      rules: {
        max_amount: 100000,
        grammar: 1,
        rules: [{ id: "big", action: "review", when: { attr: "amount", op: "gt", value: 5000 } }],
      },
    });
    await asSession(tab, "POST", "/v1/webhook-endpoints", { url: "https://example.com/phone" });
    // Each page, and a text it shows once its data is in.
    const pages: [string, string, string][] = [
      ["policies", "Policies", "Phone policy"],
      [`policies/${policy.id}`, "Phone policy", "Run backtest"],
      ["policies/new", "New policy draft", "Add a rule"],
      ["agents", "Agents", "No agents."],
      ["webhooks", "Webhooks", "https://example.com/phone"],
      ["network", "Network signals", "Settings (live mode)"],
      ["api-keys", "API keys", "No API keys yet."],
      ["billing", "Billing", "Plan: Free"],
    ];
    for (const [path, title, loaded] of pages) {
      await page.goto(`${origin}/console/#/${path}`);
      await page.getByRole("heading", { level: 1, name: title }).waitFor();
      await page.getByText(loaded).first().waitFor();
      await page.waitForLoadState("networkidle");
      const { overflow, wide } = await horizontalOverflow(tab);
      expect(overflow, `${path}: ${wide.join(", ")}`).toBe(0);
      await tab.screenshot(path.replaceAll("/", "-"));
    }
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
  it("fits 390×844: the assessments, an assessment and the audit page scroll only vertically", async () => {
    const tab = await openSignedIn(browser, newUser("phone-a"), {
      viewport: { width: 390, height: 844 },
    });
    const { page } = tab;
    const { assessmentId } = await assessFromNode(await createKey(tab));
    const pages: [string, string, string][] = [
      ["assessments", "Assessments", shortId(assessmentId)],
      [`assessments/${assessmentId}`, `Assessment ${shortId(assessmentId)}`, "Audit entry"],
      ["audit", "Audit", "Verify now"],
    ];
    for (const [path, title, loaded] of pages) {
      await page.goto(`${origin}/console/#/${path}`);
      await page.getByRole("heading", { level: 1, name: title }).waitFor();
      await page.getByText(loaded).first().waitFor();
      await page.waitForLoadState("networkidle");
      const { overflow, wide } = await horizontalOverflow(tab);
      expect(overflow, `${path}: ${wide.join(", ")}`).toBe(0);
      await tab.screenshot(path.replaceAll("/", "-").slice(0, 40));
    }
    // The verify report, with its long hashes, fits too.
    await page.getByRole("button", { name: "Verify now" }).click();
    await page.getByText("The audit trail verifies", { exact: true }).waitFor();
    await page.waitForLoadState("networkidle");
    const { overflow, wide } = await horizontalOverflow(tab);
    expect(overflow, `audit report: ${wide.join(", ")}`).toBe(0);
    await tab.screenshot("audit-verified");
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
