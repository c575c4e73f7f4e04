/**
 * The Overview and the agent page's per-mode counts in Chromium (console/README.md, issue 40
 * §3 and §4): test-mode assessments of one agent made through the API from Node, one labelled
 * fraud; the overview's legends read their totals without hovering, the score histogram and
 * the top signals have their numbers beside them, fraud caught and missed show amounts; the
 * agent page counts the test-mode assessments and says so. Both pages pass axe.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import { createKey, fromPage, newUser, openSignedIn } from "./support/console-api";
import { FIRST_SIGN_IN, newAgent, unexpected, withKey } from "./support/console-b";
import { REPO } from "./support/service";

const origin = inject("browserOrigin");

const PAYMENT = JSON.parse(
  readFileSync(join(REPO, "test/fixtures/ap2/payment_mandate.json"), "utf8"),
) as Record<string, unknown>;

describe.skipIf(!origin)("console: overview and the agent's per-mode counts", () => {
  const browser = useBrowser("console-overview");

  it("shows totals without hovering, the histogram, top signals, fraud caught vs missed, and the agent's test-mode counts", async () => {
    const tab = await openSignedIn(browser, newUser("overview"));
    const { page } = tab;
    const agent = await newAgent(tab, "Travel agent");
    const testKey = await createKey(tab, "test");
    // Three test-mode payments naming the agent (no key proves it: not trust evidence).
    const made: { assessmentId: string; decision: "approve" | "review" | "deny" }[] = [];
    for (let i = 0; i < 3; i++) {
      const { status, body } = await withKey(testKey, "POST", "/v1/assess", {
        agent_id: agent.id,
        mandate: { ...PAYMENT, transaction_id: `tx-${randomUUID()}` },
      });
      expect(status, JSON.stringify(body)).toBe(200);
      made.push(body);
    }
    const first = made[0]!;
    const labelled = await withKey(
      testKey,
      "POST",
      `/v1/assessments/${first.assessmentId}/feedback`,
      {
        label: "fraud",
      },
    );
    expect(labelled.status, JSON.stringify(labelled.body)).toBe(201);
    const count = (d: string) => made.filter((m) => m.decision === d).length;

    await page.goto(`${origin}/console/#/`);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByRole("switch", { name: "Test mode" }).check();
    await page.getByText("Test mode: you are viewing test data.").waitFor();
    const volume = page.getByRole("region", { name: /^Assessments by decision/ });
    const legend = volume.getByTestId("decision-legend");
    await legend.getByText("total 3").waitFor();
    // Read as it is, the pointer nowhere near the chart: totals, never uPlot's "--".
    const legendText = await legend.innerText();
    for (const decision of ["approve", "review", "deny"]) {
      expect(legendText).toContain(`${decision} ${count(decision)}`);
    }
    expect(legendText).not.toContain("--");
    await volume.locator(".chart canvas").waitFor();

    const { body: breakdown } = await fromPage(tab, "/v1/assessments/breakdown", { mode: "test" });
    expect(breakdown.decisions.total).toBe(3);
    const scores = page.getByRole("region", { name: /^Risk score distribution/ });
    await scores.locator(".chart canvas").waitFor();
    const table = scores.getByTestId("score-histogram-table");
    const totalRow = table.getByRole("row", { name: /^total/ });
    expect(await totalRow.innerText()).toBe(
      ["total", ...breakdown.score_histogram.map((b: { total: number }) => String(b.total))].join(
        "\t",
      ),
    );

    const codes = page.getByRole("region", { name: /^Top signals/ });
    const signals = codes.getByRole("table", { name: "Top signals" });
    expect(breakdown.top_signals.length).toBeGreaterThan(0);
    for (const signal of breakdown.top_signals as { code: string; count: number }[]) {
      const row = signals.getByRole("row").filter({ hasText: signal.code });
      expect(await row.getByRole("cell").nth(1).innerText()).toBe(String(signal.count));
    }

    // The labelled payment: $199.00 caught when it was flagged, missed when approved.
    const fraud = page.getByTestId("fraud-figures");
    const caught = first.decision === "approve" ? "missed" : "caught";
    await fraud.getByText(`Fraud ${caught}`, { exact: false }).waitFor();
    const figure = fraud
      .locator("div")
      .filter({ has: page.getByText(new RegExp(`^Fraud ${caught}`)) });
    expect(await figure.locator("dd").innerText()).toBe("$199.00 (1)");
    expect(await fraud.innerText()).toContain("33.3 %");

    const agents = page.getByRole("region", { name: /^Top agents/ });
    await agents
      .getByRole("table", { name: "Agents by volume" })
      .getByRole("link", { name: "Travel agent" })
      .waitFor();
    await tab.screenshot("overview-test-mode");
    await scores.scrollIntoViewIfNeeded();
    await tab.screenshot("overview-scores-and-fraud");
    await agents.scrollIntoViewIfNeeded();
    await tab.screenshot("overview-lists");
    await expectAccessible(page, "overview");

    // The agent page counts the same three, says which mode, and keeps trust evidence apart.
    await agents
      .getByRole("table", { name: "Agents by volume" })
      .getByRole("link", { name: "Travel agent" })
      .click();
    await page.getByRole("heading", { level: 1, name: "Travel agent" }).waitFor();
    await page.getByText("Assessments, test mode", { exact: true }).waitFor();
    const counts = page.getByTestId("agent-mode-counts");
    await counts.getByText(/ deny /).waitFor();
    expect(await counts.innerText()).toBe(
      `${count("approve")} approve / ${count("review")} review / ${count("deny")} deny ` +
        "(in test mode, the last 12 months)",
    );
    // Trust evidence counts live assessments that proved the agent's key: none here.
    await page.getByText("0 approvals / 0 reviews / 0 denials", { exact: false }).waitFor();
    await tab.screenshot("agent-test-mode-counts");
    await expectAccessible(page, "agent");
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });
});
