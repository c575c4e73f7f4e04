import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NODE_DATABASE_TESTS, POSTGRES_WORKER_TESTS } from "../support/database-projects";

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

describe("the PostgreSQL pass's Worker files", () => {
  // Files that never race a database: the HTTP edge route by route (its statements are every
  // other file's), and files that never open one.
  const apart =
    /^test\/worker\/(common-routes(-\d)?|hostile-inputs-\d|assess-fuzz|method-not-allowed|agent-card|assess-request|credentials-verify|outbound|outbound-registries|personal-data|policy-rules|public-jwk)\.test\.ts$/;

  it("exist, and include every file that sends requests at once", () => {
    const files = readdirSync("test/worker")
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => `test/worker/${name}`);
    expect(POSTGRES_WORKER_TESTS.filter((path) => !files.includes(path))).toEqual([]);
    const racing = files.filter(
      (path) => !apart.test(path) && /Promise\.all|[Cc]oncurren/.test(readFileSync(path, "utf8")),
    );
    expect(racing.filter((path) => !POSTGRES_WORKER_TESTS.includes(path))).toEqual([]);
  });
});
