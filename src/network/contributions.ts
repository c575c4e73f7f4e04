import { orgBatchOf } from "../auth/tenant";
import type { Env } from "../env";
import { logError } from "../lib/log";
import {
  type Cursors,
  contributeQuery,
  cursorsQuery,
  labelsPage,
  PAGE,
  type Paged,
  paymentsPage,
} from "./contribution-reads";
import { contributionRows, type KnownLabel, type SeenPayment } from "./contribution-rows";
import { type NetworkKey, networkKeys } from "./keys";
import { type NetworkMessage, sendNetworkMessages, settleSeconds } from "./queue";

// The network queue's consumer (docs/network.md, "How contributions flow"): one message names
// an org and a mode; the consumer reads, in that org's own transaction, its payments and labels
// past its cursors (a page of each), digests their identifiers under every network key, and
// hands the rows and the new cursors to network_contribute in a second one. A full page sends
// the next message. Nothing is lost to a duplicate or a race: a row only gains flags, a cursor
// re-read only re-adds what is there, and leaving the network wins over a step in flight (the
// function writes nothing for an org that does not contribute).

/** Contribution rows per request (a row is about 130 bytes of JSON). */
export const CHUNK = 5_000;

/** Attempts at a fault (the database unreachable) before the message is dropped for the sweep. */
export const FAULT_ATTEMPTS = 3;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function isNetworkMessage(body: unknown): body is NetworkMessage {
  const m = body as Partial<NetworkMessage> | null;
  return typeof m?.org_id === "string" && UUID.test(m.org_id) && typeof m.livemode === "boolean";
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

function parsed(value: unknown): Cursors | null {
  return (typeof value === "string" ? JSON.parse(value) : value) as Cursors | null;
}

/** Where a page leaves its cursor: past its last row when full, else at the read's bound. */
function through<T>(page: readonly Paged<T>[], bound: string): string {
  return page.length >= PAGE ? (page.at(-1) as Paged<T>).created : bound;
}

/**
 * One contribution step of an org's mode. Answers whether a page was full (more to read), and
 * how many rows it wrote (-1: the org does not contribute, nothing was read or written).
 */
export async function contributeStep(
  env: Env,
  keys: readonly NetworkKey[],
  message: NetworkMessage,
  chunk = CHUNK,
): Promise<{ more: boolean; written: number }> {
  const { org_id: orgId, livemode } = message;
  const settle = settleSeconds(env);
  const [head, payments, labels] = await orgBatchOf(env, orgId, (db) => [
    cursorsQuery(db, livemode, settle),
    paymentsPage(db, livemode, settle),
    labelsPage(db, livemode, settle),
  ]);
  const first = rowsOf<{ cursors: unknown; bound: string }>(head)[0];
  if (!first || parsed(first.cursors) === null) return { more: false, written: -1 };
  const seen = rowsOf<Paged<SeenPayment>>(payments);
  const known = rowsOf<Paged<KnownLabel>>(labels);
  const rows = contributionRows(keys, seen, known);
  // In chunks, so that no request grows with an import's 10,000 payments under two keys; only
  // the last moves the cursors, so a fault before it leaves them where a retry re-reads all.
  let written = 0;
  for (let at = 0; at === 0 || at < rows.length; at += chunk) {
    const last = at + chunk >= rows.length;
    const [result] = await orgBatchOf(env, orgId, (db) => [
      contributeQuery(
        db,
        livemode,
        rows.slice(at, at + chunk),
        last ? through(seen, first.bound) : null,
        last ? through(known, first.bound) : null,
      ),
    ]);
    const n = Number(rowsOf<{ written: number }>(result)[0]?.written ?? -1);
    if (n < 0) return { more: false, written: -1 };
    written += n;
  }
  return { more: seen.length >= PAGE || known.length >= PAGE, written };
}

let warnedNoKeys = false;

/** The network queue's consumer: each org's mode once per batch, a full page sends the next. */
export async function contributeBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const keys = networkKeys(env);
  if (!keys) {
    // No network key: nothing can be digested, so nothing is contributed (docs/network.md).
    if (!warnedNoKeys) logError("network keys missing: nothing is contributed", {});
    warnedNoKeys = true;
    batch.ackAll();
    return;
  }
  const done = new Set<string>();
  for (const message of batch.messages) {
    const body = message.body;
    if (!isNetworkMessage(body)) {
      logError("network message malformed", { id: message.id });
      message.ack();
      continue;
    }
    const id = `${body.org_id}:${body.livemode}`;
    if (done.has(id)) {
      message.ack();
      continue;
    }
    try {
      const { more } = await contributeStep(env, keys, body);
      done.add(id);
      if (more) await sendNetworkMessages(env, [body]);
      message.ack();
    } catch (error) {
      logError("network contribution faulted", {
        org: body.org_id,
        attempt: message.attempts,
        error: String(error),
      });
      // Past its attempts the message is dropped: the Cron sweep sends the org's next one.
      if (message.attempts < FAULT_ATTEMPTS) {
        message.retry({ delaySeconds: Math.min(300, 10 * 2 ** message.attempts) });
      } else message.ack();
    }
  }
}
