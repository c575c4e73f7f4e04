import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NODE_DATABASE_TESTS } from "../support/database-projects";

describe("the node-db project", () => {
  it("holds exactly the Node test files that read DATABASE_URL, so CI's PostgreSQL pass misses none", () => {
    const readers = readdirSync("test/node")
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => `test/node/${name}`)
      .filter((path) => path !== "test/node/database-projects.test.ts")
      .filter((path) => readFileSync(path, "utf8").includes("process.env.DATABASE_URL"));
    expect(readers.sort()).toEqual([...NODE_DATABASE_TESTS].sort());
  });
});
