import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { FIRST_SIGN_IN, liveKey, unexpected, withKey } from "./support/console-b";

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

  it("shows a delivery to a receiver with its status and attempts", async () => {
    // A receiver on loopback (development's outbound policy allows it), answering 204.
    const received: string[] = [];
    const receiver = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        received.push(String(request.headers["webhook-id"] ?? ""));
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const tab = await openSignedIn(browser, newUser("deliveries"));
      const { page } = tab;
      await page.goto(`${origin}/console/#/webhooks`);
      await page.getByLabel("URL (https)").fill(url);
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await page.getByTestId("secret-value").waitFor();

      // An assessment made with a live key: its events are delivered to the endpoint.
      const key = await liveKey(tab, ["assess:write"]);
      const assessed = await withKey(key, "POST", "/v1/assess", {
        kind: "message_send",
        mandate: { to: "+15550100", body: `hello ${crypto.randomUUID()}` },
      });
      expect(assessed.status, JSON.stringify(assessed.body)).toBe(200);
      for (let i = 0; i < 120 && received.length === 0; i++) await sleep(250);
      expect(received.length).toBeGreaterThan(0);

      const row = page.getByRole("row").filter({ hasText: url });
      await row.getByRole("button", { name: /^Deliveries/ }).click();
      const deliveries = page.getByRole("table", { name: /^Deliveries/ });
      // The page shows what the service recorded once the attempt is written.
      for (let i = 0; i < 40; i++) {
        if ((await deliveries.getByText("succeeded").count()) > 0) break;
        await sleep(500);
        await page.getByRole("button", { name: "Refresh deliveries" }).click();
      }
      const delivered = deliveries.getByRole("row").filter({ hasText: "succeeded" }).first();
      await delivered.getByText("1 attempt").click();
      await delivered.getByText(/HTTP 204 in \d+ ms/).waitFor();
      await tab.screenshot("delivery");

      expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
