import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { logIdFor } from "#audit/checkpoint";
import { publicBaseUrl } from "../../src/env";
import { decompressStatusList, statusAt } from "../../src/status-lists/encoding";
import {
  forgetPublishedLists,
  publishedList,
  STATUS_LIST_TTL_SECONDS,
} from "../../src/status-lists/published";
import { call, callRaw } from "./support/api";
import { assessOk, type Json, orgWithKey, payment } from "./support/assess";
import { errorBody } from "./support/errors";
import { fetchList } from "./support/status-lists";

// The service's own Token Status Lists (docs/status-lists.md, "Issued";
// draft-ietf-oauth-status-list §5.1, §6.2, §8.2): every Risk Payload names its place, the list
// is public and signed, and a verdict a review resolution voids turns INVALID within `ttl`.

type StatusClaim = { status_list: { idx: number; uri: string } };

function statusOf(jws: string): StatusClaim["status_list"] {
  return (decodeJwt(jws) as unknown as { status: StatusClaim }).status.status_list;
}

async function reviewed(key: string) {
  const body = await assessOk(key, { mandate: payment() });
  expect(body.decision).toBe("review");
  return body as Json;
}

describe("status lists, issued", () => {
  it("every Risk Payload names a distinct place in its org's list at PUBLIC_BASE_URL", async () => {
    const { org, key } = await orgWithKey();
    const a = await assessOk(key, { mandate: payment() });
    const b = await assessOk(key, { mandate: payment() });
    const [one, two] = [statusOf(a.outcome.risk_payload.jws), statusOf(b.outcome.risk_payload.jws)];
    expect(one.uri).toBe(`${publicBaseUrl(env as never)}/v1/status-lists/${logIdFor(org.id)}.0`);
    expect(two.uri).toBe(one.uri);
    expect(one.idx).not.toBe(two.idx);
    for (const idx of [one.idx, two.idx]) {
      expect(Number.isInteger(idx) && idx >= 0 && idx < 65_536).toBe(true);
    }
  });

  it("GET /v1/status-lists/{id}: public, statuslist+jwt, verifiable with the key set, VALID", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const place = statusOf(body.outcome.risk_payload.jws);
    const { payload, headers } = await fetchList(place.uri);
    expect(headers.get("cache-control")).toBe(`public, max-age=${STATUS_LIST_TTL_SECONDS}`);
    expect(payload).toMatchObject({ sub: place.uri, ttl: STATUS_LIST_TTL_SECONDS });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
    const list = payload.status_list as { bits: 2; lst: string };
    expect(list.bits).toBe(2);
    const bytes = await decompressStatusList(list.lst);
    expect(bytes.byteLength).toBe(16_384);
    expect(statusAt(bytes, 2, place.idx)).toBe(0);
  });

  it("404 for a list of no org, and for an id that is not a list's", async () => {
    const none = await callRaw(`/v1/status-lists/${"ab".repeat(16)}.0`);
    expect(none.status).toBe(404);
    expect(none.json).toEqual(errorBody("not_found"));
    expect((await callRaw("/v1/status-lists/not-a-list")).status).toBe(404);
  });

  it("a verdict a review resolution voids turns INVALID, visible within the list's ttl", async () => {
    const { org, key } = await orgWithKey();
    const body = await reviewed(key);
    const place = statusOf(body.outcome.risk_payload.jws);
    const id = `${logIdFor(org.id)}.0`;
    const read = async (at: number) => {
      const jws = (await publishedList(env as never, id, at)) as string;
      const claims = decodeJwt(jws) as { status_list: { lst: string } };
      return statusAt(await decompressStatusList(claims.status_list.lst), 2, place.idx);
    };
    forgetPublishedLists();
    const t0 = Date.now();
    expect(await read(t0)).toBe(0);
    const items = await call("/v1/reviews?order=desc&limit=100", { key });
    const item = items.json.data.find((r) => r.assessment_id === body.assessmentId) as Json;
    const res = await call(`/v1/reviews/${item.id}/resolve`, {
      method: "POST",
      token: org.token,
      body: { decision: "approve", note: "ok" },
    });
    expect(res.status).toBe(200);
    // The resolved payload is final: it names no place of its own.
    expect((decodeJwt(res.json.risk_payload!.jws) as Json).status).toBeUndefined();
    // Kept as signed until its ttl has passed, then read again: INVALID.
    expect(await read(t0 + 1000)).toBe(0);
    expect(await read(t0 + STATUS_LIST_TTL_SECONDS * 1000)).toBe(1);
  });
});
