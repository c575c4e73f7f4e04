import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OrgLedger } from "../../src/ledger/org-ledger";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { ledger } from "./support/ledger";

const input = {
  type: "test.event",
  actor: { type: "api_key", id: "k1" },
  subject: null,
  digest: `sha256:${"cd".repeat(32)}`,
};

const unreachable = (env.DATABASE_URL as string).replace(/@[^/]+\//, "@127.0.0.1:9/");

/** The object's private state, reached into to simulate crashes and outages. */
interface Internals {
  env: typeof env;
  commits: { flushed: number };
  append: OrgLedger["append"];
}

/** Cuts the ledger object's own database connection until `restore` is called. */
async function cutDatabase(orgId: string) {
  let real: typeof env | undefined;
  await runInDurableObject(ledger(orgId), (object) => {
    const instance = object as unknown as Internals;
    real = instance.env;
    instance.env = { ...real, DATABASE_URL: unreachable };
  });
  return () =>
    runInDurableObject(ledger(orgId), (object) => {
      (object as unknown as Internals).env = real as typeof env;
    });
}

/** Settles an RPC call at once, so its rejection is observed here and nowhere else. */
function outcome(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => "fulfilled",
    (error: unknown) => error,
  );
}

async function stored(orgId: string) {
  const rows = await ownerSql`select sequence from audit_entries
                              where org_id = ${orgId} order by sequence`;
  return rows.map((r) => Number(r.sequence));
}

describe("when Postgres is unreachable during an append", () => {
  it("keeps the entry and writes it out when the object next starts: no gap, nothing lost", async () => {
    const org = await newOrg();
    const stub = ledger(org.id);
    await runInDurableObject(stub, async (object, state) => {
      const instance = object as unknown as Internals;
      const real = instance.env;
      instance.env = { ...real, DATABASE_URL: unreachable };
      try {
        await expect(instance.append(org.id, [input])).rejects.toThrow(/ledger_unavailable/);
      } finally {
        instance.env = real;
      }
      // Leave no alarm behind: only the reconciliation at the next activation can recover it.
      await state.storage.deleteAlarm();
    });
    expect(await stored(org.id)).toEqual([1]);

    // A crash: the next call constructs the object afresh from its storage.
    await runInDurableObject(stub, (_, state) => state.abort("crash")).catch(() => undefined);
    const restarted = ledger(org.id);
    expect(await runDurableObjectAlarm(restarted)).toBe(true);
    expect(await stored(org.id)).toEqual([1, 2]);

    const next = await restarted.append(org.id, [input]);
    expect(next[0]?.sequence).toBe(3);
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json).toMatchObject({ ok: true, checked: 3 });
  });

  it("leaves an alarm that retries the write even if nothing else arrives", async () => {
    const org = await newOrg();
    const restore = await cutDatabase(org.id);
    expect(String(await outcome(ledger(org.id).append(org.id, [input])))).toMatch(
      /ledger_unavailable/,
    );
    await restore();
    expect(await runDurableObjectAlarm(ledger(org.id))).toBe(true);
    expect(await stored(org.id)).toEqual([1, 2]);
  });

  it("fails the appends queued behind a failed write too, keeping their entries for the alarm", async () => {
    const org = await newOrg();
    const restore = await cutDatabase(org.id);
    // Ten at once: the first goes out alone, the rest queue behind its write and go in the next.
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => outcome(ledger(org.id).append(org.id, [input]))),
    );
    for (const failed of outcomes) expect(String(failed)).toMatch(/ledger_unavailable/);
    expect(await stored(org.id)).toEqual([1]);
    await restore();
    expect(await runDurableObjectAlarm(ledger(org.id))).toBe(true);
    expect(await stored(org.id)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json).toMatchObject({ ok: true, checked: 11 });
  });

  it("answers a mutating route 503, never 500, and leaves no usable unaudited key", async () => {
    const org = await newOrg();
    const restore = await cutDatabase(org.id);
    const res = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      body: { name: "k", scopes: ["assess:read"] },
    });
    await restore();
    expect(res.status).toBe(503);
    expect(res.error).toEqual(errorBody("database_unavailable"));
    const keys = await call("/v1/api-keys", { token: org.token });
    expect(keys.json.data.map((k: any) => k.status)).toEqual(["revoked"]);
  });

  it("records a revocation on the retry when the first attempt could not", async () => {
    const org = await newOrg();
    const { id } = await org.key(["assess:read"]);
    const restore = await cutDatabase(org.id);
    const failed = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    await restore();
    expect(failed.status).toBe(503);
    // The failed append's entry reaches Postgres through the alarm; the retry adds no second one.
    const retried = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(retried.status).toBe(200);
    const again = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(again.json).toEqual(retried.json);
    const revocations = await call("/v1/audit?type=api_key.revoked", { token: org.token });
    expect(revocations.json.data).toHaveLength(1);
  });
});

describe("writing to Postgres", () => {
  it("rewrites nothing twice: a retried flush of rows already stored changes nothing", async () => {
    const org = await newOrg();
    const stub = ledger(org.id);
    await stub.append(org.id, [input, input]);
    await runInDurableObject(stub, async (object) => {
      // Forget that the rows were flushed, as after a crash before the bookkeeping.
      const instance = object as unknown as Internals;
      instance.commits.flushed = 0;
      await instance.append(org.id, [input]);
    });
    expect(await stored(org.id)).toEqual([1, 2, 3, 4]);
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json.ok).toBe(true);
  });

  it("refuses to skip a foreign row at a sequence only the ledger assigns, and raises an alert", async () => {
    const org = await newOrg();
    const [head] = await ownerSql`select hash from audit_entries where org_id = ${org.id}`;
    await ownerSql`insert into audit_entries (org_id, sequence, id, type, actor_type, actor_id,
                     digest, time, prev_hash, hash, leaf_hash)
                   values (${org.id}, 2, ${crypto.randomUUID()}, 'forged', 'user', 'x',
                     'sha256:00', now(), ${head?.hash}, ${"f".repeat(64)}, ${"e".repeat(64)})`;
    expect(String(await outcome(ledger(org.id).append(org.id, [input])))).toMatch(
      /ledger_conflict/,
    );
    const alerts = await ownerSql`select data from events
                                  where org_id = ${org.id} and type = 'audit.integrity_alert'`;
    expect(alerts[0]?.data).toEqual({ reason: "ledger_conflict", sequences: [2] });
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
