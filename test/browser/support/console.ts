/**
 * Signing in to the console in a real browser, the way a person does: the console's sign-in
 * route, the local identity provider's page ("User name", "Sign in"), back to /console/ with the
 * session cookies set (docs/console.md). Every console test starts here.
 *
 *   const tab = await browser.open("/console/");
 *   await signIn(tab, "ada");          // signed in as local|ada, ada@example.test
 */
import { inject } from "vitest";
import type { BrowserTab } from "./browser";

/** The CSRF cookie's value, as the console's script reads it. */
export async function csrfToken(tab: BrowserTab): Promise<string> {
  return tab.page.evaluate(() => {
    const { cookie } = (globalThis as unknown as { document: { cookie: string } }).document;
    return /(?:^|;\s*)__Host-ar_csrf=([^;]*)/.exec(cookie)?.[1] ?? "";
  });
}

/**
 * Signs `user` in through the local identity provider and waits for the console's home page.
 * The first sign-in of a user has no organization yet: the console creates it (POST /v1/orgs).
 */
export async function signIn(tab: BrowserTab, user: string): Promise<void> {
  const origin = inject("browserOrigin");
  if (!origin) throw new Error("signIn: no service running");
  await tab.page.goto(`${origin}/console/auth/login`);
  await tab.page.getByLabel("User name").fill(user);
  await tab.page.getByRole("button", { name: "Sign in" }).click();
  try {
    await tab.navigation(() => tab.page.waitForURL(`${origin}/console/`));
  } catch (error) {
    // Where the sign-in stopped instead (the provider's page, an error from the callback, a
    // redirect elsewhere) is what a failure needs to be understood; the timeout alone says none.
    const text = await tab.page
      .locator("body")
      .innerText({ timeout: 1_000 })
      .catch(() => "(no body)");
    await tab.screenshot(`sign-in-stopped-${user}`).catch(() => {});
    throw new Error(
      `signIn(${user}): no redirect to /console/; the page is at ${tab.page.url()} and shows ` +
        `${JSON.stringify(text.slice(0, 500))}. Problems so far: ${JSON.stringify(
          await tab.problems().catch(() => []),
        )}`,
      { cause: error },
    );
  }
  await tab.page.waitForLoadState("load");
}
