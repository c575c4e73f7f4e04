/**
 * bench:assess counts the SQL endpoint's requests by what sent them (scripts/bench/assess-wire.ts):
 * its verdicts on round trips per assessment rest on telling the pipeline's write from the
 * ledger object's entry flushes, whatever form the write takes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrafficWatch } from "../../scripts/bench/assess-wire";

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.end("{}"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function post(body: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/sql`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  await response.text();
}

const tx = (...queries: string[]) => ({ queries: queries.map((query) => ({ query, params: [] })) });

describe("TrafficWatch", () => {
  it("files each request under what sent it", async () => {
    const watch = new TrafficWatch(port);
    try {
      // The context read.
      await post(
        tx("select set_config('app.api_key_hash', $1, true)", "select assess_context($1)"),
      );
      // The ledger object's write with an assessment: the function, or the statement itself.
      await post(
        tx(
          'insert into "audit_entries" (sequence) values (1)',
          "select inserted, stored from persist_assessment($1, $2)",
        ),
      );
      await post(tx("with ins as (insert into assessments select 1) select 1"));
      // The alarm's re-send of entries, and a checkpoint alone.
      await post(tx('insert into "audit_entries" (sequence) values (1)'));
      await post(tx('insert into "audit_checkpoints" (tree_size) values (1)'));
      // Each body is filed when it ends, before the server answers it.
      expect(watch.take()).toMatchObject({
        read: 1,
        persist: 2,
        flush: 1,
        checkpoint: 1,
      });
    } finally {
      watch.close();
    }
  });
});
