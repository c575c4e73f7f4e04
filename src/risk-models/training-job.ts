import { and, eq, type SQL, sql } from "drizzle-orm";
import { orgActor, orgBatchOf } from "../auth/tenant";
import { database } from "../db/client";
import { agentKeys, riskModels } from "../db/schema";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { type HistoryRow, historyWindow, readHistoryEvents } from "./history-read";
import { completeTraining } from "./lifecycle";
import { attachNetworkCounts, seriesQuery } from "./network-read";
import { modelColumns, type RiskModelRow } from "./records";
import { trainingOutcome } from "./training-outcome";
import type { TrainingMessage } from "./training-queue";

// The training queue's consumer (docs/risk-model.md, "Training"): one message names one model
// in `training`; the consumer reads the org's history as of the model's `as_of`, trains, and
// ends the model `ready` or `failed` with its ledger entry, as the org's system actor.
//
// Retries. What the trainer decides (too little data, a bad window) is final: `failed` with
// its reason, never retried. A fault of the consumer (the database or the ledger unreachable)
// is retried with a backoff; its last attempt (FAULT_ATTEMPTS) ends the model `failed` with the
// fault as the reason. An invocation that dies outright (past its CPU or memory limit) is
// retried by the queue itself, and past `max_retries` (wrangler.toml) its message reaches the
// dead-letter queue, whose consumer marks the model `failed`. A message lost altogether leaves
// its model to the Cron sweep (`failStaleTraining`). A model already out of `training` (a
// duplicate message) is left as it is: its message is acknowledged.

/** Who a training run's entries name. */
export const TRAINING_ACTOR = { type: "system", id: "risk-model-training" } as const;

/** Attempts at a consumer fault before the model is marked failed (below the queue's retries). */
export const FAULT_ATTEMPTS = 3;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function isTrainingMessage(body: unknown): body is TrainingMessage {
  const m = body as Partial<TrainingMessage> | null;
  return (
    typeof m?.model_id === "string" &&
    typeof m.org_id === "string" &&
    UUID.test(m.model_id) &&
    UUID.test(m.org_id)
  );
}

async function readTraining(env: Env, msg: TrainingMessage): Promise<RiskModelRow | undefined> {
  const [rows] = await orgBatchOf(env, msg.org_id, (db) => [
    db
      .select(modelColumns)
      .from(riskModels)
      .where(and(eq(riskModels.id, msg.model_id), eq(riskModels.status, "training"))),
  ]);
  return rows[0];
}

/**
 * The org's history a model trains on, read in the org's transactions page by page, with the
 * network's counts for the payments trained on when the org's mode consumes network signals
 * (src/risk-models/network-read.ts: a few more statements, none when it does not).
 */
export async function readModelHistory(env: Env, orgId: string, row: RiskModelRow) {
  const asOf = row.asOf.getTime();
  const labelDelayMs = row.labelDelaySeconds * 1000;
  const trainingWindowMs = row.trainingWindowSeconds * 1000;
  const window = historyWindow(row.livemode, asOf, labelDelayMs, trainingWindowMs);
  const execute = async (query: SQL) => {
    const [result] = await orgBatchOf(env, orgId, (db) => [db.execute(query)]);
    return (result as unknown as { rows: Record<string, unknown>[] }).rows;
  };
  const history = await readHistoryEvents(
    window,
    async (query) => (await execute(query)) as unknown as HistoryRow[],
  );
  await attachNetworkCounts(
    env,
    row.livemode,
    history.events,
    history.identifiers,
    { from: asOf - labelDelayMs - trainingWindowMs, asOf },
    async () => agentKeysOf(env, orgId),
    async (ask) => (await execute(seriesQuery(ask)))[0]?.series ?? null,
  );
  return history.events;
}

/** Every agent's key thumbprints (any status: a revoked key still signed what it signed). */
async function agentKeysOf(env: Env, orgId: string): Promise<Map<string, string[]>> {
  const [rows] = await orgBatchOf(env, orgId, (db) => [
    db.select({ agentId: agentKeys.agentId, thumbprint: agentKeys.thumbprint }).from(agentKeys),
  ]);
  const keys = new Map<string, string[]>();
  for (const { agentId, thumbprint } of rows) {
    const list = keys.get(agentId) ?? [];
    keys.set(agentId, list);
    list.push(thumbprint);
  }
  return keys;
}

/** Trains one message's model; a fault is thrown to the caller, which retries or gives up. */
async function train(env: Env, msg: TrainingMessage): Promise<void> {
  const row = await readTraining(env, msg);
  if (!row) return; // trained already, or not this org's: nothing to do
  const events = await readModelHistory(env, msg.org_id, row);
  const outcome = trainingOutcome(events, row);
  const committer = orgActor(env, msg.org_id, TRAINING_ACTOR, null);
  await completeTraining(committer, msg.org_id, row, outcome);
}

/** Marks a model failed after a fault it could not get past, if it is still training. */
async function giveUp(env: Env, msg: TrainingMessage, reason: string): Promise<void> {
  const row = await readTraining(env, msg);
  if (!row) return;
  const committer = orgActor(env, msg.org_id, TRAINING_ACTOR, null);
  await completeTraining(committer, msg.org_id, row, { status: "failed", reason });
}

/** The training queue's consumer: one model at a time (the queue's batches hold one). */
export async function trainBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body;
    if (!isTrainingMessage(body)) {
      logError("training message malformed", { id: message.id });
      message.ack();
      continue;
    }
    try {
      await train(env, body);
      message.ack();
    } catch (error) {
      logError("risk model training faulted", {
        model: body.model_id,
        attempt: message.attempts,
        error: String(error),
      });
      if (message.attempts < FAULT_ATTEMPTS) {
        message.retry({ delaySeconds: Math.min(300, 10 * 2 ** message.attempts) });
        continue;
      }
      try {
        await giveUp(env, body, `training faulted ${message.attempts} times: ${String(error)}`);
        message.ack();
      } catch (again) {
        logError("risk model failure not recorded", { model: body.model_id, error: String(again) });
        message.retry({ delaySeconds: 60 });
      }
    }
  }
}

/**
 * The dead-letter queue's consumer: a training invocation that died outright every time
 * (its CPU or memory limit) ends its model `failed`.
 */
export async function recordDeadTraining(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body;
    if (!isTrainingMessage(body)) {
      message.ack();
      continue;
    }
    try {
      await giveUp(
        env,
        body,
        "training did not finish: every attempt ended before it could (the history may be too large for one run; train a shorter window)",
      );
      message.ack();
    } catch (error) {
      logError("risk model failure not recorded", { model: body.model_id, error: String(error) });
      message.retry({ delaySeconds: 60 });
    }
  }
}

/** A model this long in `training` lost its message: every other path settles it sooner. */
export const STALE_TRAINING_SECONDS = 3_600;
/** Stale models the Cron sweep settles per run; the rest wait a minute. */
const STALE_PER_SWEEP = 100;

/**
 * The Cron sweep: every model in `training` for longer than STALE_TRAINING_SECONDS (its queue
 * message lost: a purged queue, a failed send the route did not see) ends `failed`, with its
 * entry, in its own org. Answers how many it settled.
 */
export async function failStaleTraining(env: Env): Promise<number> {
  let rows: { id: string; org_id: string }[];
  try {
    ({ rows } = await database(env).execute<{ id: string; org_id: string }>(
      sql`select id, org_id from risk_models_training_stale(${STALE_TRAINING_SECONDS}, ${STALE_PER_SWEEP})`,
    ));
  } catch (error) {
    logError("stale risk models not read", { error: String(error) });
    return 0;
  }
  let settled = 0;
  for (const row of rows) {
    try {
      await giveUp(
        env,
        { model_id: row.id, org_id: row.org_id },
        "training never finished: its queue message was lost",
      );
      settled++;
    } catch (error) {
      logError("stale risk model not settled", { model: row.id, error: String(error) });
    }
  }
  return settled;
}
