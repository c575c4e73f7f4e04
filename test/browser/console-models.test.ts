/**
 * The Retro study and Models pages (console/src/pages/retro-study.tsx, models.tsx, model.tsx)
 * as an analyst uses them, in test mode: a history file uploaded through the page's file input
 * (one bad row reported by its row number, the rest stored), a model trained on it by the
 * Queue consumer of `npm run dev`, its page with the curves and their numbers, and its
 * activation after a confirmation that says what changes.
 */
import { describe, expect, inject, it } from "vitest";
import { FEATURE_NAMES } from "../../src/model/features";
import { type HistoryRecord, historyRecords } from "../support/payment-history";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { asSession, FIRST_SIGN_IN, unexpected } from "./support/console-b";

const origin = inject("browserOrigin");
const DAY_MS = 86_400_000;

describe.skipIf(!origin)("console: retro study and models", () => {
  const browser = useBrowser("console-models");

  it("shows a training that fails with the reason the API gives", async () => {
    const tab = await openSignedIn(browser, newUser("models-fail"));
    const { page } = tab;
    await page.goto(`${origin}/console/#/models`);
    await page.getByRole("heading", { level: 1, name: "Models" }).waitFor();
    await page.getByText("No active model: live payments get the hand-weighted score.").waitFor();
    // No history at all: the consumer ends the model failed, with the counts.
    await page.getByRole("button", { name: "Train a model" }).click();
    await page.getByRole("heading", { level: 1, name: /^Model / }).waitFor();
    await page
      .getByText(/^Training failed: too few labelled payments to train: 0 payments with 0 frauds/)
      .waitFor({ timeout: 60_000 });
    expect(await page.getByRole("button", { name: "Activate" }).count()).toBe(0);
    await page.goto(`${origin}/console/#/models`);
    await page.getByRole("cell", { name: "failed" }).waitFor();
    expect(unexpected(await tab.problems(), [FIRST_SIGN_IN])).toEqual([]);
  });

  it("uploads a history, reports its bad row, trains, shows the model and activates it", async () => {
    const tab = await openSignedIn(browser, newUser("models"));
    const { page } = tab;
    await page.getByRole("switch", { name: "Test mode" }).check();
    await page.getByText("Test mode: you are viewing test data.").waitFor();

    // The agents the history names (agents are shared by both modes).
    const { body: principal } = await asSession(tab, "POST", "/v1/principals", {
      type: "individual",
      name: "Retro",
    });
    const agents: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { body } = await asSession(tab, "POST", "/v1/agents", {
        principal_id: principal.id,
        name: `Retro agent ${i}`,
      });
      agents.push(body.id);
    }
    // 30 days of 60 payments a day ending two days ago: every label, known two days after its
    // payment, is in the past.
    const records = historyRecords(agents, {
      asOf: Date.now() - 2 * DAY_MS - 60_000,
      seed: 7,
      label: "chargeback",
    });
    // Row 7 of the file is bad: a currency of two letters.
    records[6] = { ...(records[6] as HistoryRecord), amount: { amount: 100, currency: "US" } };
    const ndjson = `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

    await page.goto(`${origin}/console/#/retro-study`);
    await page.getByRole("heading", { level: 1, name: "Retro study" }).waitFor();
    await page.getByLabel("History file (CSV or NDJSON)").setInputFiles({
      name: "history.ndjson",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from(ndjson),
    });
    await page.getByText("history.ndjson: 1,800 records (NDJSON); sent 1,000 a call.").waitFor();
    await page.getByRole("button", { name: "Upload 1,800 records" }).click();
    await page.getByText("Upload finished: 1,800 of 1,800 records sent").waitFor();
    const progress = page.locator("#upload-progress");
    expect(await progress.getAttribute("value")).toBe("1800");
    // The first call of 1,000 was refused for row 7 alone; its 999 others were sent again.
    await page
      .getByText(
        "1,799 stored, 0 already stored unchanged, 1 row rejected, 0 rows in conflict with a stored record (3 calls).",
      )
      .waitFor();
    const bad = page.getByRole("table", { name: "Rows not stored" }).getByRole("row");
    expect(await bad.count()).toBe(2);
    expect(await bad.nth(1).innerText()).toMatch(
      /^Row 7\s+txn-7-6\s+amount\.currency\s+\S.*3 letters/,
    );
    // The imports: the two calls that stored.
    const imports = page.getByRole("table", { name: /History imports/ }).getByRole("row");
    await expect.poll(() => imports.count()).toBe(3);
    await tab.screenshot("uploaded");
    await expectAccessible(page, "retro study after an upload");

    // A CSV dropped on the page: row 2 is stored already (unchanged), row 3 reuses a stored id
    // with another amount (409, reported as a conflict), row 4 is new.
    const csvRow = (r: HistoryRecord) =>
      [
        r.id,
        r.occurred_at,
        r.agent_id,
        r.payee.id,
        r.amount.amount,
        r.amount.currency,
        r.label?.label ?? "",
        r.label?.labeled_at ?? "",
      ].join(",");
    const csv = [
      "id,occurred_at,agent_id,payee_id,amount,currency,label,labeled_at",
      csvRow(records[0] as HistoryRecord),
      csvRow({ ...(records[1] as HistoryRecord), amount: { amount: 1, currency: "USD" } }),
      csvRow({ ...(records[2] as HistoryRecord), id: "txn-new" }),
    ].join("\n");
    const dropped = await page.evaluateHandle(`(() => {
      const files = new DataTransfer();
      files.items.add(new File([${JSON.stringify(csv)}], "more.csv", { type: "text/csv" }));
      return files;
    })()`);
    await page.locator(".drop-zone").dispatchEvent("drop", { dataTransfer: dropped });
    await page.getByText("more.csv: 3 records (CSV); sent 1,000 a call.").waitFor();
    await page.getByRole("button", { name: "Upload 3 records" }).click();
    await page
      .getByText(
        "1 stored, 1 already stored unchanged, 0 rows rejected, 1 row in conflict with a stored record (2 calls).",
      )
      .waitFor();
    const conflict = page.getByRole("table", { name: "Rows not stored" }).getByRole("row");
    expect(await conflict.count()).toBe(2);
    expect(await conflict.nth(1).innerText()).toMatch(/^Row 3\s+txn-7-1\s+—\s+conflict: /);

    // Train on it: a 3-day label delay and 14 days of mature payments.
    await page.getByLabel("Label delay (days)").fill("3");
    await page.getByLabel("Training window (days)").fill("14");
    await page.getByRole("button", { name: "Train a model" }).click();
    await page.getByText(/^Training: requested, in the queue or training/).waitFor();
    const open = page.getByRole("link", { name: "Open the model" });
    await open.waitFor({ timeout: 60_000 });
    expect(await page.locator(".training-progress progress").getAttribute("value")).toBe("2");
    // What would have been caught, from the model's metrics: the table at each threshold.
    const caught = page.getByRole("table", { name: /At each threshold/ });
    await caught.waitFor();
    expect(await caught.getByRole("row").count()).toBeGreaterThan(10);
    expect(await caught.innerText()).toMatch(/\$[\d,]+\.\d\d/);
    await page
      .getByRole("img", { name: /^What the model would have caught/ })
      .scrollIntoViewIfNeeded();
    await tab.screenshot("caught");

    await open.click();
    await page.getByRole("heading", { level: 1, name: /^Model / }).waitFor();
    await page.getByRole("heading", { name: "ROC curve" }).waitFor();
    await page
      .getByRole("img", { name: /^ROC curve on the held-out slice, AUC 0\.\d{4}$/ })
      .waitFor();
    expect(await page.locator(".chart canvas").count()).toBeGreaterThanOrEqual(4);
    const thresholds = page.getByRole("table", { name: "The thresholds on the held-out slice" });
    expect(await thresholds.getByRole("row", { name: /^Review/ }).innerText()).toMatch(
      /^Review\s+0\.\d{4}\s+[\d.]+ %\s+[\d.]+ %\s+[\d.]+ %$/,
    );
    const features = page.getByRole("table", { name: /Feature importances/ }).getByRole("row");
    // A header row and one row per feature the model reads.
    expect(await features.count()).toBe(FEATURE_NAMES.length + 1);
    expect(await page.locator("dl.tiles").innerText()).toMatch(/AUC ROC\s+0\.\d{4}/);
    await page
      .getByRole("heading", { name: "Precision and recall at the thresholds" })
      .scrollIntoViewIfNeeded();
    await tab.screenshot("model-pr");
    await page.getByRole("heading", { name: "ROC curve" }).scrollIntoViewIfNeeded();
    await tab.screenshot("model-roc");
    await page.getByRole("heading", { name: "Feature importances" }).scrollIntoViewIfNeeded();
    await tab.screenshot("model-importances");
    await expectAccessible(page, "model page");

    // Activate, after a confirmation that says what changes.
    await page.getByRole("button", { name: "Activate" }).click();
    await page
      .getByText(
        /^Test assessments will be scored by model \S+ instead of the hand-weighted score\./,
      )
      .waitFor();
    await page.getByRole("button", { name: "Confirm activation" }).click();
    await page.getByText(/^Activated: model v\d+ scores test payments\.$/).waitFor();
    await page.getByRole("heading", { level: 1, name: /^Model v\d+$/ }).waitFor();
    await tab.screenshot("activated");

    const first = (await page.getByRole("heading", { level: 1 }).innerText()).replace(/^M/, "m");

    // A second model, trained from the Models page, replaces it; then a rollback.
    await page.goto(`${origin}/console/#/models`);
    await page.getByRole("heading", { level: 1, name: "Models" }).waitFor();
    await page.getByText(`${first} scores test payments`).waitFor();
    await page.getByRole("cell", { name: "active" }).waitFor();
    await expectAccessible(page, "models list");
    await page.getByLabel("Label delay (days)").fill("3");
    await page.getByLabel("Training window (days)").fill("14");
    await page.getByRole("button", { name: "Train a model" }).click();
    await page.getByRole("heading", { level: 1, name: /^Model / }).waitFor();
    await page.getByRole("button", { name: "Activate" }).waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Activate" }).click();
    await page
      .getByText(
        new RegExp(
          `^Test assessments will be scored by model \\S+ instead of ${first}, which is retired\\.`,
        ),
      )
      .waitFor();
    await page.getByRole("button", { name: "Confirm activation" }).click();
    await page.getByText(/^Activated: model v\d+ scores test payments\.$/).waitFor();
    const heading = page.getByRole("heading", { level: 1, name: /^Model v\d+$/ });
    await heading.waitFor();
    const second = (await heading.innerText()).replace(/^M/, "m");
    expect(second).not.toBe(first);

    await page.goto(`${origin}/console/#/models`);
    await page.getByRole("button", { name: `Roll back to ${first}` }).click();
    await page
      .getByText(
        `Test assessments will be scored by ${first} again instead of ${second}, under a new version number; ${second} is retired.`,
      )
      .waitFor();
    await page.getByRole("button", { name: "Confirm rollback" }).click();
    await page.getByText(/^Rolled back: model v\d+ is active\.$/).waitFor();
    // The model it replaced is now the one to roll back to.
    await page.getByRole("button", { name: `Roll back to ${second}` }).waitFor();
    await tab.screenshot("rolled-back");

    // The replaced model shadows the active one, after a confirmation.
    await page.getByRole("link", { name: second, exact: true }).first().click();
    await page.getByRole("button", { name: "Shadow" }).click();
    await page
      .getByText(
        `${second} will be scored beside every test assessment, its verdict recorded and never acted on.`,
      )
      .waitFor();
    await page.getByRole("button", { name: "Confirm shadow" }).click();
    await page.getByText(`Shadowing: ${second} is scored beside every test payment.`).waitFor();

    expect(
      unexpected(await tab.problems(), [
        FIRST_SIGN_IN,
        { status: 400, method: "POST", path: "/v1/history/transactions" },
        { status: 409, method: "POST", path: "/v1/history/transactions" },
      ]),
    ).toEqual([]);
  });
});
