/**
 * The console after the README's walk-through (docs/console.md, console/README.md): a person
 * who started with `npm run token` and a test key signs in to the console with the same user
 * name, and finds the same organization, by its name, open on the test data it has.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { signIn } from "./support/console";
import { assessFromNode, newUser, shortId } from "./support/console-api";
import { REPO } from "./support/service";

const origin = inject("browserOrigin");

/** `npm run token -- --sub <user>` against the running service's local identity provider. */
async function token(user: string): Promise<string> {
  const { stdout } = await promisify(execFile)("npm", ["run", "-s", "token", "--", "--sub", user], {
    cwd: REPO,
    env: { ...process.env, DEV_STATE_DIR: inject("browserStateDir") ?? "" },
  });
  return stdout.trim().split("\n").at(-1) ?? "";
}

/** A call from Node with a Bearer session, as the README's `curl` steps make them. */
async function asBearer(session: string, path: string, body?: unknown) {
  const response = await fetch(`${origin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, any>;
  expect(response.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

describe.skipIf(!origin)("the console's first visit after the README's walk-through", () => {
  const browser = useBrowser("console-first-visit");

  it("is the org `npm run token` made, by its name, in test mode while it has only test data", async () => {
    const user = newUser("walker");
    const session = await token(user);
    const org = await asBearer(session, "/v1/orgs", {});
    expect(org.name).toBe(`${user}@example.test's organization`);
    const testKey = await asBearer(session, "/v1/api-keys", {
      name: "my agent",
      scopes: ["assess:write", "assess:read"],
      mode: "test",
    });
    const assessed = await assessFromNode(testKey.key);

    // The console's sign-in with the same user name: the same user, so the org exists already
    // (no first-sign-in 403) and the console opens on it, in test mode, without being told.
    const tab = await browser.open("/health");
    await signIn(tab, user);
    await tab.page.getByRole("navigation", { name: "Console" }).waitFor();
    await tab.page.getByText(org.name, { exact: true }).waitFor();
    await tab.page.getByText("Test mode: you are viewing test data.").waitFor();
    await expect(tab.page.getByRole("switch", { name: "Test mode" }).isChecked()).resolves.toBe(
      true,
    );
    await tab.page.getByRole("link", { name: "Assessments" }).click();
    await tab.page
      .getByRole("link", { name: shortId(assessed.assessmentId), exact: true })
      .waitFor();
    await tab.screenshot("test-data-only");
    // The console picked the mode; nobody chose it, so nothing is remembered.
    const remembered = await tab.page.evaluate(() =>
      (
        globalThis as unknown as { localStorage: { getItem(key: string): string | null } }
      ).localStorage.getItem("agent-risk.console.mode"),
    );
    expect(remembered).toBeNull();
    expect(await tab.problems()).toEqual([]);

    // Once live traffic exists, the next visit opens in live mode.
    const liveKey = await asBearer(session, "/v1/api-keys", {
      name: "live agent",
      scopes: ["assess:write", "assess:read"],
    });
    await assessFromNode(liveKey.key);
    const again = await browser.open("/health");
    await signIn(again, user);
    await again.page.getByRole("navigation", { name: "Console" }).waitFor();
    await again.page.getByText(org.name, { exact: true }).waitFor();
    await expect(again.page.getByRole("switch", { name: "Test mode" }).isChecked()).resolves.toBe(
      false,
    );
    await expect(
      again.page.getByText("Test mode: you are viewing test data.").count(),
    ).resolves.toBe(0);
    expect(await again.problems()).toEqual([]);
  });
});
