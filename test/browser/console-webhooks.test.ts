import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { FIRST_SIGN_IN, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: webhooks", () => {
  const browser = useBrowser("console-webhooks");

  it("creates an endpoint with its secret shown once, rotates it, lists its deliveries", async () => {
    const tab = await openSignedIn(browser, newUser("webhooks"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/webhooks`);
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();

    await page.getByLabel("URL (https)").fill("https://example.com/hooks/agent-risk");
    await page.getByRole("checkbox", { name: "assessment.denied" }).check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = page.getByTestId("secret-value");
    await secret.waitFor();
    const first = (await secret.innerText()).trim();
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByText("you won't see it again").waitFor();
    const row = page.getByRole("row").filter({ hasText: "https://example.com/hooks/agent-risk" });
    expect(await row.innerText()).toContain("assessment.denied");
    await tab.screenshot("created");

    // Gone after a reload.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(first);

    // A rotation shows the new secret, once.
    await row.getByRole("button", { name: /^Rotate secret/ }).click();
    await row.getByRole("button", { name: "Confirm rotation" }).click();
    await secret.waitFor();
    const second = (await secret.innerText()).trim();
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    await row.getByText("previous secret signs until").waitFor();

    await row.getByRole("button", { name: /^Deliveries/ }).click();
    await page.getByRole("heading", { name: /^Deliveries to/ }).waitFor();
    await page.getByText("No deliveries yet.").waitFor();
    await tab.screenshot("rotated");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
