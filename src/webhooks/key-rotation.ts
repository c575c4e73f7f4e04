import { sql } from "drizzle-orm";
import { database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { signer } from "../signing/signer";

/**
 * Tells the database which key signs now. The first sweep after a deploy with a new
 * SIGNING_KEY closes the old key's window and writes `key.rotation` to every org's outbox, in
 * one transaction (see note_signing_key() in the migrations), so it is announced once.
 * Failures are logged and retried by the next minute's sweep.
 */
export async function noteSigningKey(env: Env): Promise<boolean> {
  try {
    const { kid, keys } = await signer(env);
    const current = keys[0];
    const { rows } = await database(env).execute<{ rotated: boolean }>(
      sql`select note_signing_key(${kid}, ${JSON.stringify(current)}::jsonb) as rotated`,
    );
    return rows[0]?.rotated === true;
  } catch (error) {
    logError("signing key not noted", { error: String(error) });
    return false;
  }
}
