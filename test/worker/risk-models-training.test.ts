import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../workers/main";
import { newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { entriesOf, seedHistory } from "./support/risk-models";

// The training queue's consumer and its dead-letter queue (src/risk-models/training-job.ts;
// docs/risk-model.md, "Training"): a model never stays in `training` because its consumer
// failed.

const AS_OF = Date.parse("2026-10-01T00:00:00.000Z");

/** A model row in `training`, as POST /v1/risk-models writes it, with no message sent. */
async function trainingModel(orgId: string, trainingWindowSeconds = 14 * 86_400) {
  const id = crypto.randomUUID();
  await ownerSql`insert into risk_models (id, org_id, livemode, status, as_of,
      label_delay_seconds, training_window_seconds, targets, created_at)
    values (${id}, ${orgId}, true, 'training', ${new Date(AS_OF).toISOString()}, ${3 * 86_400},
      ${trainingWindowSeconds}, ${JSON.stringify({ review_precision: 0.25, deny_precision: 0.9 })}::jsonb,
      now())`;
  return id;
}

async function run(queue: string, body: unknown, attempts = 1, bindings: Env = env) {
  const batch = createMessageBatch(queue, [{ id: "m1", timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, bindings, ctx);
  return getQueueResult(batch, ctx);
}

async function statusOf(id: string) {
  const [row] = await ownerSql`select status, failure_reason, card from risk_models
    where id = ${id}`;
  return row as { status: string; failure_reason: string | null; card: string | null };
}

describe("the training queue's consumer", () => {
  it("trains a model in training and acknowledges its message", async () => {
    const org = await newOrg();
    await seedHistory(org.id, true, { asOf: AS_OF, seed: 11 });
    const id = await trainingModel(org.id);
    const result = await run("risk-model-training", { model_id: id, org_id: org.id });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect((await statusOf(id)).status).toBe("ready");
    // A duplicate message finds it trained: acknowledged, nothing recorded.
    const again = await run("risk-model-training", { model_id: id, org_id: org.id });
    expect(again.explicitAcks).toEqual(["m1"]);
    expect((await entriesOf(org.id, id)).map((e) => e.type)).toEqual(["risk_model.trained"]);
  });

  it("ends a model the trainer throws on failed, with the error as its reason", async () => {
    const org = await newOrg();
    const id = await trainingModel(org.id, 0);
    const result = await run("risk-model-training", { model_id: id, org_id: org.id });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(await statusOf(id)).toMatchObject({
      status: "failed",
      failure_reason: expect.stringMatching(/^training failed: RangeError: /),
      card: expect.any(String),
    });
  });

  it("retries a fault of its own with a backoff, leaving the model in training", async () => {
    const org = await newOrg();
    const id = await trainingModel(org.id);
    const broken = { ...env, DATABASE_URL: "postgres://app:app@127.0.0.1:9/none" } as Env;
    const first = await run("risk-model-training", { model_id: id, org_id: org.id }, 1, broken);
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages).toEqual([{ msgId: "m1" }]);
    // Its last attempt cannot record the failure either: retried later, never dropped.
    const last = await run("risk-model-training", { model_id: id, org_id: org.id }, 3, broken);
    expect(last.explicitAcks).toEqual([]);
    expect(last.retryMessages).toEqual([{ msgId: "m1" }]);
    expect((await statusOf(id)).status).toBe("training");
  });

  it("acknowledges and drops a malformed message", async () => {
    const result = await run("risk-model-training", { model_id: "x' or 1=1" });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
  });
});

describe("the training dead-letter queue's consumer", () => {
  it("ends a model whose every attempt died failed, with its entry", async () => {
    const org = await newOrg();
    const id = await trainingModel(org.id);
    const result = await run("risk-model-training-dlq", { model_id: id, org_id: org.id }, 4);
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(await statusOf(id)).toMatchObject({
      status: "failed",
      failure_reason: expect.stringMatching(/^training did not finish/),
    });
    expect(await entriesOf(org.id, id)).toEqual([
      { type: "risk_model.failed", actor_type: "system", actor_id: "risk-model-training" },
    ]);
  });
});

describe("the Cron sweep", () => {
  it("ends a model in training for over an hour failed: its message was lost", async () => {
    const org = await newOrg();
    const stale = await trainingModel(org.id);
    const fresh = await trainingModel(org.id);
    await ownerSql`update risk_models set created_at = now() - interval '2 hours'
      where id = ${stale}`;
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController(), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await statusOf(stale)).toMatchObject({
      status: "failed",
      failure_reason: "training never finished: its queue message was lost",
    });
    expect((await entriesOf(org.id, stale)).map((e) => e.type)).toEqual(["risk_model.failed"]);
    expect((await statusOf(fresh)).status).toBe("training");
  });
});
