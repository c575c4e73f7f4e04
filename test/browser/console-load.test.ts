/**
 * How long each console page takes to show its data in an organization of realistic size:
 * 10,000 assessments, 1,000 open reviews and 100 risk models in test mode (docs/console.md,
 * "Load times"). The org is made by support/seed-load.ts: real rows through the API, then
 * multiplied in the database in one transaction.
 *
 * Each page of support/console-routes.ts is loaded afresh (a new document: from about:blank to
 * `/console/#/<path>`) LOADS times; a load's time is the page's `performance.now()` when its data
 * was first shown and settled (`dataShown`: its heading and rows, no API call in flight, no
 * placeholder), from the navigation's start. The median of the loads is printed with the
 * slowest API call of the last load, and must stay under LIMIT_MS (see there).
 *
 * A measurement, run when asked (its seed and loads took 35-55 s of every CI run):
 *   TEST_SCALE=1 npx vitest run --project browser test/browser/console-load.test.ts
 * or `npm run bench:console`, which sets TEST_SCALE and loads each page five times. The
 * accessibility test visits the same pages on every run, with a small org.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { newUser, openSignedIn } from "./support/console-api";
import { CONSOLE_PAGES, countApiCalls, dataShown } from "./support/console-routes";
import { multiply, type Seeded, seedTemplates } from "./support/seed-load";

const origin = inject("browserOrigin");
const sqlEndpoint = inject("browserSqlEndpoint");

/** The issue's size (issue 40, section 5). */
const COUNTS = { assessments: 10_000, openReviews: 1_000, models: 100 };
/**
 * Loads of each page: 1 by default (seeding and one load of every page fit in about a minute),
 * 5 under `npm run bench:console` (scripts/bench/console.ts), whose medians docs/console.md
 * reports.
 */
const LOADS = Number(process.env.CONSOLE_LOAD_RUNS ?? 1);
/**
 * `npm run bench:console -- --switched`: the loads of a browser where the person has used the
 * mode switch (remembered), so the console does not first ask which mode to open in.
 */
const SWITCHED = process.env.CONSOLE_LOAD_SWITCHED === "1";
/**
 * The requirement is 1 s; the assertion is looser, since the machine is two cores shared with
 * other test runs and a load's time follows the machine's load more than the page's code: one
 * run at a load average of 13 had every median at 517–853 ms, one at 21 had single loads of
 * 1.5–2.9 s, the new-policy form (the shell and `GET /v1/me`, no data) alone 2.1 s. So a page
 * fails over LIMIT_MS, or, when even that form (CONTROL) takes longer than
 * `LIMIT_MS - DATA_MS`, over that form's time plus DATA_MS: what the page's data may add. A
 * page that reads what grows with the org (every assessment, every review) still fails; the
 * 1 s figures are the benchmark's medians, in docs/console.md.
 */
const LIMIT_MS = 2_500;
const DATA_MS = 1_500;
const CONTROL = "policy-new";
const REQUIRED_MS = 1_000;

interface Call {
  path: string;
  start: number;
  end: number;
  ms: number;
  bytes: number;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const asked = Boolean(process.env.TEST_SCALE);

describe.skipIf(!origin || !sqlEndpoint || !asked)(
  "console load times at 10,000 assessments",
  () => {
    const browser = useBrowser("console-load");
    const owner = newUser("load");
    let seeded: Seeded;

    beforeAll(async () => {
      const tab = await openSignedIn(browser, owner);
      seeded = await seedTemplates(tab);
      const made = await multiply(sqlEndpoint ?? "", seeded, COUNTS);
      process.stdout.write(
        `[console-load] seeded ${made.assessments} assessments, ${made.reviews} open reviews, ` +
          `${made.models + 1} models in ${made.ms} ms\n`,
      );
      expect(made).toMatchObject({
        assessments: COUNTS.assessments,
        reviews: COUNTS.openReviews,
        models: COUNTS.models - 1,
      });
    }, 120_000);

    it(
      `shows every page's data within ${LIMIT_MS} ms, or the bare shell's time + ${DATA_MS} ms`,
      async () => {
        const tab = await openSignedIn(browser, owner);
        const { page } = tab;
        await countApiCalls(page);
        if (SWITCHED) {
          // A person who used the switch: the mode is remembered; no load asks which to open in.
          const toggle = page.getByRole("switch", { name: "Test mode" });
          await toggle.click();
          await toggle.click();
          expect(await toggle.isChecked()).toBe(true);
        }
        const rows: string[] = [];
        const medians: Record<string, number> = {};
        for (const target of CONSOLE_PAGES) {
          const url = `${origin}/console/#/${target.path(seeded)}`;
          const times: number[] = [];
          let slowest = "";
          for (let i = 0; i < LOADS; i++) {
            await page.goto("about:blank");
            await tab.navigation(() => page.goto(url, { waitUntil: "commit" }));
            times.push(Math.round(await dataShown(page, target, seeded)));
            // Where the time went: the console's script arriving, then the page's API calls.
            const { script, calls } = (await page.evaluate(`(() => {
          const entries = performance.getEntriesByType("resource");
          const at = (e) => new URL(e.name).pathname;
          const script = entries.find((e) => at(e) === "/console/assets/app.js");
          const calls = entries.filter((e) => at(e).startsWith("/v1/")).map((e) => ({
            path: at(e) + new URL(e.name).search, start: Math.round(e.startTime),
            end: Math.round(e.responseEnd), ms: Math.round(e.duration), bytes: e.encodedBodySize }));
          return { script: script ? Math.round(script.responseEnd) : null,
                   calls: calls.sort((a, b) => b.ms - a.ms) };
        })()`)) as { script: number | null; calls: Call[] };
            const top = calls[0];
            const first = Math.min(...calls.map((c) => c.start));
            const last = Math.max(...calls.map((c) => c.end));
            slowest = top
              ? `app.js in at ${script} ms, first API call at ${first} ms, last answer at ${last} ms; ` +
                `${calls.length} calls, slowest ${top.path} ${top.ms} ms ${top.bytes} B`
              : "";
          }
          medians[target.name] = median(times);
          rows.push(
            `${target.name.padEnd(12)} ${String(medians[target.name]).padStart(5)} ms  ` +
              `(${times.join(", ")})  ${slowest}`,
          );
          await tab.screenshot(target.name);
        }
        process.stdout.write(
          `[console-load] median of ${LOADS} loads${SWITCHED ? " (mode switched by hand)" : ""}, ` +
            `navigation start to data shown:\n` +
            `${rows.map((r) => `  ${r}`).join("\n")}\n`,
        );
        const over = (limit: number) =>
          Object.entries(medians)
            .filter(([, ms]) => ms >= limit)
            .map(([name, ms]) => `${name} ${ms} ms`);
        if (over(REQUIRED_MS).length > 0) {
          process.stdout.write(
            `[console-load] over ${REQUIRED_MS} ms: ${over(REQUIRED_MS).join(", ")}\n`,
          );
        }
        const limit = Math.max(LIMIT_MS, (medians[CONTROL] ?? 0) + DATA_MS);
        process.stdout.write(`[console-load] bound ${limit} ms\n`);
        expect(over(limit)).toEqual([]);
        // The lists show full pages of the seeded rows, not an empty org.
        await page.goto("about:blank");
        await page.goto(`${origin}/console/#/assessments`);
        await dataShown(
          page,
          CONSOLE_PAGES.find((p) => p.name === "assessments") ?? CONSOLE_PAGES[0]!,
          seeded,
        );
        expect(await page.locator("main table tbody tr").count()).toBe(25);
        expect(await tab.problems()).toEqual([]);
      },
      60_000 + LOADS * CONSOLE_PAGES.length * 6_000,
    );
  },
);
