import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../workers/main";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { anchor, appendMany, rfcVerifyInclusion, verifyJws } from "./support/ledger";

describe("public transparency endpoints", () => {
  it("publish a ledger's signed checkpoints by its pseudonymous log id, without a credential", async () => {
    const org = await newOrg();
    await appendMany(org.id, 4);
    const first = await anchor(org.id);
    await appendMany(org.id, 3);
    const second = await anchor(org.id);
    const logId = second?.log_id as string;
    expect(logId).toMatch(/^[0-9a-f]{32}$/);

    const log = await call(`/v1/transparency/logs/${logId}`);
    expect(log.status).toBe(200);
    expect(log.json.latest_checkpoint).toMatchObject({
      tree_size: 8,
      root_hash: second?.root_hash,
    });
    expect(log.text).not.toContain(org.id);

    const list = await call(`/v1/transparency/logs/${logId}/checkpoints`);
    expect(list.json.data.map((c: any) => c.tree_size)).toEqual([8, 5]);
    const { json: keySet } = await call("/.well-known/jwks.json");
    for (const cp of list.json.data)
      expect((await verifyJws(cp.jws, keySet.keys)).valid).toBe(true);

    const consistency = await call(`/v1/transparency/logs/${logId}/consistency?first=5&second=8`);
    expect(consistency.status).toBe(200);
    expect(consistency.json.proof).toEqual(second?.consistency_proof);
    expect(first?.tree_size).toBe(5);
  });

  it("prove a leaf's inclusion by its leaf hash alone", async () => {
    const org = await newOrg();
    await appendMany(org.id, 5);
    const checkpoint = await anchor(org.id);
    const [row] = await ownerSql`select leaf_hash, sequence from audit_entries
                                 where org_id = ${org.id} and sequence = 3`;
    const res = await call(`/v1/transparency/proofs/${row?.leaf_hash}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "anchored", leaf_index: 2, tree_size: 6 });
    expect(res.text).not.toContain(org.id);
    expect(Object.keys(res.json).sort()).toEqual(
      [
        "audit_path",
        "checkpoint",
        "leaf_hash",
        "leaf_index",
        "log_id",
        "object",
        "status",
        "tree_size",
      ].sort(),
    );
    const ok = await rfcVerifyInclusion(
      row?.leaf_hash,
      2,
      6,
      res.json.audit_path!,
      checkpoint?.root_hash as string,
    );
    expect(ok).toBe(true);
  });

  it("answer unknown logs and leaves with 404 and malformed ones with 400", async () => {
    expect((await call(`/v1/transparency/logs/${"0".repeat(32)}`)).status).toBe(404);
    expect((await call(`/v1/transparency/proofs/${"0".repeat(64)}`)).status).toBe(404);
    expect((await call("/v1/transparency/logs/not-a-log")).status).toBe(400);
    expect((await call("/v1/transparency/proofs/xyz")).status).toBe(400);
  });

  it("refuse a consistency proof beyond the newest checkpoint", async () => {
    const org = await newOrg();
    await appendMany(org.id, 2);
    const checkpoint = await anchor(org.id);
    await appendMany(org.id, 2);
    const res = await call(
      `/v1/transparency/logs/${checkpoint?.log_id}/consistency?first=1&second=5`,
    );
    expect(res.status).toBe(400);
  });
});

describe("tenant isolation of the ledger", () => {
  it("answers 404 for another org's entry and shows none of its entries", async () => {
    const victim = await newOrg();
    const intruder = await newOrg();
    const theirs = await call("/v1/audit", { token: victim.token });
    const id = theirs.json.data[0]!.id;
    expect((await call(`/v1/audit/${id}/proof`, { token: intruder.token })).status).toBe(404);
    const mine = await call("/v1/audit", { token: intruder.token });
    expect(mine.json.data.map((e: any) => e.id)).not.toContain(id);
  });
});

describe("the Cron sweep", () => {
  async function sweep() {
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
  }

  async function treeSize(orgId: string) {
    const [checkpoint] =
      await ownerSql`select max(tree_size) as size from audit_checkpoints where org_id = ${orgId}`;
    return checkpoint?.size === null ? 0 : Number(checkpoint?.size);
  }

  it("anchors an org whose entries waited past its alarm, and leaves fresh ones to the alarm", async () => {
    const waited = await newOrg();
    await appendMany(waited.id, 2);
    const fresh = await newOrg();
    await appendMany(fresh.id, 2);
    // As if the ledger's alarm had been lost more than its delay ago (tests use a 1 h delay).
    await ownerSql`update audit_entries set time = time - interval '3 hours'
                   where org_id = ${waited.id}`;
    await sweep();
    expect(await treeSize(waited.id)).toBe(3);
    expect(await treeSize(fresh.id)).toBe(0);
  });
});
