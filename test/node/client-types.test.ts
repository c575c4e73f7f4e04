import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIENT_TYPES_PATH, renderClientTypes } from "../../scripts/client-types";

describe("the client package's generated types", () => {
  it("are what `npm run client:generate` renders from today's /openapi.json", async () => {
    const committed = await readFile(join(import.meta.dirname, "../..", CLIENT_TYPES_PATH), "utf8");
    // Compared in memory: a stale file fails here; run `npm run client:generate` to refresh it.
    expect(committed === (await renderClientTypes())).toBe(true);
  });
});
