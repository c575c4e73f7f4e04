import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { assessFromNode, createKey, newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, newAgent, unexpected, withKey } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("console: pages B across organizations", () => {
  const browser = useBrowser("console-tenancy-b");
  // Two organizations for the whole file, each made by its owner's first sign-in (the test that
  // signs in first expects that sign-in's refusal); every test gives the first its own data,
  // named so the second's pages can be searched for it.
  const userA = newUser("tenant-a");
  const userB = newUser("tenant-b");
  const signedIn = new Set<string>();
  /** FIRST_SIGN_IN when this is the user's first tab, which made their organization. */
  const firstSignIn = (user: string) => (signedIn.has(user) ? [] : [FIRST_SIGN_IN]);
  const open = async (user: string) => {
    const expected = firstSignIn(user);
    const tab = await openSignedIn(browser, user);
    signedIn.add(user);
    return { tab, expected };
  };

  it("never shows one organization's policies, agents, endpoints or keys to another", async () => {
    // The first organization's data, each named with a mark the second must never see.
    const { tab: first, expected: firstExpected } = await open(userA);
    const mark = `tenant-a-${crypto.randomUUID().slice(0, 8)}`;
    const { body: policy } = await asSession(first, "POST", "/v1/policies", {
      name: `${mark} policy`,
      rules: {},
    });
    const agent = await newAgent(first, `${mark} agent`, "A");
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
    expect(unexpected(await first.problems(), firstExpected)).toEqual([]);

    const { tab: second, expected } = await open(userB);
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
        ...expected,
        { status: 404, method: "GET", path: `/v1/policies/${policy.id}` },
        { status: 404, method: "GET", path: `/v1/agents/${agent.id}` },
      ]),
    ).toEqual([]);
  });
  it("never shows one organization's audit trail, billing, deliveries, labels or agent keys to another", async () => {
    // The first organization: a live assessment (billed, in its ledger) with a label, a
    // verified audit trail (which signs a checkpoint), an endpoint and an agent.
    const { tab: first } = await open(userA);
    const key = await createKey(first);
    const { assessmentId } = await assessFromNode(key);
    const label = await withKey(key, "POST", `/v1/assessments/${assessmentId}/feedback`, {
      label: "fraud",
    });
    expect(label.status, JSON.stringify(label.body)).toBe(201);
    const { body: verified } = await asSession(first, "GET", "/v1/audit/verify");
    expect(verified.ok).toBe(true);
    const { body: checkpoints } = await asSession(first, "GET", "/v1/audit/checkpoints");
    const roots: string[] = checkpoints.data.map((c: { root_hash: string }) => c.root_hash);
    expect(roots.length).toBeGreaterThan(0);
    const { body: endpoint } = await asSession(first, "POST", "/v1/webhook-endpoints", {
      url: "https://example.com/tenant-a-deliveries",
    });
    const agent = await newAgent(first, "tenant-a agent", "A");
    await first.page.goto(`${origin}/console/#/billing`);
    await first.page.getByTestId("usage-assessments").getByText("1", { exact: true }).waitFor();

    const { tab: second, expected } = await open(userB);
    const { page } = second;
    // Audit: the second's own ledger, none of the first's entries or checkpoints.
    await page.goto(`${origin}/console/#/audit`);
    await page.getByRole("button", { name: "Verify now" }).click();
    await page.getByText("The audit trail verifies", { exact: true }).waitFor();
    await page.waitForLoadState("networkidle");
    const audit = await page.content();
    expect(audit).not.toContain(verified.head.hash);
    for (const root of roots) expect(audit).not.toContain(root);
    expect(audit).not.toContain(assessmentId);
    await second.screenshot("audit-own-ledger");
    // Billing: the first's billed assessment is not the second's.
    await page.goto(`${origin}/console/#/billing`);
    await page.getByTestId("usage-assessments").getByText("0", { exact: true }).waitFor();
    // Direct links to the first's assessment (its labels) and agent (its keys, card status).
    await page.goto(`${origin}/console/#/assessments/${assessmentId}`);
    await page.getByRole("alert").getByText("not_found").waitFor();
    expect(await page.content()).not.toContain("fraud");
    await page.goto(`${origin}/console/#/agents/${agent.id}`);
    await page.getByRole("alert").getByText("not_found").waitFor();
    expect(await page.content()).not.toContain("tenant-a agent");
    // The calls those pages make, each for the first's ids: not found.
    const refused = [
      `/v1/webhook-endpoints/${endpoint.id}/deliveries`,
      `/v1/assessments/${assessmentId}/feedback`,
      `/v1/agents/${agent.id}/keys`,
      `/v1/agents/${agent.id}/card-status`,
    ];
    for (const path of refused) {
      const answer = await asSession(second, "GET", path, undefined, 404);
      expect(answer.body.error, path).toBe("not_found");
    }
    const write = await asSession(
      second,
      "POST",
      `/v1/assessments/${assessmentId}/feedback`,
      { label: "legitimate" },
      404,
    );
    expect(write.body.error).toBe("not_found");

    expect(
      unexpected(await second.problems(), [
        ...expected,
        { status: 404, method: "GET", path: `/v1/assessments/${assessmentId}` },
        { status: 404, method: "GET", path: `/v1/agents/${agent.id}` },
        ...refused.map((path) => ({ status: 404, method: "GET", path })),
        { status: 404, method: "POST", path: `/v1/assessments/${assessmentId}/feedback` },
      ]),
    ).toEqual([]);
  });

  it("does not let the org id the last user of the browser picked stop the next one", async () => {
    const { tab: first } = await open(userA);
    const { body: me } = await asSession(first, "GET", "/v1/me");
    const { tab: second, expected } = await open(userB);
    const { page } = second;
    const { body: own } = await asSession(second, "GET", "/v1/me");
    // Another user's organization, then a value that is no uuid at all.
    for (const [stale, status] of [
      [me.orgId, 403],
      ["not-an-org", 400],
    ] as const) {
      await page.evaluate(
        `localStorage.setItem("agent-risk.console.org", ${JSON.stringify(stale)})`,
      );
      await page.goto(`${origin}/console/#/`);
      await page.reload();
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      await page.getByRole("navigation", { name: "Console" }).waitFor();
      expect(await page.getByText("The console cannot start").count()).toBe(0);
      expect(await page.evaluate(`localStorage.getItem("agent-risk.console.org")`)).toBeNull();
      // The server's default organization: the second user's own.
      expect((await asSession(second, "GET", "/v1/me")).body.orgId, String(status)).toBe(own.orgId);
    }
    await second.screenshot("stale-org-forgotten");
    // The user's own choice is kept while signed in, and forgotten at sign-out.
    await page.evaluate(
      `localStorage.setItem("agent-risk.console.org", ${JSON.stringify(own.orgId)})`,
    );
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(await page.evaluate(`localStorage.getItem("agent-risk.console.org")`)).toBe(own.orgId);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    expect(await page.evaluate(`localStorage.getItem("agent-risk.console.org")`)).toBeNull();
    expect(
      unexpected(await second.problems(), [
        ...expected,
        { status: 403, method: "GET", path: "/v1/me" },
        { status: 400, method: "GET", path: "/v1/me" },
      ]),
    ).toEqual([]);
  });
});
