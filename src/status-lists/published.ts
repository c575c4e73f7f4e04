/**
 * The service's own Token Status Lists as it publishes them (docs/status-lists.md, "Issued";
 * draft-ietf-oauth-status-list §5.1, §8.1, §8.2): `GET /v1/status-lists/{id}` answers a
 * `statuslist+jwt` whose `sub` is the list's URI, with `iat`, `exp` and `ttl`, and the list of
 * LIST_SIZE entries of LIST_BITS bits, ZLIB-compressed. Read through `status_list_read`, which
 * needs no tenant; signed and kept per isolate for the list's `ttl`, so a revocation, written
 * in the same transaction as its change, is in the list within `ttl`.
 */
import { sql } from "drizzle-orm";
import { publicBatch } from "../auth/tenant";
import { type Env, publicBaseUrl } from "../env";
import { signer } from "../signing/signer";
import { compressStatusList, setStatus } from "./encoding";
import { LIST_BITS, LIST_SIZE, parseStatusListId, statusListUri } from "./indices";
import { STATUS_LIST_TYP } from "./token";

/** How long a relying party (and this isolate) may keep a list before fetching it again. */
export const STATUS_LIST_TTL_SECONDS = 60;
/** After this a list must not be relied upon at all (§13.7): well past its `ttl`. */
export const STATUS_LIST_LIFETIME_SECONDS = 3600;
/** Isolates keep at most this many signed lists, oldest out first. */
const MAX_KEPT = 256;

interface Kept {
  jws: string;
  /** Epoch ms until which it is answered as it is. */
  until: number;
}

const kept = new Map<string, Kept>();

/** For tests: every list signed by this isolate is forgotten. */
export function forgetPublishedLists(): void {
  kept.clear();
}

/**
 * The signed list `id` at `now` (epoch ms): the one kept while younger than its `ttl`, else
 * read and signed anew. Null for an id that names no list (malformed, or no such org).
 */
export async function publishedList(env: Env, id: string, now: number): Promise<string | null> {
  const place = parseStatusListId(id);
  if (place === null) return null;
  const held = kept.get(id);
  if (held && held.until > now) return held.jws;
  const [rows] = await publicBatch(env, {}, (db) => [
    db.execute<{ list: { entries: [number, number][] } | null }>(
      sql`select status_list_read(${place.logId}, ${place.list}) as list`,
    ),
  ]);
  const list = rows.rows[0]?.list ?? null;
  if (list === null) return null;
  const bytes = new Uint8Array((LIST_SIZE * LIST_BITS) / 8);
  for (const [idx, status] of list.entries) setStatus(bytes, LIST_BITS, idx, status);
  const iat = Math.floor(now / 1000);
  // ES256 (docs/architecture.md, ADR issue 42 point 1): a relying party without EdDSA can
  // check it; without a usable ES256 key the list is a 503, never unsigned.
  const key = await signer(env);
  const jws = await key.es256.signClaims(
    {
      iss: publicBaseUrl(env),
      sub: statusListUri(env, id),
      iat,
      exp: iat + STATUS_LIST_LIFETIME_SECONDS,
      ttl: STATUS_LIST_TTL_SECONDS,
      status_list: { bits: LIST_BITS, lst: await compressStatusList(bytes) },
    },
    STATUS_LIST_TYP,
  );
  kept.delete(id);
  kept.set(id, { jws, until: now + STATUS_LIST_TTL_SECONDS * 1000 });
  const oldest = kept.keys().next().value;
  if (kept.size > MAX_KEPT && oldest !== undefined) kept.delete(oldest);
  return jws;
}
