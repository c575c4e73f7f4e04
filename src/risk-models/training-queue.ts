import type { Env } from "../env";
import { logError } from "../lib/log";

/** A training queue message names one model; everything else is read when it is trained. */
export interface TrainingMessage {
  model_id: string;
  org_id: string;
}

/**
 * Sends a model to the training queue (TRAINING_QUEUE; training-job.ts consumes it). Answers
 * false, logged, when the queue is not bound or refuses the message: the caller marks the
 * model failed rather than leave it waiting for a message that never comes.
 */
export async function enqueueTraining(env: Env, message: TrainingMessage): Promise<boolean> {
  const queue = env.TRAINING_QUEUE;
  if (!queue) {
    logError("training queue not bound", { model: message.model_id });
    return false;
  }
  try {
    await queue.send(message);
    return true;
  } catch (error) {
    logError("training enqueue failed", { model: message.model_id, error: String(error) });
    return false;
  }
}
