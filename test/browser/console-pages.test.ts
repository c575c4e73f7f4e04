/**
 * The console's pages A in Chromium against `npm run dev` (console/README.md): first sign-in,
 * an assessment run through the API found in the list and verified in the browser, a review
 * resolved, a label added, the audit trail verified and exported, the test-mode switch, sign-out,
 * the phone layout and keyboard, and one organization's data never shown to another.
 */

import { readFileSync } from "node:fs";
import { type VerificationKey, verifyAuditExport } from "@agent-risk/client/audit";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { signIn } from "./support/console";
import {
  assessFromNode,
  createKey,
  fromPage,
  newUser,
  openSignedIn,
  shortId,
} from "./support/console-api";
import { getFromDevServer } from "./support/service";

const origin = inject("browserOrigin");

const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const REASONS: Record<number, string> = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" };

/** The two lines a refused GET leaves among a tab's problems: the answer, and Chromium's log. */
function refused(status: number, path: string): string[] {
  return [
    `HTTP ${status}: GET ${origin}${path}`,
    `console.error: Failed to load resource: the server responded with a status of ${status} (${REASONS[status]})`,
  ];
}

describe.skipIf(!origin)("the console's pages in Chromium", () => {
  const browser = useBrowser("console-pages");
  /** One organization for the tests below, its owner signed in once to create it. */
  const owner = newUser("owner");
  let key = "";

  beforeAll(async () => {
    const tab = await openSignedIn(browser, owner);
    key = await createKey(tab);
  });

  it("is served with its strict Content-Security-Policy, the page and its bundle alike", async () => {
    const tab = await browser.open("/console/assets/app.css");
    // The page names its icon, or a browser asks for /favicon.ico on every visit: a 404.
    // (Headless Chromium asks for no icon at all, so the page's declaration is what is checked.)
    const page = await (await tab.page.request.get(`${origin}/console/`)).text();
    const icon = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml" \/>/.exec(page)?.[1];
    expect(icon).toBe("/console/favicon.svg");
    for (const path of ["/console/", "/console/assets/app.js", "/console/assets/app.css", icon]) {
      const response = await tab.page.request.get(`${origin}${path}`);
      expect(response.status(), path).toBe(200);
      const headers = response.headers();
      expect(headers["content-security-policy"], path).toBe(CONSOLE_CSP);
      expect(headers["x-content-type-options"], path).toBe("nosniff");
      expect(headers["referrer-policy"], path).toBe("no-referrer");
    }
    const served = await tab.page.request.get(`${origin}${icon}`);
    expect(served.headers()["content-type"]).toBe("image/svg+xml");
    expect(await tab.problems()).toEqual([]);
  });

  it("creates the organization on first sign-in and shows the overview", async () => {
    const user = newUser("first");
    const tab = await browser.open("/health");
    await signIn(tab, user);
    await expect(
      tab.page.getByRole("heading", { level: 1, name: "Overview" }).waitFor(),
    ).resolves.toBeUndefined();
    await tab.page.getByText(`${user}@example.test`, { exact: true }).waitFor();
    // The organization the console made, by the name the server gave it.
    await tab.page.getByText(`${user}@example.test's organization`, { exact: true }).waitFor();
    const me = await fromPage(tab, "/v1/me");
    expect(me.status).toBe(200);
    expect(me.body.actor).toMatchObject({ type: "user", role: "owner", subject: `local|${user}` });
    for (const tile of [
      "Approval rate",
      "Latency p50",
      "Latency p99",
      "Open reviews",
      "Spend this period",
    ]) {
      await tab.page.getByText(tile, { exact: true }).waitFor();
    }
    await tab.page.locator(".chart canvas").first().waitFor();
    await tab.screenshot("first-sign-in-overview");
    // The one refusal first sign-in makes: /v1/me before the organization exists.
    expect(await tab.problems()).toEqual(refused(403, "/v1/me"));
  });

  it("finds an assessment run through the API in the list, and verifies its Risk Payload in the browser", async () => {
    const { assessmentId, decision } = await assessFromNode(key);
    expect(decision).toBe("review");
    const tab = await openSignedIn(browser, owner);
    await tab.page.getByRole("link", { name: "Assessments" }).click();
    await tab.page.getByRole("heading", { level: 1, name: "Assessments" }).waitFor();
    const link = tab.page.getByRole("link", { name: shortId(assessmentId), exact: true });
    await link.waitFor();

    // Filtered to deny, it is gone; to review, it is back.
    await tab.page.getByLabel("Decision").selectOption("deny");
    await tab.page.getByRole("button", { name: "Apply filters" }).click();
    await tab.page.getByText("No assessment matches these filters.").waitFor();
    await tab.page.getByLabel("Decision").selectOption("review");
    await tab.page.getByLabel("Kind").selectOption("ap2_payment");
    await tab.page.getByRole("button", { name: "Apply filters" }).click();
    await link.waitFor();

    await link.click();
    expect(tab.page.url()).toBe(`${origin}/console/#/assessments/${assessmentId}`);
    await tab.page
      .getByRole("heading", { level: 1, name: `Assessment ${shortId(assessmentId)}` })
      .waitFor();
    await tab.page.getByText("Signature verified", { exact: true }).waitFor();
    await tab.page.getByText(assessmentId, { exact: true }).waitFor();
    await tab.page.getByText("No AP2 credential was presented.").waitFor();
    await tab.page.getByRole("heading", { name: "Confidences" }).waitFor();
    await tab.page.locator(".chart canvas").first().waitFor();
    await tab.page.getByRole("heading", { name: "Audit entry" }).waitFor();
    await tab.screenshot("assessment-detail");
    expect(await tab.problems()).toEqual([]);
  });

  it("does not call another assessment's genuine payload verified", async () => {
    const shown = await assessFromNode(key);
    const other = await assessFromNode(key);
    const tab = await openSignedIn(browser, owner);
    // The answer for one assessment carries the other's Risk Payload: a valid signature, over
    // claims that are not the assessment on the screen.
    await tab.page.route(`**/v1/assessments/${shown.assessmentId}`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      const theirs = await route.fetch({
        url: route.request().url().replace(shown.assessmentId, other.assessmentId),
      });
      body.risk_payload = (await theirs.json()).risk_payload;
      await route.fulfill({ response, json: body });
    });
    await tab.page.goto(`${origin}/console/#/assessments/${shown.assessmentId}`);
    await tab.page.getByText(/Signature not verified: claims_mismatch/).waitFor();
    expect(await tab.page.getByText("Signature verified", { exact: true }).count()).toBe(0);
    await tab.screenshot("payload-of-another-assessment");
    expect(await tab.problems()).toEqual([]);
  });

  it("resolves the oldest open review with a note", async () => {
    const first = await assessFromNode(key);
    const second = await assessFromNode(key);
    const tab = await openSignedIn(browser, owner);
    await tab.page.getByRole("link", { name: "Reviews" }).click();
    const firstButton = tab.page.getByRole("button", {
      name: `Resolve review of assessment ${shortId(first.assessmentId)}`,
    });
    const secondButton = tab.page.getByRole("button", {
      name: `Resolve review of assessment ${shortId(second.assessmentId)}`,
    });
    await secondButton.waitFor();
    // Oldest first: the first assessment's item is above the second's.
    const firstTop = (await firstButton.boundingBox())?.y ?? Number.NaN;
    const secondTop = (await secondButton.boundingBox())?.y ?? Number.NaN;
    expect(firstTop).toBeLessThan(secondTop);

    await firstButton.click();
    await tab.page.getByLabel("Note", { exact: true }).fill("Known customer, checked by phone");
    await tab.page.getByRole("button", { name: "Approve" }).click();
    await tab.page
      .getByText(`Review of assessment ${shortId(first.assessmentId)} resolved: approve.`)
      .waitFor();
    await firstButton.waitFor({ state: "detached" });

    const reviews = await fromPage(tab, "/v1/reviews?status=resolved&order=desc&limit=100");
    const item = reviews.body.data.find((r: any) => r.assessment_id === first.assessmentId);
    expect(item).toMatchObject({
      status: "resolved",
      decision: "approve",
      note: "Known customer, checked by phone",
      resolved_by: { type: "user" },
    });
    await tab.screenshot("review-resolved");
    expect(await tab.problems()).toEqual([]);
  });

  it("labels an assessment with feedback from its detail", async () => {
    const { assessmentId } = await assessFromNode(key);
    const tab = await openSignedIn(browser, owner);
    await tab.page.goto(`${origin}/console/#/assessments/${assessmentId}`);
    await tab.page.getByText("No label yet.").waitFor();
    await tab.page.getByLabel("Label", { exact: true }).selectOption("chargeback");
    await tab.page.getByLabel("Label note").fill("Disputed on 3 Nov");
    await tab.page.getByRole("button", { name: "Add label" }).click();
    await tab.page.getByText("Labelled chargeback.").waitFor();
    await tab.page.getByText("“Disputed on 3 Nov”", { exact: false }).waitFor();
    const labels = await fromPage(tab, `/v1/assessments/${assessmentId}/feedback`);
    expect(labels.body.data).toEqual([
      expect.objectContaining({
        label: "chargeback",
        source: "console",
        note: "Disputed on 3 Nov",
      }),
    ]);
    await tab.screenshot("feedback-label");
    expect(await tab.problems()).toEqual([]);
  });

  it("verifies the audit trail, lists its checkpoints and downloads an export that verifies offline", async () => {
    const tab = await openSignedIn(browser, owner);
    await tab.page.getByRole("link", { name: "Audit" }).click();
    await tab.page.getByRole("button", { name: "Verify now" }).click();
    await tab.page.getByText("The audit trail verifies", { exact: true }).waitFor();
    // Verifying signs a checkpoint over the head: the list shows at least that one.
    await tab.page.locator("table.stack tbody tr").first().waitFor();

    const [download] = await Promise.all([
      tab.page.waitForEvent("download"),
      tab.page.getByRole("button", { name: "Download export" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^audit-export-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const text = readFileSync(await download.path(), "utf8");
    const keySet = await getFromDevServer(`${origin}/.well-known/jwks.json`, "console-pages");
    const jwks = (await keySet.json()) as {
      keys: VerificationKey[];
    };
    const verification = await verifyAuditExport(text, { jwks });
    expect(verification.report.ok).toBe(true);
    expect(verification.truncated).toBe(false);
    expect(verification.report.checked).toBeGreaterThan(0);
    await tab.screenshot("audit-verified");
    expect(await tab.problems()).toEqual([]);
  });

  it("shows test data under the test-mode switch, and remembers it", async () => {
    const live = await assessFromNode(key);
    const tab = await openSignedIn(browser, owner);
    const testKey = await createKey(tab, "test");
    const test = await assessFromNode(testKey);
    await tab.page.goto(`${origin}/console/#/assessments`);
    await tab.page.getByRole("link", { name: shortId(live.assessmentId), exact: true }).waitFor();

    const toggle = tab.page.getByRole("switch", { name: "Test mode" });
    await toggle.check();
    await tab.page.getByText("Test mode: you are viewing test data.").waitFor();
    await tab.page.getByRole("link", { name: shortId(test.assessmentId), exact: true }).waitFor();
    await expect(
      tab.page.getByRole("link", { name: shortId(live.assessmentId), exact: true }).count(),
    ).resolves.toBe(0);
    await tab.page.reload();
    await expect(tab.page.getByRole("switch", { name: "Test mode" }).isChecked()).resolves.toBe(
      true,
    );
    await tab.page.getByRole("link", { name: shortId(test.assessmentId), exact: true }).click();
    // A test-mode payload verifies here only because the console is in test mode.
    await tab.page.getByText("Signature verified", { exact: true }).waitFor();
    await tab.screenshot("test-mode");
    expect(await tab.problems()).toEqual([]);
  });

  it("pages through the assessments with Next page and Previous page", async () => {
    // 26 new assessments: the list's page holds 25, so the oldest of them is on page 2. The 25
    // after it are made at once: any order among them, all newer than it and than the rest.
    const oldest = (await assessFromNode(key)).assessmentId;
    const newer = (await Promise.all(Array.from({ length: 25 }, () => assessFromNode(key)))).map(
      (made) => made.assessmentId,
    );
    const tab = await openSignedIn(browser, owner);
    await tab.page.goto(`${origin}/console/#/assessments`);
    const linkTo = (id: string) => tab.page.getByRole("link", { name: shortId(id), exact: true });
    await linkTo(newer[newer.length - 1] as string).waitFor();
    await expect(linkTo(oldest).count()).resolves.toBe(0);
    await expect(
      tab.page.getByRole("button", { name: "Previous page" }).isDisabled(),
    ).resolves.toBe(true);

    await tab.page.getByRole("button", { name: "Next page" }).click();
    await tab.page.getByText("Page 2", { exact: true }).waitFor();
    await linkTo(oldest).waitFor();
    await expect(linkTo(newer[newer.length - 1] as string).count()).resolves.toBe(0);
    await tab.screenshot("assessments-page-2");

    await tab.page.getByRole("button", { name: "Previous page" }).click();
    await tab.page.getByText("Page 1", { exact: true }).waitFor();
    await linkTo(newer[newer.length - 1] as string).waitFor();
    expect(await tab.problems()).toEqual([]);
  });

  it("signs out to the signed-out page, whose link signs in again", async () => {
    const tab = await openSignedIn(browser, owner);
    await tab.page.getByRole("button", { name: "Sign out" }).click();
    await tab.page.getByText("You are signed out.").waitFor();
    const cookies = await tab.page.context().cookies(origin as string);
    expect(cookies.map((c) => c.name)).toEqual([]);
    await tab.page.reload();
    const signInLink = tab.page.getByRole("link", { name: "Sign in" });
    await signInLink.waitFor();
    expect(await signInLink.getAttribute("href")).toBe("/console/auth/login");
    await tab.screenshot("signed-out");

    // The link leads through the identity provider's page and back, signed in again.
    await signInLink.click();
    await tab.page.getByLabel("User name").fill(owner);
    await tab.page.getByRole("button", { name: "Sign in" }).click();
    await tab.page.waitForURL(`${origin}/console/`);
    await tab.page.getByText(`${owner}@example.test`, { exact: true }).waitFor();
    // The reload asked who is signed in: nobody.
    expect(await tab.problems()).toEqual(refused(401, "/v1/me"));
  });

  it("is usable at 390×844 and from the keyboard", async () => {
    const tab = await openSignedIn(browser, owner, { viewport: { width: 390, height: 844 } });
    const nav = tab.page.getByRole("navigation", { name: "Console" });
    const links = nav.getByRole("link");
    expect(await links.count()).toBe(12);
    for (const link of await links.all()) {
      const box = await link.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, await link.innerText()).toBe(true);
    }
    // Nothing wider than the phone: no sideways scrolling of the page.
    const width = await tab.page.evaluate<number>("document.documentElement.scrollWidth");
    expect(width).toBeLessThanOrEqual(390);

    // Keyboard: Tab reaches the nav's links with a visible focus ring; Enter follows one.
    const reviews = nav.getByRole("link", { name: "Reviews" });
    // (Through globalThis, inside the page: the tests' TypeScript has no DOM library.)
    const focused = () => reviews.evaluate((a) => a === (globalThis as any).document.activeElement);
    for (let i = 0; i < 20 && !(await focused()); i++) await tab.page.keyboard.press("Tab");
    expect(await focused()).toBe(true);
    expect(
      await reviews.evaluate((a) => (globalThis as any).getComputedStyle(a).outlineStyle),
    ).toBe("solid");
    await tab.page.keyboard.press("Enter");
    await tab.page.getByRole("heading", { level: 1, name: "Reviews" }).waitFor();
    expect(await reviews.getAttribute("aria-current")).toBe("page");
    await tab.screenshot("phone-reviews");
    expect(await tab.problems()).toEqual([]);
  });

  it("never shows one organization's assessments to another", async () => {
    const { assessmentId } = await assessFromNode(key);
    const stranger = newUser("stranger");
    const tab = await browser.open("/health");
    await signIn(tab, stranger);
    await tab.page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // The overview counts the stranger's own assessments: none.
    const total = tab.page.locator(".tiles > div").filter({ hasText: "Assessments, 30 days" });
    await total.getByText("0", { exact: true }).waitFor();
    await tab.page.goto(`${origin}/console/#/assessments`);
    await tab.page.getByText("No assessment matches these filters.").waitFor();
    await tab.page.getByRole("link", { name: "Reviews" }).click();
    await tab.page.getByText("The queue is empty.").waitFor();
    await tab.page.goto(`${origin}/console/#/assessments/${assessmentId}`);
    await tab.page.getByRole("alert").getByText("not_found").waitFor();
    await expect(tab.page.getByText("Signature verified").count()).resolves.toBe(0);
    await tab.screenshot("cross-tenant");
    expect(await tab.problems()).toEqual([
      ...refused(403, "/v1/me"),
      ...refused(404, `/v1/assessments/${assessmentId}`),
    ]);
  });
});
