import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: pages B across organizations", () => {
  const browser = useBrowser("console-tenancy-b");

  it("never shows one organization's policies, agents, endpoints or keys to another", async () => {
    // The first organization's data, each named with a mark the second must never see.
    const first = await openSignedIn(browser, newUser("tenant-a"));
    const mark = `tenant-a-${crypto.randomUUID().slice(0, 8)}`;
    const { body: policy } = await asSession(first, "POST", "/v1/policies", {
      name: `${mark} policy`,
      rules: {},
    });
    const { body: principal } = await asSession(first, "POST", "/v1/principals", { name: "A" });
    const { body: agent } = await asSession(first, "POST", "/v1/agents", {
      principal_id: principal.id,
      name: `${mark} agent`,
    });
    await asSession(first, "POST", "/v1/webhook-endpoints", {
      url: `https://example.com/${mark}`,
    });
    await asSession(first, "POST", "/v1/api-keys", {
      name: `${mark} key`,
      mode: "test",
      scopes: ["assess:read"],
    });
    // The first sees them all.
    for (const [path, what] of [
      ["policies", "policy"],
      ["agents", "agent"],
      ["webhooks", ""],
      ["api-keys", "key"],
    ]) {
      await first.page.goto(`${origin}/console/#/${path}`);
      await first.page
        .getByText(what ? `${mark} ${what}` : `https://example.com/${mark}`)
        .first()
        .waitFor();
    }
    expect(unexpected(await first.problems(), [FIRST_SIGN_IN])).toEqual([]);

    const second = await openSignedIn(browser, newUser("tenant-b"));
    const { page } = second;
    const lists: [string, string][] = [
      ["policies", "No policies yet."],
      ["agents", "No agents."],
      ["webhooks", "No endpoints in this mode."],
      ["api-keys", "No API keys yet."],
    ];
    for (const [path, empty] of lists) {
      await page.goto(`${origin}/console/#/${path}`);
      await page.getByText(empty).waitFor();
      expect(await page.content(), path).not.toContain(mark);
    }
    // A link to the first's policy or agent is not found, and shows nothing of it.
    await page.goto(`${origin}/console/#/policies/${policy.id}`);
    await page.getByRole("alert").getByText("not_found").waitFor();
    expect(await page.content()).not.toContain(mark);
    await page.goto(`${origin}/console/#/agents/${agent.id}`);
    await page.getByRole("alert").getByText("not_found").waitFor();
    expect(await page.content()).not.toContain(mark);
    await second.screenshot("agent-not-found");

    expect(
      unexpected(await second.problems(), [
        FIRST_SIGN_IN,
        { status: 404, method: "GET", path: `/v1/policies/${policy.id}` },
        { status: 404, method: "GET", path: `/v1/agents/${agent.id}` },
      ]),
    ).toEqual([]);
  });
});
