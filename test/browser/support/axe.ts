/**
 * Accessibility with a real checker: axe-core (Deque's engine, the one behind Lighthouse and
 * the axe browser extension) run inside the page as it is, after the test's own steps.
 *
 *   await expectAccessible(tab.page, "reviews queue");
 *
 * The console's Content-Security-Policy allows no inline script, so axe's source is evaluated
 * through the DevTools protocol (`page.evaluate`), which the policy does not govern, rather
 * than injected as a `<script>`: the page under test keeps its real policy. Serious and
 * critical violations fail the test, each named with its rule, help text and the first
 * offending elements; minor and moderate ones are left to the reviewer's judgement.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

const FAILING = new Set(["serious", "critical"]);

/** The serious and critical axe violations of the page as it is now, as readable lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(() => "axe" in globalThis);
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (...a: unknown[]) => Promise<unknown> } })
      .axe;
    const result = (await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ["violations"],
    })) as { violations: Violation[] };
    return result.violations;
  });
  return violations
    .filter((v) => FAILING.has(v.impact ?? ""))
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(", ")}${v.nodes.length > 3 ? `, +${v.nodes.length - 3} more` : ""})`,
    );
}

/** Fails with every serious or critical violation of the page, named after `label`. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const lines = await accessibilityViolations(page);
  if (lines.length > 0) {
    throw new Error(
      `${label}: axe found ${lines.length} serious/critical violation(s):\n${lines.join("\n")}`,
    );
  }
}
