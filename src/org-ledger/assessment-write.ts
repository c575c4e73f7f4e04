import {
  type AssessmentCommit,
  type CommitAnswer,
  signedRecord,
  type Verdict,
} from "../assess/commit";
import { type AnsweredPlan, type PersistPlan, recordOf } from "../assess/persist";
import type { LedgerStore, StoredEntry } from "../ledger/ledger-store";

/**
 * The write the ledger object keeps for a committed assessment: the record signed with the
 * chosen verdict, its mandate, events and inputs. `latency_ms` runs from the request's arrival
 * to now, when the verdict is chosen and sequenced.
 */
export function assessmentPlan(
  commit: AssessmentCommit,
  verdict: Verdict,
  signature: { jws: string; kid: string; mandate_receipt: string | null },
): PersistPlan {
  const record = signedRecord(
    commit.record,
    verdict,
    signature,
    Math.max(0, Math.round(Date.now() - commit.receivedAt)),
  );
  return {
    record,
    mandate: commit.mandate,
    events: verdict.events,
    ...(commit.inputs ? { inputs: commit.inputs } : {}),
    ...(commit.shadow ? { shadow: commit.shadow } : {}),
    ...(commit.shadowModel ? { shadowModel: commit.shadowModel } : {}),
    ...(commit.networkIds ? { networkIds: commit.networkIds } : {}),
    // Only a verdict that is still `review` opens an item (a refused spend is a denial).
    ...(commit.review && record.decision === "review" ? { review: commit.review } : {}),
  };
}

/** The entry an earlier commit under one of these keys made. */
export function earlierCommit(
  store: LedgerStore,
  once: readonly string[],
): StoredEntry | undefined {
  for (const key of once) {
    const earlier = store.onceEntry(key);
    if (earlier) return earlier;
  }
  return undefined;
}

/**
 * A commit's answer, once its write has reached Postgres (`flushThrough` writes it now if it
 * had not): stored, or refused at the spending cap. `answered` is what the object kept of the
 * plan: the plan itself for the commit that made it, the stored write for a later one.
 */
export async function commitAnswer(
  store: LedgerStore,
  orgId: string | undefined,
  entry: StoredEntry,
  answered: AnsweredPlan,
  replayed: boolean,
  flushThrough: (sequence: number) => Promise<void>,
): Promise<CommitAnswer> {
  await flushThrough(entry.sequence);
  const status = store.writeStatus(entry.sequence);
  if (status === "refused") return { kind: "refused" };
  if (status !== "stored") {
    throw new Error(`ledger ${orgId}: assessment write ${entry.sequence} is ${status}`);
  }
  return {
    kind: "stored",
    record: recordOf(answered, entry),
    replayed,
    reviewId: answered.review?.id ?? null,
  };
}
