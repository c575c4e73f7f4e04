/**
 * The browser tests' setup on a machine without Chromium: skipped with a message that names the
 * package, or, under CI, refused (docs/browser-tests.md). Nothing is started in either case.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

const saved = { CHROMIUM_PATH: process.env.CHROMIUM_PATH, CI: process.env.CI };

/** The setup as vitest calls it, with a fake project that records what it provides. */
async function runSetup(env: { CI?: string }) {
  process.env.CHROMIUM_PATH = "/nonexistent/chromium";
  if (env.CI === undefined) delete process.env.CI;
  else process.env.CI = env.CI;
  vi.resetModules(); // the Chromium path is read when the module loads
  const { default: setup } = await import("../browser/support/global-setup");
  const provided: Record<string, unknown> = {};
  const project = { provide: (key: string, value: unknown) => (provided[key] = value) };
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    const teardown = await setup(project as never);
    return {
      provided,
      teardown,
      printed: stderr.mock.calls.map(([text]) => String(text)).join(""),
    };
  } finally {
    stderr.mockRestore();
  }
}

afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe("browser tests without Chromium", () => {
  it("are skipped with a loud message naming the package to install", async () => {
    const { provided, teardown, printed } = await runSetup({});
    expect(provided).toEqual({
      browserOrigin: null,
      browserIdpOrigin: null,
      browserStateDir: null,
      browserSqlEndpoint: null,
    });
    expect(teardown).toBeUndefined();
    expect(printed).toContain("BROWSER TESTS SKIPPED: no Chromium at /nonexistent/chromium.");
    expect(printed).toContain("apt-get install chromium");
  });

  it.each(["true", "1"])("fail under CI=%s instead of skipping", async (ci) => {
    await expect(runSetup({ CI: ci })).rejects.toThrow(
      /BROWSER TESTS CANNOT RUN: no Chromium at \/nonexistent\/chromium\.[\s\S]*apt-get install chromium[\s\S]*CI=true: the browser tests must run\./,
    );
  });
});
