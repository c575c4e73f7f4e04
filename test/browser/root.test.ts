/**
 * `GET /` in a real browser, on the running service (`npm run dev`): the asset layer has no file
 * for `/`, so the Worker answers it, with a page that links to the reference and the console.
 */
import { describe, expect, inject, it } from "vitest";
import { cspWeaknesses } from "../support/csp";
import { useBrowser } from "./support/browser";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("GET / in Chromium", () => {
  const browser = useBrowser("root");

  it("is the Worker's page, under a strict policy, and leads to the reference", async () => {
    const tab = await browser.open("/");
    expect(tab.response?.status()).toBe(200);
    const headers = tab.response?.headers() ?? {};
    // Stamped by the Worker: the asset layer did not shadow `/`.
    expect(headers["x-request-id"]).toMatch(/^req_/);
    expect(headers["content-type"]).toBe("text/html; charset=UTF-8");
    expect(cspWeaknesses(headers["content-security-policy"] ?? null)).toEqual([]);
    await expect(tab.page.title()).resolves.toBe("Agent Action Risk Assessment");
    const links = await tab.page
      .locator("a")
      .evaluateAll((anchors) => anchors.map((a) => [a.textContent, a.getAttribute("href")]));
    expect(links).toEqual([
      ["API reference", `${origin}/docs`],
      ["Console", `${origin}/console/`],
      ["OpenAPI document", `${origin}/openapi.json`],
    ]);
    await tab.screenshot("root");
    expect(await tab.problems()).toEqual([]);

    await tab.navigation(async () => {
      await tab.page.getByRole("link", { name: "API reference" }).click();
      return tab.page.waitForURL(`${origin}/docs`);
    });
    await expect(tab.page.title()).resolves.toBe("API reference · Agent Action Risk Assessment");
  });
});
