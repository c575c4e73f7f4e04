/**
 * The transaction in front of the person who decides (issue 40, section 1), in Chromium: the
 * assessments list shows the amount in its currency, the payee, the agent and its principal by
 * name; the search box finds the row by the payee's name; the assessment page shows the same
 * transaction. Both pages pass axe-core.
 */

import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { expectAccessible } from "./support/axe";
import { useBrowser } from "./support/browser";
import { createKey, newUser, openSignedIn, shortId } from "./support/console-api";
import { newAgent, withKey } from "./support/console-b";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("the transaction on the assessments pages", () => {
  const browser = useBrowser("console-search");
  const owner = newUser("search");
  const made = { books: "", yen: "", agent: "" };

  beforeAll(async () => {
    const tab = await openSignedIn(browser, owner);
    const key = await createKey(tab);
    made.agent = (await newAgent(tab, "Atlas Buyer", "Marie Curie")).id as string;
    const pay = async (payee: object, amount: number, currency: string) => {
      const answer = await withKey(key, "POST", "/v1/assess", {
        agent_id: made.agent,
        mandate: {
          vct: "mandate.payment.1",
          transaction_id: `tx-${randomUUID()}`,
          payee,
          payment_amount: { amount, currency },
          payment_instrument: { id: "stub", type: "card" },
        },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.assessmentId as string;
    };
    made.books = await pay({ id: "acct_harbor", name: "Harbor Books" }, 129900, "USD");
    made.yen = await pay({ id: "acct_sato", name: "Ryokan Sato" }, 48000, "JPY");
  });

  it("lists amounts in their currency and names, and finds a row by the payee's name", async () => {
    const tab = await openSignedIn(browser, owner);
    await tab.page.goto(`${origin}/console/#/assessments`);
    const row = (id: string) =>
      tab.page.getByRole("row").filter({
        has: tab.page.getByRole("link", { name: shortId(id), exact: true }),
      });
    const books = row(made.books);
    await books.waitFor();
    await books.getByText("$1,299.00", { exact: true }).waitFor();
    await books.getByText("Harbor Books", { exact: true }).waitFor();
    await books.getByText("acct_harbor", { exact: true }).waitFor();
    await books.getByText("Marie Curie", { exact: true }).waitFor();
    const agentLink = books.getByRole("link", { name: "Atlas Buyer", exact: true });
    expect(await agentLink.getAttribute("href")).toBe(`#/agents/${made.agent}`);
    // JPY has no minor unit: 48000 is ¥48,000.
    await row(made.yen).getByText("¥48,000", { exact: true }).waitFor();
    await expectAccessible(tab.page, "assessments list");

    await tab.page.getByLabel("Search").fill("harbor b");
    await tab.page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => tab.page.getByRole("row").count()).toBe(2);
    await books.waitFor();
    await tab.screenshot("assessments-search");

    // An amount range needs its currency, and is typed in major units.
    await tab.page.getByLabel("Search").fill("");
    await tab.page.getByLabel("Amount from").fill("1000");
    await tab.page.getByText("Choose the currency first").waitFor();
    await tab.page.getByLabel("Currency").fill("jpy");
    await tab.page.getByRole("button", { name: "Apply filters" }).click();
    await row(made.yen).waitFor();
    await expect.poll(() => tab.page.getByRole("row").count()).toBe(2);
    expect(await tab.problems()).toEqual([]);
  });

  it("shows the transaction on the assessment page, ids a click away", async () => {
    const tab = await openSignedIn(browser, owner);
    await tab.page.goto(`${origin}/console/#/assessments/${made.books}`);
    const panel = tab.page.getByRole("region", { name: "Transaction" });
    await panel.getByText("$1,299.00", { exact: true }).waitFor();
    await panel.getByText("Harbor Books", { exact: true }).waitFor();
    await panel.getByText("Marie Curie", { exact: true }).waitFor();
    await panel.getByRole("link", { name: "Atlas Buyer", exact: true }).waitFor();
    await panel.getByRole("button", { name: "Copy payee id" }).waitFor();
    await panel.getByText("by the risk score", { exact: false }).waitFor();
    await tab.screenshot("assessment-transaction");
    await expectAccessible(tab.page, "assessment page");
    expect(await tab.problems()).toEqual([]);
  });
});
