import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { logIdFor } from "#audit/checkpoint";
import { decompressStatusList, statusAt } from "../../src/status-lists/encoding";
import {
  forgetPublishedLists,
  publishedList,
  STATUS_LIST_TTL_SECONDS,
} from "../../src/status-lists/published";
import { call } from "./support/api";
import { assessOk, orgWithKey, payment } from "./support/assess";
import { newAgent } from "./support/identity";

// A principal's erasure voids what the service vouched for before it (docs/status-lists.md,
// "Issued"; issue 42 §2): every earlier verdict for the principal's agents turns INVALID in
// the org's list, the Mandate Receipt with it; others' verdicts and later ones stay VALID.

type Place = { idx: number; uri: string };
const placeOf = (jws: string) =>
  (decodeJwt(jws) as unknown as { status: { status_list: Place } }).status.status_list;

describe("status lists: an erasure", () => {
  it("voids the erased principal's earlier verdicts, and only those, within the list's ttl", async () => {
    const { org, key } = await orgWithKey();
    const erased = await newAgent(org, { name: "Erased" });
    const kept = await newAgent(org, { name: "Kept" });
    const before = await Promise.all(
      [1, 2].map(() => assessOk(key, { mandate: payment(), agent_id: erased.id })),
    );
    const other = await assessOk(key, { mandate: payment(), agent_id: kept.id });
    const id = `${logIdFor(org.id)}.0`;
    const read = async (at: number, places: Place[]) => {
      const jws = (await publishedList(env as never, id, at)) as string;
      const claims = decodeJwt(jws) as { status_list: { lst: string } };
      const bytes = await decompressStatusList(claims.status_list.lst);
      return places.map((place) => statusAt(bytes, 2, place.idx));
    };
    const places = before.map((body) => placeOf(body.outcome.risk_payload.jws));
    const otherPlace = placeOf(other.outcome.risk_payload.jws);
    forgetPublishedLists();
    const t0 = Date.now();
    expect(await read(t0, [...places, otherPlace])).toEqual([0, 0, 0]);

    const res = await call(`/v1/principals/${erased.principal_id}/erase`, {
      method: "POST",
      key,
    });
    expect(res.status).toBe(200);
    const after = await assessOk(key, { mandate: payment(), agent_id: erased.id });
    const afterPlace = placeOf(after.outcome.risk_payload.jws);

    // Kept as signed until its ttl has passed, then read again: the two earlier verdicts are
    // INVALID; the other principal's, and the one made after the erasure, are not.
    expect(await read(t0 + 1000, places)).toEqual([0, 0]);
    const later = t0 + STATUS_LIST_TTL_SECONDS * 1000;
    expect(await read(later, [...places, otherPlace, afterPlace])).toEqual([1, 1, 0, 0]);

    // A repeated erasure voids nothing more.
    const again = await call(`/v1/principals/${erased.principal_id}/erase`, {
      method: "POST",
      key,
    });
    expect(again.status).toBe(200);
    forgetPublishedLists();
    expect(await read(later, [...places, otherPlace, afterPlace])).toEqual([1, 1, 0, 0]);
  });
});
