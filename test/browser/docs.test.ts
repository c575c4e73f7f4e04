/**
 * `GET /docs` in a real browser: Debian's Chromium opens the reference on the running service
 * (`npm run dev`), which renders `/openapi.json` with nothing from another origin and no error.
 */
import type { Locator } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { cspWeaknesses } from "../support/csp";
import { useBrowser } from "./support/browser";
import { getFromDevServer } from "./support/service";

const origin = inject("browserOrigin");

interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
  description?: string;
}

interface Operation {
  tags?: string[];
  summary?: string;
  requestBody?: { content: Record<string, { schema: Schema }> };
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

async function openApi(): Promise<Document> {
  const response = await getFromDevServer(`${origin}/openapi.json`, "docs");
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

function resolve(document: Document, schema: Schema): Schema {
  const name = schema.$ref?.replace("#/components/schemas/", "");
  return name ? (document.components.schemas[name] ?? {}) : schema;
}

/**
 * What the reference must show of an operation's JSON body: its fields by name, or, for a body
 * the document leaves free-form, the schema's description. Taken from the document, so the test
 * follows the contract as it grows instead of a copy of it.
 */
function bodyLabels(document: Document, operation: Operation): string[] {
  const schema = operation.requestBody?.content["application/json"]?.schema;
  if (!schema) return [];
  const body = resolve(document, schema);
  const fields = Object.keys(body.properties ?? {});
  return fields.length > 0 ? fields : body.description ? [body.description] : [];
}

/** Scalar's address of an operation: `#tag/<tag slug>/<METHOD><path>`. */
function anchor(tag: string, method: string, path: string): string {
  return `tag/${tag.toLowerCase().replaceAll(/[^a-z0-9]+/g, "-")}/${method.toUpperCase()}${path}`;
}

/**
 * The text of one section of the reference's introduction (its `info.description`): the
 * heading's and what follows it up to the next heading of its level or above, whitespace
 * collapsed. Scalar renders each heading in a block of its own beside the paragraphs.
 */
async function sectionText(heading: Locator): Promise<string> {
  const text = await heading.evaluate((h: any) => {
    const level = Number(h.tagName.slice(1));
    const ends = (e: any) =>
      [...e.querySelectorAll("h1, h2, h3, h4, h5, h6")].some(
        (other: any) => Number(other.tagName.slice(1)) <= level,
      );
    const block = h.closest(".introduction-description-heading") ?? h;
    const parts = [block.innerText];
    for (let e = block.nextElementSibling; e && !ends(e); e = e.nextElementSibling) {
      parts.push(e.innerText);
    }
    return parts.join("\n");
  });
  return text.replaceAll(/\s+/g, " ");
}

describe.skipIf(!origin)("GET /docs in Chromium", () => {
  const browser = useBrowser("docs");

  it("answers the page from the asset layer under a strict Content-Security-Policy", async () => {
    const tab = await browser.open("/docs");
    expect(tab.response?.status()).toBe(200);
    const headers = tab.response?.headers() ?? {};
    expect(headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(cspWeaknesses(headers["content-security-policy"] ?? null)).toEqual([]);
    // The Worker stamps every answer it makes; the asset layer answered this one before it ran.
    expect(headers["x-request-id"]).toBeUndefined();
    await expect(tab.page.title()).resolves.toBe("API reference · Agent Action Risk Assessment");
  });

  it("shows POST /v1/assess and its request schema, with no error and nothing from elsewhere", async () => {
    const document = await openApi();
    const assess = document.paths["/v1/assess"]?.post;
    expect(assess?.summary).toBeTruthy();
    const labels = bodyLabels(document, assess as Operation);
    expect(labels.length).toBeGreaterThan(0);

    const id = anchor(assess?.tags?.[0] ?? "", "post", "/v1/assess");
    const tab = await browser.open(`/docs#${id}`);
    // Scalar prefixes each id with its document's slug: the operation's section ends with ours.
    const section = tab.page.locator(`[id$="${id}"]`);
    // playwright-core has no test runner's assertions: waitFor throws, naming what never showed.
    await section
      .getByText(assess?.summary ?? "", { exact: true })
      .first()
      .waitFor();
    const text = await section.innerText();
    expect(text).toMatch(/POST\s*\/v1\/assess/);
    expect(text).toMatch(/Body\s+required\s+application\/json/);
    // Scalar lists a body's first 12 fields and folds the rest behind a button.
    const more = section.getByRole("button", {
      name: "Show additional properties for Request Body",
    });
    if (labels.length > 12) await more.click();
    // Line by line: a field's row also holds a screen-reader-only "Copy link to <field>".
    const missing = async () => {
      const lines = (await section.innerText()).split("\n").map((line) => line.trim());
      return labels.filter((label) => !lines.includes(label));
    };
    await expect.poll(missing, { timeout: 10_000 }).toEqual([]);

    await section.scrollIntoViewIfNeeded();
    await tab.screenshot("post-v1-assess");
    expect(await tab.problems()).toEqual([]);
  });

  it("opens an error's doc_url on its code's entry", async () => {
    // A real error of the running service, not an address written here.
    const refused = await getFromDevServer(`${origin}/v1/me`, "docs");
    expect(refused.status).toBe(401);
    const body = (await refused.json()) as { error: string; message: string; doc_url: string };
    const url = new URL(body.doc_url);
    expect(url.origin).toBe(origin);
    expect(`${url.pathname}${url.hash}`).toBe("/docs#description/unauthenticated");

    const tab = await browser.open(`${url.pathname}${url.hash}`);
    // Scalar prefixes each id with its document's slug; the heading's id ends with the anchor.
    const heading = tab.page.locator(`h3[id$="${url.hash.slice(1)}"]`);
    await heading.getByText(body.error, { exact: true }).waitFor();
    // The page went to it: the heading is in view, at the top of the page's content.
    const inView = async () => {
      const box = await heading.boundingBox();
      const height = tab.page.viewportSize()?.height ?? 0;
      return box !== null && box.y >= 0 && box.y + box.height <= height / 2;
    };
    await expect.poll(inView, { timeout: 10_000 }).toBe(true);
    // The entry says what the code's message says (the generic one: this 401's is specific).
    const page = async () => (await tab.page.locator("body").innerText()).replaceAll(/\s+/g, " ");
    await expect
      .poll(page, { timeout: 10_000 })
      .toContain("unauthenticated 401 The request carries no valid credential");
    await tab.screenshot("error-doc-url");
    expect(await tab.problems()).toEqual([]);
  });
});

describe.skipIf(!origin)("the reference's own checks and introduction", () => {
  const browser = useBrowser("docs-validation");

  it("adds the document with no validation warning from Scalar, opening on getting started and the rule language", async () => {
    // Scalar checks the document against its own model when it adds it, and logs
    // `document validation errors:` then the schemas it refuses (console.warn, which
    // problems() does not count) before it renders any of it: once the introduction's first
    // heading shows, every warning there will be has been logged. Listening from before the page.
    const tab = await browser.open("/health");
    const warnings: string[] = [];
    tab.page.on("console", (message) => {
      if (message.type() === "warning") warnings.push(message.text());
    });
    await tab.navigation(() => tab.page.goto(`${origin}/docs`));
    const intro = tab.page.locator('h2[id$="description/getting-started"]');
    await intro.getByText("Getting started", { exact: true }).waitFor();
    expect(warnings).toEqual([]);

    const text = await sectionText(intro);
    for (const step of [
      "1. Start the service.",
      "2. Get an API key.",
      "3. Assess a payment",
      "4. Verify the payload offline",
    ]) {
      expect(text).toContain(step);
    }
    expect(text).toContain("verifyRiskPayload(data.riskPayloadJws");
    await tab.screenshot("getting-started");

    // The rule language, where error messages send people (src/assess/rules/reference.ts):
    // Scalar's anchor of a heading is its id, which ends with the address's fragment.
    const attributes = tab.page.locator('h3[id$="description/rule-attributes"]');
    await attributes.getByText("Rule attributes", { exact: true }).waitFor();
    expect(await sectionText(attributes)).toContain(
      "agent.risk_tier ordered enum low < medium < high < critical",
    );
    const operators = tab.page.locator('h3[id$="description/rule-operators"]');
    await operators.getByText("Rule operators", { exact: true }).waitFor();
    expect(await tab.problems()).toEqual([]);
  });
});
