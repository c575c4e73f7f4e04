import { env } from "cloudflare:test";
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from "jose";
import { expect } from "vitest";
import { decompressStatusList, statusAt } from "../../../src/status-lists/encoding";
import { forgetPublishedLists, publishedList } from "../../../src/status-lists/published";
import { call, callRaw } from "./api";

/** Helpers of the status-list suites (docs/status-lists.md, "Issued"). */

export interface Place {
  idx: number;
  uri: string;
}

const pathOf = (uri: string) => new URL(uri).pathname;

/** A record's `status_list`, which the test expects to be there. */
export function placed(place: Place | null | undefined): Place {
  if (!place) throw new Error("no status_list where a place was expected");
  return place;
}

/** The list at `uri`, fetched and verified as a relying party would: JWKS, typ, sub. */
export async function fetchList(uri: string) {
  const res = await callRaw(pathOf(uri));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/statuslist+jwt");
  const keys = (await call("/.well-known/jwks.json")).json as JSONWebKeySet;
  const { payload, protectedHeader } = await jwtVerify(res.text, createLocalJWKSet(keys), {
    typ: "statuslist+jwt",
    subject: uri,
    algorithms: ["ES256"],
  });
  return { payload, protectedHeader, headers: res.headers };
}

/**
 * The status at `place` in the list fetched over HTTP and verified: the list as signed when the
 * route first answered it, kept for its `ttl`.
 */
export async function fetchedStatus(reference: Place | null | undefined): Promise<number | null> {
  const place = placed(reference);
  const { payload } = await fetchList(place.uri);
  const list = payload.status_list as { bits: 2; lst: string };
  return statusAt(await decompressStatusList(list.lst), 2, place.idx);
}

/** The status at `place` in the list as this isolate publishes it at `at` (epoch ms). */
export async function publishedStatus(
  reference: Place | null | undefined,
  at: number,
): Promise<number | null> {
  const place = placed(reference);
  const id = pathOf(place.uri).split("/").pop() as string;
  const jws = (await publishedList(env as never, id, at)) as string;
  const claims = decodeJwt(jws) as { status_list: { lst: string } };
  return statusAt(await decompressStatusList(claims.status_list.lst), 2, place.idx);
}

/** The status at `place` now, in a list signed afresh (nothing kept from an earlier read). */
export function statusNow(place: Place | null | undefined): Promise<number | null> {
  forgetPublishedLists();
  return publishedStatus(place, Date.now());
}
