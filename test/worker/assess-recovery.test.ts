import {
  createExecutionContext,
  env,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import type { LedgerStore } from "../../src/ledger/ledger-store";
import type { GroupCommit } from "../../src/org-ledger/group-commit";
import worker from "../../workers/main";
import payment from "../fixtures/ap2/payment_mandate.json";
import { call, callRaw, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { ledger } from "./support/ledger";

/** What these tests reach inside the org's ledger object. */
interface Internals {
  store: LedgerStore;
  commits: GroupCommit;
}

async function assessWith(override: Partial<Env>, key: string, body: unknown) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request("https://risk.test/v1/assess", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    { ...env, ...override },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, json: (await response.json()) as any };
}

/**
 * A new org's assessment that the ledger object sequenced (its entry and plan are in the
 * object's storage) and whose request then died, before Postgres saw anything.
 */
async function sequencedButNotWritten() {
  const org = await newOrg();
  const { key } = await org.key();
  const body = { mandate: { ...payment, transaction_id: crypto.randomUUID() } };
  const failed = await assessWith({ TEST_FAULTS: "persist" }, key, body);
  expect(failed.status).toBe(500);
  return { org, key, body, failed };
}

describe("an assessment that failed after the ledger sequenced it", () => {
  it("is completed by its retry: one entry, the first attempt's outcome, nothing lost", async () => {
    const { org, key, body, failed } = await sequencedButNotWritten();
    expect(failed.json).toEqual(errorBody("internal_error"));
    expect(await ownerSql`select id from assessments where org_id = ${org.id}`).toEqual([]);

    const retried = await call("/v1/assess", { method: "POST", key, body });
    expect(retried.status).toBe(200);
    const entries = await ownerSql`select id, sequence, subject_id from audit_entries
      where org_id = ${org.id} and type = 'assessment.completed'`;
    expect(entries).toHaveLength(1);
    // The retry finished the first attempt's plan: its ids are the ones the entry recorded.
    expect(entries[0]?.subject_id).toBe(retried.json.assessmentId);
    expect(retried.json.outcome.audit).toEqual({
      entry_id: entries[0]?.id,
      sequence: Number(entries[0]?.sequence),
      status: "pending",
    });
    // A further replay answers the same, and the chain verifies.
    const again = await call("/v1/assess", { method: "POST", key, body });
    expect(again.json).toEqual(retried.json);
    const verify = await call("/v1/audit/verify", { key });
    expect(verify.json).toMatchObject({ ok: true, first_break: null });
  });

  it("is completed from the object's storage when the object restarted in between", async () => {
    const { org, key, body } = await sequencedButNotWritten();

    // A crash: the plan the section held in memory is gone; only the stored body remains.
    await runInDurableObject(ledger(org.id), (_, state) => state.abort("crash")).catch(
      () => undefined,
    );
    const retried = await call("/v1/assess", { method: "POST", key, body });
    expect(retried.status).toBe(200);
    const rows = await ownerSql`select a.id, a.jws, e.subject_id from assessments a
      join audit_entries e on e.org_id = a.org_id and e.type = 'assessment.completed'
      where a.org_id = ${org.id}`;
    expect(rows).toEqual([
      {
        id: retried.json.assessmentId,
        jws: retried.json.riskPayloadJws,
        subject_id: retried.json.assessmentId,
      },
    ]);
    const verify = await call("/v1/audit/verify", { key });
    expect(verify.json).toMatchObject({ ok: true, first_break: null });
  });

  it("sends a plan held in memory only with the entry it was made for", async () => {
    const { org, key, body } = await sequencedButNotWritten();

    // The object holds the plan for the next write; put another plan in its place under a
    // hash that is not the entry's. The write must send the stored plan, not this one.
    await runInDurableObject(ledger(org.id), (object) => {
      const instance = object as unknown as Internals;
      const sequence = instance.store.head()?.sequence as number;
      const stored = JSON.parse(instance.store.write(sequence)?.body as string);
      const other = { ...stored, record: { ...stored.record, reason: "not this entry's plan" } };
      instance.commits.hold(sequence, "not-the-entry-hash", other);
    });
    const retried = await call("/v1/assess", { method: "POST", key, body });
    expect(retried.status).toBe(200);
    const [row] = await ownerSql`select reason from assessments where org_id = ${org.id}`;
    expect(row?.reason).toBe(retried.json.outcome.outcome.reason);
    expect(row?.reason).not.toBe("not this entry's plan");
  });

  it("never answers approve with a 5xx", async () => {
    const { failed } = await sequencedButNotWritten();
    expect(JSON.stringify(failed.json)).not.toContain("approve");
  });
});

describe("test and live data", () => {
  it("are apart on every read: a key sees the assessments and mandates of its own mode", async () => {
    const org = await newOrg();
    const live = (await org.key(["assess:write", "assess:read"], "live")).key;
    const test = (await org.key(["assess:write", "assess:read"], "test")).key;
    const body = { mandate: { ...payment, transaction_id: crypto.randomUUID() } };
    const inLive = await call("/v1/assess", { method: "POST", key: live, body });
    const inTest = await call("/v1/assess", { method: "POST", key: test, body });
    expect(inLive.json.outcome.livemode).toBe(true);
    expect(inTest.json.outcome.livemode).toBe(false);
    expect(inTest.json.assessmentId).not.toBe(inLive.json.assessmentId);

    const ids = async (key: string, path: string) =>
      (await callRaw(path, { key })).json.data.map((x: { id: string }) => x.id);
    expect(await ids(live, "/v1/assessments")).toEqual([inLive.json.assessmentId]);
    expect(await ids(test, "/v1/assessments")).toEqual([inTest.json.assessmentId]);
    expect(await ids(live, "/v1/mandates")).toEqual([inLive.json.mandateId]);
    expect(await ids(test, "/v1/mandates")).toEqual([inTest.json.mandateId]);
    const across = [
      `/v1/assessments/${inLive.json.assessmentId}`,
      `/v1/mandates/${inLive.json.mandateId}`,
    ];
    for (const path of across) expect((await callRaw(path, { key: test })).status).toBe(404);
    expect((await call(`/v1/assessments/${inTest.json.assessmentId}`, { key: live })).status).toBe(
      404,
    );
  });
});
