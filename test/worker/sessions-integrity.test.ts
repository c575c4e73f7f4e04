import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { ledgerOf } from "../../src/ledger/ledger";
import { call, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { type AgentKeyPair, registerKey } from "./support/identity";
import { ledger } from "./support/ledger";
import {
  appendEvents,
  buildChain,
  createSession,
  entriesOf,
  expectBreak,
  type Owner,
  recordDiedBatch,
  setup,
  sha256Hex,
  signEvent,
  storedCount,
  storedSessions,
  storedState,
  type WireEvent,
} from "./support/sessions";

// What the review of agent sessions found, each pinned down: the ledger covers whole batches
// and signatures, revoked agents, the mode in the chain, malformed headers, consecutive
// batches, cursors.

const b64 = (text: string) =>
  btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

function verify(org: TestOrg, id: string) {
  return call(`/v1/sessions/${id}/verify`, { token: org.token });
}

async function signedSession(count: number, alg?: AgentKeyPair["alg"]) {
  const { org, agent, owner } = await setup();
  const pair = await registerKey(org, agent.id, alg);
  const events = await buildChain({ ...owner, signer: pair }, count);
  const res = await createSession(org, {
    agent_id: agent.id,
    external_id: owner.externalId,
    events,
  });
  expect(res.status).toBe(201);
  return { org, agent, owner, pair, events, id: res.json.id as string };
}

/** A session whose first (only) event carries this protected header and a junk signature. */
async function withHeader(header: (kid: string) => Record<string, unknown>) {
  const { org, agent, owner } = await setup();
  const pair = await registerKey(org, agent.id);
  const [event] = await buildChain(owner, 1);
  const signature = `${b64(JSON.stringify(header(pair.kid)))}..c2ln`;
  const res = await createSession(org, {
    agent_id: agent.id,
    external_id: owner.externalId,
    events: [{ ...(event as WireEvent), signature }],
  });
  return { org, res };
}

describe("/verify against the ledger", () => {
  it("finds a whole last batch deleted with the head rolled back: missing_batch", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const id = created.json.id as string;
    const head = { sequence: 2, hash: events[1]?.hash as string };
    expect(
      (await appendEvents(org, id, await buildChain({ ...owner, after: head }, 3))).status,
    ).toBe(201);
    const [entry] = await entriesOf(org, "session.events_appended");
    await ownerSql`delete from session_events where session_id = ${id} and sequence > 2`;
    await ownerSql`update sessions set head_sequence = 2, head_hash = ${head.hash},
      audit_sequence = created_audit_sequence, audit_entry_id = created_audit_entry_id
      where id = ${id}`;
    const res = await verify(org, id);
    expect(res.json).toMatchObject({ ok: false, checked: 2 });
    expect(res.json.first_break).toEqual({
      sequence: 3,
      index: 2,
      reason: "missing_batch",
      expected: { audit_sequence: Number(entry?.sequence), digest: entry?.digest },
      actual: null,
    });
  });

  it("finds a session row that does not name its latest ledger entry", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const id = created.json.id as string;
    const batch = await buildChain(
      { ...owner, after: { sequence: 2, hash: events[1]?.hash as string } },
      1,
    );
    expect((await appendEvents(org, id, batch)).status).toBe(201);
    const [entry] = await entriesOf(org, "session.events_appended");
    await ownerSql`update sessions set audit_sequence = created_audit_sequence where id = ${id}`;
    expect((await verify(org, id)).json.first_break).toEqual({
      sequence: 4,
      index: 3,
      reason: "ledger_mismatch",
      expected: { audit_sequence: Number(entry?.sequence) },
      actual: { audit_sequence: created.json.audit.sequence },
    });
  });

  it("finds signatures stripped in the database, by the count and then by the ledger", async () => {
    const { org, id } = await signedSession(3);
    await ownerSql`update session_events set signature = null, key_id = null
      where session_id = ${id}`;
    expect((await verify(org, id)).json).toMatchObject({
      ok: false,
      signed_events: 0,
      first_break: {
        sequence: 3,
        index: 2,
        reason: "signed_events_mismatch",
        expected: 3,
        actual: 0,
      },
    });
    // The session row's count rewritten too: the ledger entry recorded three signed events.
    await ownerSql`update sessions set signed_events = 0 where id = ${id}`;
    const [entry] = await entriesOf(org, "session.created");
    expect((await verify(org, id)).json.first_break).toMatchObject({
      sequence: 1,
      index: 0,
      reason: "ledger_mismatch",
      expected: { audit_sequence: Number(entry?.sequence), digest: entry?.digest },
    });
  });

  it("records the signed count and the key ids in the ledger payloads", async () => {
    const { org, agent, owner, pair, events, id } = await signedSession(2);
    const second = await registerKey(org, agent.id);
    const head = { sequence: 2, hash: events[1]?.hash as string };
    const batch = await buildChain(
      { ...owner, after: head, signer: (i) => [second, null, pair][i] ?? null },
      3,
    );
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ events: 5, signed_events: 4 });
    const [entry] = await entriesOf(org, "session.events_appended");
    const payload = {
      object: "session_events",
      session_id: id,
      from: 3,
      to: 5,
      prev_hash: head.hash,
      head_hash: batch[2]?.hash,
      signed_events: 2,
      key_ids: [pair.kid, second.kid].sort(),
    };
    expect(entry?.digest).toBe(`sha256:${await sha256Hex(canonicalize(payload))}`);
    expect((await verify(org, id)).json).toMatchObject({ ok: true, signed_events: 4 });
  });

  it("reports a recorded key id changed to another key of the agent as key_mismatch", async () => {
    const { org, agent, pair, id } = await signedSession(3);
    const other = await registerKey(org, agent.id);
    await ownerSql`update session_events set key_id = ${other.kid}
      where session_id = ${id} and sequence >= 2`;
    expect((await verify(org, id)).json.first_break).toEqual({
      sequence: 2,
      index: 1,
      reason: "key_mismatch",
      expected: other.kid,
      actual: pair.kid,
    });
  });

  it("verifies an ES256-signed session", async () => {
    const { org, id } = await signedSession(3, "ES256");
    expect((await verify(org, id)).json).toMatchObject({
      ok: true,
      checked: 3,
      signed_events: 3,
      first_break: null,
    });
  });
});

describe("a revoked agent", () => {
  async function revoke(org: TestOrg, agentId: string) {
    const res = await call(`/v1/agents/${agentId}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "revoked" },
    });
    expect(res.status).toBe(200);
  }

  it("cannot sign: its still-active keys are refused as agent_revoked, nothing stored", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    await revoke(org, agent.id);
    const events = await buildChain({ ...owner, signer: pair }, 2);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: true,
      events,
    });
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "agent_revoked",
      actual: agent.id,
    });
  });

  it("may still file unsigned evidence", async () => {
    const { org, agent, owner } = await setup();
    await revoke(org, agent.id);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 1),
    });
    expect(res.status).toBe(201);
  });

  it("keeps what it signed before its revocation verified, not what came after", async () => {
    const { org, agent, id } = await signedSession(2);
    await revoke(org, agent.id);
    expect((await verify(org, id)).json).toMatchObject({ ok: true, first_break: null });
    // A revocation dated before the events' receipt.
    await ownerSql`update agents set revoked_at = '2020-01-01T00:00:00Z' where id = ${agent.id}`;
    expect((await verify(org, id)).json.first_break).toEqual({
      sequence: 1,
      index: 0,
      reason: "agent_revoked",
      actual: agent.id,
    });
  });

  it("with a key revoked before the event's receipt, /verify reports key_revoked", async () => {
    const { org, pair, id } = await signedSession(2);
    await ownerSql`update agent_keys set status = 'revoked', revoked_at = '2020-01-01T00:00:00Z'
      where thumbprint = ${pair.kid}`;
    expect((await verify(org, id)).json.first_break).toEqual({
      sequence: 1,
      index: 0,
      reason: "key_revoked",
      actual: pair.kid,
    });
  });
});

describe("the mode is part of the chain", () => {
  it("refuses a live chain replayed as a test-mode session", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: pair }, 2);
    const body = {
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: true,
      events,
    };
    expect((await createSession(org, body)).status).toBe(201);
    const before = await storedState(org);
    const { key } = await org.key(["session:write"], "test");
    const replayed = await createSession(org, body, key);
    const asTest = await buildChain({ ...owner, livemode: false }, 1);
    await expectBreak(
      replayed,
      org,
      {
        sequence: 1,
        index: 0,
        reason: "hash_mismatch",
        expected: asTest[0]?.hash,
        actual: events[0]?.hash,
      },
      before,
    );
  });

  it("accepts a chain built for test mode from a test key", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const testOwner: Owner = { ...owner, livemode: false };
    const events = await buildChain({ ...testOwner, signer: pair }, 2);
    const { key } = await org.key(["session:write"], "test");
    const res = await createSession(
      org,
      { agent_id: agent.id, external_id: owner.externalId, events },
      key,
    );
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ livemode: false, events: 2, signed_events: 2 });
  });
});

describe("malformed and refused signature headers", () => {
  it.each([
    [
      "crit",
      (kid: string) => ({ alg: "EdDSA", kid, crit: ["exp"], exp: 1 }),
      { members: ["crit", "exp"] },
    ],
    [
      "jku",
      (kid: string) => ({ alg: "EdDSA", kid, jku: "https://evil.example/jwks" }),
      { members: ["jku"] },
    ],
    ["alg none", (kid: string) => ({ alg: "none", kid }), { alg: "none" }],
    ["alg HS256", (kid: string) => ({ alg: "HS256", kid }), { alg: "HS256" }],
    ["alg ES384", (kid: string) => ({ alg: "ES384", kid }), { alg: "ES384" }],
    ["a NUL in kid", () => ({ alg: "EdDSA", kid: "a\u0000b" }), { kid: "a\u0000b" }],
    ["a kid that is no thumbprint", () => ({ alg: "EdDSA", kid: "key-1" }), { kid: "key-1" }],
  ])("refuses %s as signature_malformed", async (_, header, actual) => {
    const { org, res } = await withHeader(header);
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "signature_malformed",
      actual: expect.objectContaining(actual),
    });
  });

  it("refuses a protected header longer than 512 characters", async () => {
    const { org, res } = await withHeader((kid) => ({ alg: "EdDSA", kid, typ: "x".repeat(400) }));
    await expectBreak(res, org, { sequence: 1, index: 0, reason: "signature_malformed" });
  });

  it("refuses a NUL kid at its position, after a valid event", async () => {
    const { org, agent, owner } = await setup();
    const [first, second] = await buildChain(owner, 2);
    const signature = `${b64(JSON.stringify({ alg: "EdDSA", kid: "a\u0000b" }))}..c2ln`;
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: [first as WireEvent, { ...(second as WireEvent), signature }],
    });
    await expectBreak(res, org, {
      sequence: 2,
      index: 1,
      reason: "signature_malformed",
      actual: { kid: "a\u0000b" },
    });
  });

  it("accepts typ in the header", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const [event] = await buildChain(owner, 1);
    const signature = await signEvent(owner, event as WireEvent, pair, { typ: "session-event" });
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: [{ ...(event as WireEvent), signature }],
    });
    expect(res.status).toBe(201);
    expect(res.json.signed_events).toBe(1);
  });

  it("refuses another org's key as unknown_key and another org's agent as no such agent", async () => {
    const { org, agent, owner } = await setup();
    const other = await setup();
    const pair = await registerKey(other.org, other.agent.id);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain({ ...owner, signer: pair }, 1),
    });
    await expectBreak(res, org, { sequence: 1, index: 0, reason: "unknown_key", actual: pair.kid });
    const foreign = await createSession(org, {
      agent_id: other.agent.id,
      external_id: owner.externalId,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toEqual(
      errorBody("invalid_request", [{ path: "agent_id", message: "no such agent" }]),
    );
  });
});

describe("retries and replays must match exactly", () => {
  async function threeEvents() {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 3);
    const body = { agent_id: agent.id, external_id: owner.externalId, events };
    const created = await createSession(org, body);
    expect(created.status).toBe(201);
    return { org, body, events, id: created.json.id as string };
  }

  it("a creation retry with fewer events is another session: 409", async () => {
    const { org, body, id } = await threeEvents();
    for (const events of [[], body.events.slice(0, 2)]) {
      const res = await createSession(org, { ...body, events });
      expect(res.status).toBe(409);
      expect(res.error).toEqual(errorBody("session_exists", { id }));
    }
    expect((await createSession(org, body)).status).toBe(200);
  });

  it("a batch repeating one event is a sequence gap at its second position", async () => {
    const { org, body, events, id } = await threeEvents();
    const before = await storedState(org);
    const e1 = events[0] as WireEvent;
    const e2 = events[1] as WireEvent;
    const expected = { sequence: 1, index: 1, reason: "sequence_gap", expected: 2, actual: 1 };
    await expectBreak(
      await createSession(org, { ...body, events: [e1, e1, e1] }),
      org,
      expected,
      before,
    );
    await expectBreak(
      await appendEvents(org, id, [e2, e2, e2]),
      org,
      { sequence: 2, index: 1, reason: "sequence_gap", expected: 3, actual: 2 },
      before,
    );
  });
});

describe("appending signed events", () => {
  it("appends a signed batch and counts it", async () => {
    const { org, owner, pair, events, id } = await signedSession(2);
    const batch = await buildChain(
      { ...owner, after: { sequence: 2, hash: events[1]?.hash as string }, signer: pair },
      2,
    );
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ events: 4, signed_events: 4 });
    const stored = await ownerSql`select sequence, key_id from session_events
      where session_id = ${id} order by sequence`;
    expect(stored.map((r) => r.key_id)).toEqual([pair.kid, pair.kid, pair.kid, pair.kid]);
  });

  it("refuses an unsigned event in an append to a session that requires signatures", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: pair }, 1);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: true,
      events,
    });
    const before = await storedState(org);
    const batch = await buildChain(
      {
        ...owner,
        after: { sequence: 1, hash: events[0]?.hash as string },
        signer: (i) => (i === 0 ? pair : null),
      },
      2,
    );
    const res = await appendEvents(org, created.json.id, batch);
    await expectBreak(res, org, { sequence: 3, index: 1, reason: "signature_required" }, before);
  });
});

describe("the events cursor", () => {
  it("answers 400 invalid_cursor past the largest sequence, never 500", async () => {
    const { org, agent, owner } = await setup();
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 1),
    });
    const path = `/v1/sessions/${created.json.id}/events` as const;
    for (const cursor of ["2147483648", "10001", "9999999999999999"]) {
      const res = await call(`${path}?cursor=${b64(cursor)}`, { token: org.token });
      expect(res.status).toBe(400);
      expect(res.json).toEqual(
        errorBody("invalid_cursor", [{ path: "cursor", message: "not a cursor from this API" }]),
      );
    }
    const last = await call(`${path}?cursor=${b64("10000")}`, { token: org.token });
    expect(last.status).toBe(200);
    expect(last.json).toEqual({ object: "list", data: [], has_more: false, next_cursor: null });
    expect(await storedCount(org)).toBe(1);
  });
});

/** What the ledger object's 24-hour sweep does to the drafts it holds. */
async function expireDrafts(org: TestOrg) {
  await runInDurableObject(ledger(org.id), (_, state) => {
    state.storage.sql.exec("delete from attachments");
  });
}

describe("a write that died and whose draft the ledger object no longer holds (after 24 hours)", () => {
  // The entry a request hands the ledger object before writing, without the draft it keeps
  // for 24 hours: what a retry finds once that draft expired.
  async function diedLongAgo(org: TestOrg, id: string, events: WireEvent[]) {
    const recorded = await recordDiedBatch(org, id, events);
    await expireDrafts(org);
    return recorded;
  }

  async function twoEvents() {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const head = { sequence: 2, hash: events[1]?.hash as string };
    return { org, owner, head, id: created.json.id as string };
  }

  it("is finished by the very batch the entry recorded, and /verify then holds", async () => {
    const { org, owner, head, id } = await twoEvents();
    const batch = await buildChain({ ...owner, after: head }, 2);
    const { entry } = await diedLongAgo(org, id, batch);
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      events: 4,
      audit: { entry_id: entry.id, sequence: entry.sequence },
    });
    expect((await verify(org, id)).json).toMatchObject({ ok: true, checked: 4 });
  });

  it("refuses any other batch with 409 at the head where the missing batch starts", async () => {
    const { org, owner, head, id } = await twoEvents();
    const { entry } = await diedLongAgo(org, id, await buildChain({ ...owner, after: head }, 2));
    const other = await buildChain({ ...owner, after: head, start: 0 }, 1);
    const res = await appendEvents(org, id, other);
    expect(res.status).toBe(409);
    expect(res.error.details.head).toEqual(head);
    expect(await storedCount(org)).toBe(2);
    // Once the ledger object has flushed the entry, /verify names the entry without rows.
    await runDurableObjectAlarm(ledger(org.id));
    expect((await verify(org, id)).json.first_break).toEqual({
      sequence: 3,
      index: 2,
      reason: "missing_batch",
      expected: { audit_sequence: entry.sequence, digest: entry.digest },
      actual: null,
    });
  });

  it("keeps a creation's name taken: 409 session_exists naming the id", async () => {
    const { org, agent, owner } = await setup();
    const id = crypto.randomUUID();
    await ledgerOf(env, org.id).appendDeferred(org.id, {
      type: "session.created",
      actor: { type: "user", id: "died" },
      subject: { type: "session", id },
      digest: `sha256:${"ab".repeat(32)}`,
      once: [`session.created:live:${agent.id}:${owner.externalId}`],
      attachment: "{}",
    });
    await expireDrafts(org);
    const res = await createSession(org, { agent_id: agent.id, external_id: owner.externalId });
    expect(res.status).toBe(409);
    expect(res.error).toEqual(errorBody("session_exists", { id }));
    expect(await storedSessions(org)).toBe(0);
  });
});
