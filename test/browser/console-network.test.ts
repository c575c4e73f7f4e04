import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { assessFromNode, createKey, fromPage, newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");
const sqlEndpoint = inject("browserSqlEndpoint");

/** Makes `user` (signed in once already) a member of `orgId`, as an invitation would. */
async function addMember(orgId: string, user: string): Promise<void> {
  const response = await fetch(sqlEndpoint ?? "", {
    method: "POST",
    headers: {
      // The endpoint's own role, as support/seed-load.ts writes: no invitation API exists yet.
      "Neon-Connection-String": "postgresql://owner:local@localhost/agent_risk",
      "Neon-Raw-Text-Output": "true",
      "Neon-Array-Mode": "true",
      "content-type": "application/json",
    },
    body: JSON.stringify({
      query: `insert into memberships (org_id, user_id, role)
        select $1::uuid, id, 'member' from users where idp_subject = $2`,
      params: [orgId, `local|${user}`],
    }),
  });
  const body = (await response.json()) as { rowCount?: number };
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.rowCount).toBe(1);
}

describe.skipIf(!origin)("console: network signals", () => {
  const browser = useBrowser("console-network");

  it("joins and leaves the network after a confirmation; a member sees the settings read-only", async () => {
    const tab = await openSignedIn(browser, newUser("network"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/network`);
    await page.getByRole("heading", { level: 1, name: "Network signals" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "Settings (live mode)" }).waitFor();
    await page.getByRole("heading", { name: "What is shared, and what never is" }).waitFor();
    const key = await createKey(tab);
    const before = await assessFromNode(key);
    const contribute = page.getByRole("switch", { name: /^Contribute/ });
    const consume = page.getByRole("switch", { name: /^Read the network/ });
    expect(await contribute.isChecked()).toBe(false);
    expect(await consume.isDisabled()).toBe(true);

    // Nothing changes before the confirmation; Cancel puts the switch back.
    await contribute.check();
    await page.getByText("will count in other organizations' network counts").waitFor();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect(await contribute.isChecked()).toBe(false);
    expect((await asSession(tab, "GET", "/v1/network-settings")).body.contribute).toBe(false);

    await contribute.check();
    await page.getByRole("button", { name: "Start contributing" }).click();
    await page.getByText("This organization now contributes in live mode.").waitFor();
    await consume.check();
    await page.getByRole("button", { name: "Start reading" }).click();
    await page
      .getByText("This organization now contributes in live mode and reads the network's counts.")
      .waitFor();
    const joined = (await asSession(tab, "GET", "/v1/network-settings")).body;
    expect(joined).toMatchObject({ livemode: true, contribute: true, consume: true });
    // How far the queue has contributed: under way, or done (it reads no row under 10 s old).
    expect(await page.locator("#contributed-through").textContent()).toMatch(
      /^(Joined: the first contribution is under way\.|In the network: everything recorded before .+\.)$/,
    );
    await tab.screenshot("joined");

    // An assessment made while reading shows the network's counts (no other org has sent
    // anything: every count reads 0); one made before says the org was not reading.
    const after = await assessFromNode(key);
    await page.goto(`${origin}/console/#/assessments/${after.assessmentId}`);
    const panel = page.getByRole("region", { name: "Network" });
    await panel.getByRole("caption").filter({ hasText: "over the 30 days" }).waitFor();
    const rows = await panel.getByRole("row").allInnerTexts();
    expect(rows.map((row) => row.split("\t").map((cell) => cell.trim()))).toEqual([
      ["Identifier", "Confirmed fraud", "Confirmed legitimate"],
      ["Payee", "0", "0"],
      ["Agent key", "0", "0"],
      ["Credential issuer key", "0", "0"],
      ["Payment instrument", "0", "0"],
    ]);
    await panel.getByText("at least 3 other organizations").waitFor();
    await tab.screenshot("assessment-network");
    await page.goto(`${origin}/console/#/assessments/${before.assessmentId}`);
    await page
      .getByRole("region", { name: "Network" })
      .getByText("did not read the network's counts in this mode")
      .waitFor();
    await page.goto(`${origin}/console/#/network`);
    await page.getByRole("heading", { level: 2, name: "Settings (live mode)" }).waitFor();

    // Test mode is another membership: still off.
    const test = await fromPage(tab, "/v1/network-settings", { mode: "test" });
    expect(test.body).toMatchObject({ livemode: false, contribute: false, consume: false });

    // A member of the org reads the settings and cannot change them.
    const me = (await asSession(tab, "GET", "/v1/me")).body;
    const reader = newUser("network-member");
    const other = await openSignedIn(browser, reader);
    await addMember(me.orgId, reader);
    await other.page.evaluate(
      (org) => (globalThis as any).localStorage.setItem("agent-risk.console.org", org),
      me.orgId,
    );
    await other.page.goto(`${origin}/console/#/network`);
    await other.page.reload();
    await other.page.getByText("Only an owner or an admin of this organization").waitFor();
    const theirs = other.page.getByRole("switch", { name: /^Contribute/ });
    expect(await theirs.isChecked()).toBe(true);
    expect(await theirs.isDisabled()).toBe(true);
    await other.screenshot("member");

    // Leaving deletes what the org contributed: said before, done after the confirmation.
    await contribute.uncheck();
    await page.getByText("is deleted at once").waitFor();
    await page.getByRole("button", { name: "Leave the network" }).click();
    await page.getByText("This organization left the network in live mode").waitFor();
    expect((await asSession(tab, "GET", "/v1/network-settings")).body).toMatchObject({
      contribute: false,
      consume: false,
    });
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
    expect(unexpected(await other.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
