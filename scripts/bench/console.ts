/**
 * `npm run bench:console [-- --runs 5]`
 *
 * The console's load times at the size (docs/console.md, "Load times"): runs the browser
 * test test/browser/console-load.test.ts with `--runs` loads of every page instead of its one.
 * That test starts `npm run dev` on a free port with its own state (as every browser test does),
 * seeds a test-mode org of 10,000 assessments, 1,000 open reviews and 100 risk models
 * (test/browser/support/seed-load.ts), loads each console page afresh in Chromium and prints,
 * per page, the median time from the navigation's start to its data shown, every load's time,
 * and where the API time went. It fails, as the test does, if a median passes its bound.
 * `--switched` loads as a browser where the person used the mode switch (the mode remembered,
 * so no load first asks which mode to open in).
 *
 * Needs Chromium (docs/browser-tests.md). Takes about 2 minutes with 5 runs: run it on a quiet
 * machine, the figures are the machine's as much as the console's.
 */
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "../dev-state.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    switched: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write(
    "usage: npm run bench:console [-- --runs N] [--switched]\n" +
      "  --runs N     loads of each page (default 5)\n" +
      "  --switched   as a browser where the mode switch was used (no pick of the mode per load)\n",
  );
  process.exit(0);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 20) {
  process.stderr.write(`--runs must be an integer from 1 to 20, got ${values.runs}\n`);
  process.exit(2);
}

const child = spawn(
  "npx",
  ["vitest", "run", "--project", "browser", "test/browser/console-load.test.ts"],
  {
    cwd: REPO_ROOT,
    stdio: "inherit",
    env: {
      ...process.env,
      // The test runs only when asked: it is a measurement, not part of every CI run.
      TEST_SCALE: "1",
      CONSOLE_LOAD_RUNS: String(runs),
      CONSOLE_LOAD_SWITCHED: values.switched ? "1" : "0",
    },
  },
);
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
