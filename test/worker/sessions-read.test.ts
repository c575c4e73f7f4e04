import { describe, expect, it } from "vitest";
import { call, callRaw, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent, registerKey } from "./support/identity";
import {
  appendEvents,
  assessOnce,
  buildChain,
  createSession,
  entriesOf,
  hashEvent,
  isoDate,
  relink,
  setup,
  type WireEvent,
  ZERO,
} from "./support/sessions";

// Reading agent sessions, and re-verifying the stored rows.

describe("reading sessions", () => {
  it("shows the verification and the assessments the events link", async () => {
    const { org, agent, owner } = await setup();
    const first = await assessOnce(org);
    const second = await assessOnce(org);
    const events = await buildChain(owner, [
      { assessment_id: first },
      {},
      { assessment_id: second },
      { assessment_id: first },
    ]);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    expect(created.status).toBe(201);
    const res = await call(`/v1/sessions/${created.json.id}`, { token: org.token });
    expect(res.status).toBe(200);
    const assessed = await ownerSql`select id, decision, risk_score, created_at from assessments
      where org_id = ${org.id} order by id desc`;
    expect(res.json).toEqual({
      ...created.json,
      verification: {
        status: "verified",
        basis: "ingestion",
        events: 4,
        signed_events: 0,
        head: { sequence: 4, hash: events[3]?.hash },
        verified_at: created.json.created,
        verify_url: `/v1/sessions/${created.json.id}/verify`,
      },
      assessments: assessed.map((a) => ({
        id: a.id,
        decision: a.decision,
        risk_score: a.risk_score,
        created: new Date(a.created_at).toISOString(),
      })),
    });
    expect(res.json.assessments.map((a: { id: string }) => a.id)).toEqual([second, first]);
  });

  it("refuses to link a live assessment from a test-mode session", async () => {
    const { org, agent, owner } = await setup();
    const live = await assessOnce(org);
    const { key } = await org.key(["session:write"], "test");
    const events = await buildChain(owner, [{ assessment_id: live }]);
    const res = await createSession(
      org,
      { agent_id: agent.id, external_id: owner.externalId, events },
      key,
    );
    expect(res.status).toBe(400);
    expect(res.error.details).toEqual([
      {
        path: "events.0.assessment_id",
        message: "no such assessment in this organization and mode",
      },
    ]);
  });

  it("pages events in chain order with every field", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: (i) => (i === 0 ? pair : null) }, 5);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const path = `/v1/sessions/${created.json.id}/events` as const;
    const first = await call(`${path}?limit=2`, { token: org.token });
    expect(first.status).toBe(200);
    expect(first.json.data[0]).toEqual({
      object: "session_event",
      session_id: created.json.id,
      ...events[0],
      assessment_id: null,
      kid: pair.kid,
      received_at: expect.stringMatching(isoDate),
      livemode: true,
      audit: created.json.audit,
    });
    // The database's clock (as revocations are), near the Worker's that dated the session.
    const skew = Date.parse(first.json.data[0]!.received_at) - Date.parse(created.json.created);
    expect(Math.abs(skew)).toBeLessThan(5000);
    const seen = [...first.json.data];
    let cursor = first.json.next_cursor;
    while (cursor) {
      const next = await call(`${path}?limit=2&cursor=${cursor}`, { token: org.token });
      seen.push(...next.json.data);
      cursor = next.json.next_cursor;
    }
    expect(seen.map((e) => [e.sequence, e.hash])).toEqual(events.map((e) => [e.sequence, e.hash]));
  });

  it("lists sessions newest first, filtered by agent and external id, in the caller's mode", async () => {
    const { org, agent, owner } = await setup();
    const other = await newAgent(org);
    const a = await createSession(org, { agent_id: agent.id, external_id: owner.externalId });
    const b = await createSession(org, { agent_id: other.id, external_id: owner.externalId });
    const { key } = await org.key(["session:write", "audit:read"], "test");
    const c = await createSession(org, { agent_id: agent.id, external_id: "test-run" }, key);
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    const all = await call("/v1/sessions", { token: org.token });
    expect(all.json.data.map((s: { id: string }) => s.id)).toEqual([b.json.id, a.json.id]);
    const byAgent = await call(`/v1/sessions?agent_id=${agent.id}`, { token: org.token });
    expect(byAgent.json.data.map((s: { id: string }) => s.id)).toEqual([a.json.id]);
    const byName = await call(`/v1/sessions?external_id=${owner.externalId}&limit=1`, {
      token: org.token,
    });
    expect(byName.json).toMatchObject({ has_more: true, data: [{ id: b.json.id }] });
    const test = await call("/v1/sessions", { key });
    expect(test.json.data.map((s: { id: string }) => s.id)).toEqual([c.json.id]);
    expect(test.json.data[0]!.livemode).toBe(false);
  });

  it("lists only the caller's org: another org's session is not in it", async () => {
    const mine = await setup();
    const theirs = await setup();
    const own = await createSession(mine.org, {
      agent_id: mine.agent.id,
      external_id: mine.owner.externalId,
    });
    // The same external id in another org is another org's session.
    const other = await createSession(theirs.org, {
      agent_id: theirs.agent.id,
      external_id: mine.owner.externalId,
    });
    expect([own.status, other.status]).toEqual([201, 201]);
    const list = await call("/v1/sessions", { token: mine.org.token });
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      object: "list",
      data: [own.json],
      has_more: false,
      next_cursor: null,
    });
    const byName = await call(`/v1/sessions?external_id=${mine.owner.externalId}`, {
      token: mine.org.token,
    });
    expect(byName.json.data.map((s: { id: string }) => s.id)).toEqual([own.json.id]);
    const byTheirAgent = await call(`/v1/sessions?agent_id=${theirs.agent.id}`, {
      token: mine.org.token,
    });
    expect(byTheirAgent.json.data).toEqual([]);
  });

  it.each([
    ["/v1/sessions", "agent=x"],
    ["/v1/sessions/{id}/events", "after=1"],
  ])("answers 400 invalid_request naming an unknown parameter of GET %s", async (route, query) => {
    const { org, agent, owner } = await setup();
    const created = await createSession(org, { agent_id: agent.id, external_id: owner.externalId });
    const path = route.replace("{id}", created.json.id);
    const res = await callRaw(`${path}?${query}`, { token: org.token });
    expect(res.status).toBe(400);
    const name = query.split("=")[0];
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: "", message: `Unrecognized key: "${name}"`, code: "unrecognized_keys" },
      ]),
    );
  });
});

describe("GET /v1/sessions/{id}/verify", () => {
  async function signedSession(count = 4) {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: pair }, count);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    expect(res.status).toBe(201);
    return { org, agent, owner, pair, events, id: res.json.id as string };
  }

  function verify(org: TestOrg, id: string) {
    return call(`/v1/sessions/${id}/verify`, { token: org.token });
  }

  it("reports an intact session ok", async () => {
    const { org, events, id } = await signedSession();
    const res = await verify(org, id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "session_verification",
      session_id: id,
      ok: true,
      checked: 4,
      signed_events: 4,
      head: { sequence: 4, hash: events[3]?.hash },
      first_break: null,
      verified_at: expect.stringMatching(isoDate),
      livemode: true,
    });
  });

  it("still verifies events signed by a key revoked after they were received", async () => {
    const { org, agent, pair, id } = await signedSession(2);
    const revoked = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(revoked.status).toBe(200);
    expect((await verify(org, id)).json).toMatchObject({ ok: true, first_break: null });
  });

  it("finds a row changed in the database at its sequence", async () => {
    const { org, owner, events, id } = await signedSession();
    const digest = `sha256:${"99".repeat(32)}`;
    await ownerSql`update session_events set payload_digest = ${digest}
      where session_id = ${id} and sequence = 3`;
    const res = await verify(org, id);
    expect(res.json).toMatchObject({ ok: false, checked: 4 });
    expect(res.json.first_break).toEqual({
      sequence: 3,
      index: 2,
      reason: "hash_mismatch",
      expected: await hashEvent(owner, { ...(events[2] as WireEvent), payload_digest: digest }),
      actual: events[2]?.hash,
    });
  });

  it("finds a stored signature swapped for another event's", async () => {
    const { org, events, id } = await signedSession();
    await ownerSql`update session_events set signature = ${events[0]?.signature}
      where session_id = ${id} and sequence = 2`;
    const res = await verify(org, id);
    expect(res.json.first_break).toEqual({ sequence: 2, index: 1, reason: "signature_invalid" });
  });

  it("finds a rewrite that recomputed every hash, by the ledger's digest of the batch", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 3);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const id = created.json.id as string;
    const forged = await relink(
      owner,
      events.map((e, i) => (i === 1 ? { ...e, payload_digest: `sha256:${"77".repeat(32)}` } : e)),
      1,
    );
    for (const event of forged.slice(1)) {
      await ownerSql`update session_events set payload_digest = ${event.payload_digest},
        prev_hash = ${event.prev_hash}, hash = ${event.hash}
        where session_id = ${id} and sequence = ${event.sequence}`;
    }
    await ownerSql`update sessions set head_hash = ${forged[2]?.hash} where id = ${id}`;
    const [entry] = await entriesOf(org, "session.created");
    const res = await verify(org, id);
    expect(res.json.first_break).toEqual({
      sequence: 1,
      index: 0,
      reason: "ledger_mismatch",
      expected: { audit_sequence: Number(entry?.sequence), digest: entry?.digest },
      actual: {
        audit_sequence: Number(entry?.sequence),
        digest: expect.stringMatching(/^sha256:/),
      },
    });
    expect((res.json.first_break!.actual as { digest: string }).digest).not.toBe(entry?.digest);
  });

  it("finds a dropped tail by the head the session row holds", async () => {
    const { org, events, id } = await signedSession();
    await ownerSql`delete from session_events where session_id = ${id} and sequence = 4`;
    const res = await verify(org, id);
    expect(res.json.first_break).toEqual({
      sequence: 4,
      index: 3,
      reason: "head_mismatch",
      expected: { sequence: 4, hash: events[3]?.hash },
      actual: { sequence: 3, hash: events[2]?.hash },
    });
  });

  it("finds a dropped middle event as missing", async () => {
    const { org, id } = await signedSession();
    await ownerSql`delete from session_events where session_id = ${id} and sequence = 2`;
    const res = await verify(org, id);
    expect(res.json.first_break).toEqual({
      sequence: 2,
      index: 1,
      reason: "missing_event",
      expected: 2,
      actual: 3,
    });
  });

  it("covers appended batches with their own ledger entries", async () => {
    const { org, owner, pair, events, id } = await signedSession(2);
    const head = { sequence: 2, hash: events[1]?.hash as string };
    const batch = await buildChain({ ...owner, after: head, signer: pair }, 2);
    expect((await appendEvents(org, id, batch)).status).toBe(201);
    expect((await verify(org, id)).json).toMatchObject({ ok: true, checked: 4, signed_events: 4 });
    await ownerSql`update session_events set time = '2026-05-05T00:00:00Z'
      where session_id = ${id} and sequence = 4`;
    expect((await verify(org, id)).json.first_break).toMatchObject({
      sequence: 4,
      index: 3,
      reason: "hash_mismatch",
    });
  });
});

describe("the other mode", () => {
  it.each(["", "/events", "/verify"])(
    "answers 404 to GET /v1/sessions/{id}%s of a live session with a test key",
    async (suffix) => {
      const { org, agent, owner } = await setup();
      const created = await createSession(org, {
        agent_id: agent.id,
        external_id: owner.externalId,
      });
      const { key } = await org.key(["audit:read"], "test");
      const res = await call(`/v1/sessions/${created.json.id}${suffix}`, { key });
      expect(res.status).toBe(404);
      expect(res.error).toEqual(errorBody("not_found"));
    },
  );
});

describe("an auditor offline", () => {
  // Written from the documented contract with WebCrypto alone: a flat-object RFC 8785 form
  // (sorted keys, JSON.stringify values), SHA-256, and Ed25519 over the JWS signing input.
  function jcsFlat(object: Record<string, unknown>): string {
    const keys = Object.keys(object).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(object[k])}`).join(",")}}`;
  }

  function b64url(bytes: Uint8Array): string {
    return btoa(String.fromCharCode(...bytes))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
  }

  function unb64url(text: string): Uint8Array {
    const standard = text.replaceAll("-", "+").replaceAll("_", "/");
    return Uint8Array.from(atob(standard + "=".repeat((4 - (standard.length % 4)) % 4)), (c) =>
      c.charCodeAt(0),
    );
  }

  it("re-verifies the exported chain and every signature from the API's answers alone", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const assessment = await assessOnce(org);
    const events = await buildChain({ ...owner, signer: pair }, [
      {},
      { assessment_id: assessment },
      {},
    ]);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const session = (await call(`/v1/sessions/${created.json.id}`, { token: org.token })).json;
    const exported = (await call(`/v1/sessions/${session.id}/events`, { token: org.token })).json;
    const keys = (await call(`/v1/agents/${agent.id}/keys`, { token: org.token })).json;
    const { kty, crv, x } = keys.data.find((k: { id: string }) => k.id === pair.kid)!.jwk;
    const publicKey = await crypto.subtle.importKey(
      "jwk",
      { kty: kty!, crv, x },
      { name: "Ed25519" },
      false,
      ["verify"],
    );
    let prev = ZERO;
    for (const event of exported.data) {
      const chainedEvent: Record<string, unknown> = {
        v: 1,
        session: session.external_id,
        agent: session.agent_id,
        livemode: session.livemode,
        sequence: event.sequence,
        type: event.type,
        time: event.time,
        payload_digest: event.payload_digest,
        prev_hash: event.prev_hash,
        ...(event.assessment_id ? { assessment_id: event.assessment_id } : {}),
      };
      const canonical = new TextEncoder().encode(jcsFlat(chainedEvent));
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", canonical));
      const hash = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
      expect([event.prev_hash, event.hash]).toEqual([prev, hash]);
      const [header, empty, signature] = event.signature!.split(".");
      expect(empty).toBe("");
      expect(JSON.parse(new TextDecoder().decode(unb64url(header!)))).toMatchObject({
        kid: event.kid,
      });
      const input = new TextEncoder().encode(`${header}.${b64url(canonical)}`);
      const valid = await crypto.subtle.verify("Ed25519", publicKey, unb64url(signature!), input);
      expect(valid).toBe(true);
      prev = hash;
    }
    expect(session.head).toEqual({ sequence: 3, hash: prev });
    expect(session.assessments.map((a: { id: string }) => a.id)).toEqual([assessment]);
  });
});
