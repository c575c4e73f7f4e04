import { generateKeyPairSync } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import {
  asSession,
  FIRST_SIGN_IN,
  horizontalOverflow,
  newAgent,
  unexpected,
} from "./support/console-b";

const origin = inject("browserOrigin");

/** A fresh Ed25519 public key as a JWK. */
function publicJwk() {
  const { publicKey } = generateKeyPairSync("ed25519");
  const { kty, crv, x } = publicKey.export({ format: "jwk" });
  return { kty, crv, x };
}

describe.skipIf(!origin)("console: agents", () => {
  const browser = useBrowser("console-agents");

  it("lists the agents; the detail shows the trust chart, the keys and the card status", async () => {
    const tab = await openSignedIn(browser, newUser("agents"));
    const { page } = tab;
    const agent = await newAgent(tab, "Shopping agent");

    await page.goto(`${origin}/console/#/agents`);
    await page.getByRole("link", { name: "Shopping agent" }).click();
    await page.getByRole("heading", { level: 1, name: "Shopping agent" }).waitFor();
    expect(page.url()).toContain(`#/agents/${agent.id}`);
    const trust = page.getByRole("region", { name: "Trust history" });
    await trust.locator(".chart canvas").first().waitFor();
    await trust.getByText("Events (1)").waitFor();
    expect(await page.getByTestId("card-status").innerText()).toBe("unverified");

    // Add a key: it is listed, and the trust history has its event.
    const jwk = publicJwk();
    await page.getByLabel(/^Public key/).fill(JSON.stringify(jwk));
    await page.getByRole("button", { name: "Add key" }).click();
    const keys = page.getByRole("region", { name: "Keys" });
    await keys.getByRole("button", { name: /^Revoke key/ }).waitFor();
    await trust.getByText("Events (2)").waitFor();
    await tab.screenshot("detail");

    // Revoke it, confirming first.
    await keys.getByRole("button", { name: /^Revoke key/ }).click();
    await keys.getByRole("button", { name: "Confirm revoke" }).click();
    await keys.getByText("revoked").first().waitFor();
    const { body: listed } = await asSession(tab, "GET", `/v1/agents/${agent.id}/keys`);
    expect(listed.data.map((k: { status: string }) => k.status)).toEqual(["revoked"]);

    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });

  it("fits a phone: the agent page at 390×844 scrolls only vertically", async () => {
    const tab = await openSignedIn(browser, newUser("agents-phone"), {
      viewport: { width: 390, height: 844 },
    });
    const { page } = tab;
    const agent = await newAgent(tab, "Phone agent", "Bo");
    await page.goto(`${origin}/console/#/agents/${agent.id}`);
    await page.locator(".chart canvas").first().waitFor();
    const { overflow, wide } = await horizontalOverflow(tab);
    expect(overflow, wide.join(", ")).toBe(0);
    await tab.screenshot("phone");
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
