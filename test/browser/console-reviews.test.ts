/**
 * The review queue in Chromium (console/README.md, "The review queue"): a review completed
 * with the keyboard alone (j, a, Enter), the decision landed through the API, the next open
 * review selected with the focus in its panel, and the evidence in words beside it.
 */
import { describe, expect, inject, it } from "vitest";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import {
  assessFromNode,
  createKey,
  fromPage,
  newUser,
  openSignedIn,
  shortId,
} from "./support/console-api";
import { FIRST_SIGN_IN, horizontalOverflow, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");
const HOUR = 3_600_000;

describe.skipIf(!origin)("the review queue in Chromium", () => {
  const browser = useBrowser("console-reviews");

  it("completes a review with j, a and Enter, then shows the next one with its evidence", async () => {
    const tab = await openSignedIn(browser, newUser("reviewer"));
    const key = await createKey(tab);
    // The payee of the reviewed payments (the fixture's merchant_1) has history in the org: two
    // payments of a registered agent, one labeled fraud an hour ago.
    const principal = await fromPage(tab, "/v1/principals", {
      method: "POST",
      body: { name: "Ada Lovelace", email: "ada@example.com" },
    });
    expect(principal.status).toBe(201);
    const agent = await fromPage(tab, "/v1/agents", {
      method: "POST",
      body: { principal_id: principal.body.id, name: "Shopping agent" },
    });
    expect(agent.status).toBe(201);
    const at = (hours: number) => new Date(Date.now() - hours * HOUR).toISOString();
    const record = (id: string, hours: number) => ({
      id,
      occurred_at: at(hours),
      agent_id: agent.body.id,
      payee: { id: "merchant_1", name: "Demo Merchant" },
      amount: { amount: 2_500, currency: "USD" },
    });
    const imported = await fromPage(tab, "/v1/history/transactions", {
      method: "POST",
      body: {
        records: [
          { ...record("h1", 5), label: { label: "fraud", labeled_at: at(1) } },
          record("h2", 4),
        ],
      },
    });
    expect(imported.status).toBe(201);
    // Three open reviews (no agent named: each is a review), oldest first in the queue.
    const made = [await assessFromNode(key), await assessFromNode(key), await assessFromNode(key)];
    expect(made.map((m) => m.decision)).toEqual(["review", "review", "review"]);
    const [first, second, third] = made.map((m) => m.assessmentId) as [string, string, string];

    await tab.page.goto(`${origin}/console/#/reviews`);
    const panel = tab.page.locator(".review-panel");
    await panel.getByRole("heading", { name: `Review of assessment ${shortId(first)}` }).waitFor();
    await tab.page.getByText(/SLA 1 d: an open review not resolved by then is denied\./).waitFor();

    // Keyboard only: j to the second, a to arm the approval, Enter to confirm.
    await tab.page.keyboard.press("j");
    await panel.getByRole("heading", { name: `Review of assessment ${shortId(second)}` }).waitFor();
    await tab.page.keyboard.press("a");
    await tab.page.getByRole("button", { name: "Confirm approval" }).waitFor();
    await tab.page.keyboard.press("Enter");
    await tab.page
      .getByRole("status")
      .getByText(`Review of assessment ${shortId(second)} resolved: approve.`)
      .waitFor();

    const resolved = await fromPage(tab, "/v1/reviews?status=resolved&limit=10");
    expect(resolved.status).toBe(200);
    expect(resolved.body.data).toEqual([
      expect.objectContaining({
        assessment_id: second,
        status: "resolved",
        decision: "approve",
        resolved_by: expect.objectContaining({ type: "user" }),
      }),
    ]);

    // The next open review is selected, with the focus in its panel.
    await panel.getByRole("heading", { name: `Review of assessment ${shortId(third)}` }).waitFor();
    await tab.page
      .getByRole("button", { name: `Resolve review of assessment ${shortId(second)}` })
      .waitFor({ state: "detached" });
    expect(
      await panel.evaluate((el) => el.contains((globalThis as any).document.activeElement)),
    ).toBe(true);
    expect(
      await tab.page
        .locator("tr.selected")
        .getByRole("button", { name: `Resolve review of assessment ${shortId(third)}` })
        .count(),
    ).toBe(1);

    // The evidence: a signal in words and the payee's labels across the org.
    await panel
      .getByRole("listitem")
      .filter({ hasText: "high The agent could not be identified." })
      .waitFor();
    await panel.getByText("1 fraud; latest: fraud").waitFor();
    await panel.getByText("No agent was identified: no history.").waitFor();

    // d then Escape resolves nothing; n goes to the note, where j is only a letter.
    await tab.page.keyboard.press("d");
    await tab.page.getByRole("button", { name: "Confirm denial" }).waitFor();
    await tab.page.keyboard.press("Escape");
    await tab.page.getByRole("status").getByText("Cancelled: nothing was resolved.").waitFor();
    await tab.page.keyboard.press("n");
    await tab.page.keyboard.type("jk");
    expect(await panel.getByLabel("Note", { exact: true }).inputValue()).toBe("jk");
    await panel.getByRole("heading", { name: `Review of assessment ${shortId(third)}` }).waitFor();
    const open = await fromPage(tab, "/v1/reviews?status=open&limit=10");
    expect(open.body.data.map((r: { assessment_id: string }) => r.assessment_id)).toEqual([
      first,
      third,
    ]);

    await tab.screenshot("keyboard-resolved-next");
    await expectAccessible(tab.page, "reviews queue");

    // On a phone the panel follows the queue, and nothing reaches past the screen.
    await tab.page.setViewportSize({ width: 390, height: 844 });
    const { overflow, wide } = await horizontalOverflow(tab);
    expect(overflow, wide.join(", ")).toBe(0);
    await tab.screenshot("phone");
    // The first sign-in's 403 (the org is made then) and nothing else.
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
