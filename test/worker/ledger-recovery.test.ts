import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OrgLedger } from "../../src/ledger/org-ledger";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { ledger } from "./support/ledger";

const input = {
  type: "test.event",
  actor: { type: "api_key", id: "k1" },
  subject: null,
  digest: `sha256:${"cd".repeat(32)}`,
};

async function stored(orgId: string) {
  const rows = await ownerSql`select sequence from audit_entries where org_id = ${orgId} order by sequence`;
  return rows.map((r) => Number(r.sequence));
}

describe("when Postgres is unreachable during an append", () => {
  it("fails the append, keeps the entry, and writes it out on the next activation: no gap, nothing lost", async () => {
    const org = await newOrg();
    const stub = ledger(org.id);
    const unreachable = (env.DATABASE_URL as string).replace(/@[^/]+\//, "@127.0.0.1:9/");

    await runInDurableObject(stub, async (instance: OrgLedger) => {
      const self = instance as unknown as { env: typeof env };
      const real = self.env;
      self.env = { ...real, DATABASE_URL: unreachable };
      try {
        await expect(instance.append(org.id, [input])).rejects.toThrow();
      } finally {
        self.env = real;
      }
    });
    expect(await stored(org.id)).toEqual([1]);

    // The alarm the ledger set for itself reconciles the backlog and anchors it.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stored(org.id)).toEqual([1, 2]);

    const next = await stub.append(org.id, [input]);
    expect(next[0]?.sequence).toBe(3);
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json).toMatchObject({ ok: true, checked: 3 });
  });

  it("rewrites nothing twice: a retried flush of rows already stored changes nothing", async () => {
    const org = await newOrg();
    const stub = ledger(org.id);
    await stub.append(org.id, [input, input]);
    await runInDurableObject(stub, async (instance: OrgLedger) => {
      // Forget that the rows were flushed, as after a crash before the bookkeeping.
      (instance as unknown as { flushed: number }).flushed = 0;
      await instance.append(org.id, [input]);
    });
    expect(await stored(org.id)).toEqual([1, 2, 3, 4]);
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json.ok).toBe(true);
  });
});

describe("idempotent appends", () => {
  it("records a change once per key, however often it is retried", async () => {
    const org = await newOrg();
    await call("/v1/orgs", { method: "POST", token: org.token });
    await call("/v1/orgs", { method: "POST", token: org.token });
    const list = await call("/v1/audit?type=org.created", { token: org.token });
    expect(list.json.data).toHaveLength(1);
  });
});
