import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: billing", () => {
  const browser = useBrowser("console-billing");

  it("shows the plan and usage, sets a cap, and raises it with the owner's confirmation", async () => {
    const tab = await openSignedIn(browser, newUser("billing"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/billing`);
    await page.getByRole("heading", { level: 2, name: "Plan: Free" }).waitFor();
    expect(await page.getByTestId("usage-assessments").innerText()).toBe("0");
    expect(await page.getByTestId("cap-status").innerText()).toBe("No cap");

    await page.getByLabel("Cap (USD)").fill("10");
    await page.getByRole("button", { name: "Set cap" }).click();
    await page.getByText("Spending cap set to $10.00.").waitFor();
    await page.getByText("Under the cap").waitFor();

    // Raising takes the owner's confirmation: the 409 asks for it, the owner gives it.
    await page.getByLabel("Cap (USD)").fill("25.50");
    await page.getByRole("button", { name: "Set cap" }).click();
    await page.getByRole("button", { name: "Confirm as owner" }).click();
    await page.getByText("Spending cap raised to $25.50.").waitFor();
    const { body } = await asSession(tab, "GET", "/v1/billing");
    expect(body.spending_cap.amount).toBe(2550);
    await tab.screenshot("cap");

    expect(
      unexpected(await tab.problems(), [
        FIRST_SIGN_IN,
        { status: 409, method: "POST", path: "/v1/billing/spending_cap" },
      ]),
    ).toEqual([]);
  });
});
