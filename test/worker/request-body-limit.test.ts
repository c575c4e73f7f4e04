import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/http/body-limit";
import { BASE } from "./support/api";
import { type Json, orgWithKey, payment } from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

/**
 * A body of `bytes` bytes as a stream without a declared length (chunked on the wire), in
 * 16 KiB chunks, counting how much the Worker pulled.
 */
function streamed(bytes: Uint8Array | number) {
  const total = typeof bytes === "number" ? bytes : bytes.byteLength;
  const chunk = 16 * 1024;
  const state = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= total) return controller.close();
      const n = Math.min(chunk, total - state.pulled);
      const next =
        typeof bytes === "number"
          ? new Uint8Array(n).fill(0x20)
          : bytes.slice(state.pulled, state.pulled + n);
      state.pulled += n;
      controller.enqueue(next);
    },
  });
  return { stream, state };
}

async function postStream(key: string, body: ReadableStream<Uint8Array>) {
  const res = await SELF.fetch(`${BASE}/v1/assess`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body,
  });
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    json: await res.json<Json>(),
  };
}

/** A valid assess request padded with JSON whitespace to exactly `bytes` bytes. */
function assessOfSize(bytes: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify({ mandate: payment() }));
  const padded = new Uint8Array(bytes).fill(0x20);
  padded.set(json);
  return padded;
}

async function assessments(orgId: string): Promise<number> {
  const [row] = (await ownerSql`select count(*)::int as n from assessments
                                where org_id = ${orgId}`) as [Json];
  return row.n;
}

const TOO_LARGE = errorBody("request_too_large", { max_bytes: 262_144 });

describe("a body over 256 KiB without a Content-Length", () => {
  it.each([
    ["300 KB", 300 * 1024],
    ["5 MB", 5 * 1024 * 1024],
  ])("is 413 request_too_large in the JSON envelope (%s, chunked)", async (_, size) => {
    const { org, key } = await orgWithKey();
    const { stream } = streamed(size);
    const res = await postStream(key, stream);
    expect(res.status).toBe(413);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.json).toEqual(TOO_LARGE);
    expect(await assessments(org.id)).toBe(0);
  });

  it("is refused without reading the whole stream (64 MiB offered)", async () => {
    const { key } = await orgWithKey();
    const offered = 64 * 1024 * 1024;
    const { stream, state } = streamed(offered);
    const res = await postStream(key, stream);
    expect(res.status).toBe(413);
    expect(res.json).toEqual(TOO_LARGE);
    // The limit, the 8 MiB read past it so the answer reaches the client, and what the
    // runtime's pipe holds in flight: far from the whole body.
    expect(state.pulled).toBeLessThan(16 * 1024 * 1024);
  });

  it("one byte over the limit is refused", async () => {
    const { key } = await orgWithKey();
    const res = await postStream(key, streamed(assessOfSize(MAX_BODY_BYTES + 1)).stream);
    expect(res.status).toBe(413);
    expect(res.json).toEqual(TOO_LARGE);
  });

  it("exactly at the limit is read whole and assessed", async () => {
    const { org, key } = await orgWithKey();
    const body = assessOfSize(MAX_BODY_BYTES);
    expect(body.byteLength).toBe(262_144);
    const res = await postStream(key, streamed(body).stream);
    expect(res.status).toBe(200);
    expect(res.json.decision).toMatch(/^(approve|review|deny)$/);
    expect(await assessments(org.id)).toBe(1);
  });
});

describe("a body over 256 KiB with a Content-Length", () => {
  it("is 413 request_too_large, refused unread", async () => {
    const { org, key } = await orgWithKey();
    const res = await SELF.fetch(`${BASE}/v1/assess`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: assessOfSize(MAX_BODY_BYTES + 1),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(TOO_LARGE);
    expect(await assessments(org.id)).toBe(0);
  });
});
