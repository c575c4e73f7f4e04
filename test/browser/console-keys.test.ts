import { describe, expect, inject, it } from "vitest";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { FIRST_SIGN_IN, unexpected, withKey } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: API keys", () => {
  const browser = useBrowser("console-keys");

  it("creates a key, shows its plaintext once (gone after a reload), and revokes it", async () => {
    const tab = await openSignedIn(browser, newUser("keys"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/api-keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();

    await page.getByLabel("Name").fill("ci key");
    await page.getByRole("radio", { name: "Live", exact: true }).check();
    // The defaults (assess:write, assess:read) plus one more.
    await page.getByRole("checkbox", { name: "agents:read" }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByTestId("secret-value");
    await secret.waitFor();
    const key = (await secret.innerText()).trim();
    expect(key).toMatch(/^aar_live_/);
    await page.getByText("you won't see it again").waitFor();
    await page.getByRole("button", { name: "Copy" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "ci key" });
    await row.waitFor();
    expect(await row.innerText()).toContain("assess:write, assess:read, agents:read");
    await tab.screenshot("created");

    // The key works, with the scopes it was given.
    expect((await withKey(key, "GET", "/v1/agents")).status).toBe(200);

    // After a reload the list has the key, and the page holds its plaintext nowhere.
    await page.reload();
    await page.getByRole("row").filter({ hasText: "ci key" }).waitFor();
    expect(await page.content()).not.toContain(key);
    expect(await page.getByTestId("secret-value").count()).toBe(0);
    await tab.screenshot("after-reload");

    // Revoke with the keyboard, confirming first: a first Enter alone changes nothing, and the
    // focus lands on "Confirm revoke", its focus ring visible.
    await row.getByRole("button", { name: "Revoke ci key" }).focus();
    await page.keyboard.press("Enter");
    await row.getByText("This cannot be undone").waitFor();
    expect((await withKey(key, "GET", "/v1/agents")).status).toBe(200);
    const confirm = row.getByRole("button", { name: "Confirm revoke" });
    const focus = await confirm.evaluate((element) => ({
      focused: element.ownerDocument.activeElement === element,
      outline: element.ownerDocument.defaultView?.getComputedStyle(element).outlineStyle,
    }));
    expect(focus).toEqual({ focused: true, outline: "solid" });
    await tab.screenshot("confirm-revoke");
    await page.keyboard.press("Enter");
    await row.getByText("revoked").first().waitFor();
    expect(await row.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
    expect((await withKey(key, "GET", "/v1/agents")).status).toBe(401);
    await tab.screenshot("revoked");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });

  it("never offers a test key a scope it cannot use, and says what each scope does", async () => {
    const tab = await openSignedIn(browser, newUser("key-scopes"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/api-keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    const scopes = page.getByRole("group", { name: "Scopes" });

    // Live: agents:write is offered, with what it does.
    await page.getByRole("radio", { name: "Live", exact: true }).check();
    const agentsWrite = scopes.getByRole("checkbox", { name: "agents:write" });
    await agentsWrite.check();
    const hint = await agentsWrite.getAttribute("aria-describedby");
    expect(await page.locator(`[id="${hint}"]`).innerText()).toBe(
      "Register principals and agents, their keys and Agent Cards.",
    );

    // Test: it is gone (and unchecked), named as live-only; the modes are explained.
    await page.getByRole("radio", { name: "Test", exact: true }).check();
    expect(await scopes.getByRole("checkbox", { name: "agents:write" }).count()).toBe(0);
    for (const scope of ["issuers:write", "gdpr:erase"]) {
      expect(await scopes.getByRole("checkbox", { name: scope }).count()).toBe(0);
    }
    expect(await scopes.innerText()).toContain(
      "Not offered to a test key, whose every use is live-only: agents:write, issuers:write, gdpr:erase.",
    );
    const policyWrite = scopes.getByRole("checkbox", { name: "policy:write" });
    const policyHint = await policyWrite.getAttribute("aria-describedby");
    expect(await page.locator(`[id="${policyHint}"]`).innerText()).toContain(
      "A test key is refused policies, their shadowing, evaluation sets and runs.",
    );
    const testRadio = page.getByRole("radio", { name: "Test", exact: true });
    const modeHint = await testRadio.getAttribute("aria-describedby");
    expect(await page.locator(`[id="${modeHint}"]`).innerText()).toContain("never billed");

    // The key made is a test key with the scopes shown, none live-only.
    await page.getByLabel("Name").fill("test scopes");
    await page.getByRole("button", { name: "Create key" }).click();
    const row = page.getByRole("row").filter({ hasText: "test scopes" });
    await row.waitFor();
    expect(await row.innerText()).toContain("assess:write, assess:read");
    expect(await row.innerText()).not.toContain("agents:write");
    await tab.screenshot("test-key-scopes");
    await expectAccessible(page, "API keys");

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
