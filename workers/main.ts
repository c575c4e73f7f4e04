import { buildApp } from "../src/app";
import type { Env } from "../src/env";
import { anchorPendingLedgers } from "../src/ledger/sweep";
import { contributeBatch } from "../src/network/contributions";
import { sweepNetwork } from "../src/network/sweep";
import { enqueueDueDeliveries } from "../src/outbox/enqueue";
import { expireOverdueReviews } from "../src/reviews/expire";
import { failStaleTraining, recordDeadTraining, trainBatch } from "../src/risk-models/training-job";
import { deliverBatch, recordDeadLetters } from "../src/webhooks/deliver";
import { noteSigningKey } from "../src/webhooks/key-rotation";

export { OrgLedger } from "../src/org-ledger/org-ledger";

const app = buildApp();

/** Dead letters arrive on the queue named with this suffix (see wrangler.toml). */
const DEAD_LETTER_SUFFIX = "-dlq";
/** Risk models to train (src/risk-models/training-job.ts); every queue not named is webhooks'. */
const TRAINING_QUEUE = "risk-model-training";
/** Network contributions (src/network/contributions.ts). */
const NETWORK_QUEUE = "network-contributions";

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    if (batch.queue === TRAINING_QUEUE) await trainBatch(batch, env);
    else if (batch.queue === NETWORK_QUEUE) await contributeBatch(batch, env);
    else if (batch.queue === `${TRAINING_QUEUE}${DEAD_LETTER_SUFFIX}`) {
      await recordDeadTraining(batch, env);
    } else if (batch.queue.endsWith(DEAD_LETTER_SUFFIX)) await recordDeadLetters(batch, env);
    else await deliverBatch(batch, env);
  },
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(anchorPendingLedgers(env));
    ctx.waitUntil(expireOverdueReviews(env));
    ctx.waitUntil(failStaleTraining(env));
    ctx.waitUntil(sweepNetwork(env, controller.scheduledTime));
    // The key first: a rotation's events are then enqueued by the same run.
    ctx.waitUntil(noteSigningKey(env).then(() => enqueueDueDeliveries(env)));
  },
} satisfies ExportedHandler<Env>;
