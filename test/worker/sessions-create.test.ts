import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { ledgerOf } from "../../src/ledger/ledger";
import { call, newOrg, type TestOrg } from "./support/api";
import { errorBody } from "./support/errors";
import { keyPair, newAgent, registerKey } from "./support/identity";
import {
  appendEvents,
  assessOnce,
  buildChain,
  createSession,
  createSessionRaw,
  entriesOf,
  expectBreak,
  flipOneCharacter,
  hashEvent,
  isoDate,
  relink,
  setup,
  sha256Hex,
  signEvent,
  storedCount,
  uuid,
  type WireEvent,
  ZERO,
} from "./support/sessions";

// Creating agent sessions (docs/sessions.md#post-v1sessions): the chain checks, retries, races.

describe("POST /v1/sessions", () => {
  it("stores a valid unsigned chain: 201, the session, its events and its ledger entry", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, [
      { type: "message" },
      { type: "tool_call" },
      { type: "tool_result" },
    ]);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      metadata: { run: "nightly" },
      events,
    });
    expect(res.status).toBe(201);
    const [entry, ...more] = await entriesOf(org, "session.created");
    expect(more).toEqual([]);
    expect(res.json).toEqual({
      object: "session",
      id: expect.stringMatching(uuid),
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: false,
      metadata: { run: "nightly" },
      events: 3,
      signed_events: 0,
      head: { sequence: 3, hash: events[2]?.hash },
      created: expect.stringMatching(isoDate),
      updated: res.json.created,
      livemode: true,
      audit: { entry_id: entry?.id, sequence: Number(entry?.sequence) },
    });
    // The entry's digest is of the documented payload, rebuilt here from the response.
    const payload = {
      object: "session",
      id: res.json.id,
      agent_id: agent.id,
      external_id: owner.externalId,
      livemode: true,
      require_signatures: false,
      metadata: { run: "nightly" },
      created: res.json.created,
      events: 3,
      head_hash: events[2]?.hash,
      signed_events: 0,
      key_ids: [],
    };
    expect(entry?.subject_id).toBe(res.json.id);
    expect(entry?.digest).toBe(`sha256:${await sha256Hex(canonicalize(payload))}`);
    expect(await storedCount(org)).toBe(3);
  });

  it("starts an empty session, head null", async () => {
    const { org, agent, owner } = await setup();
    const res = await createSession(org, { agent_id: agent.id, external_id: owner.externalId });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ events: 0, signed_events: 0, head: null, metadata: {} });
  });

  it("stores a chain signed with an Ed25519 agent key", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id, "EdDSA");
    const events = await buildChain({ ...owner, signer: pair }, 3);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: true,
      events,
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ events: 3, signed_events: 3, require_signatures: true });
    const listed = await call(`/v1/sessions/${res.json.id}/events`, { token: org.token });
    expect(listed.json.data.map((e: any) => [e.sequence, e.kid, e.signature])).toEqual(
      events.map((e) => [e.sequence, pair.kid, e.signature]),
    );
  });

  it("stores a chain signed with a P-256 (ES256) agent key, mixed with unsigned events", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id, "ES256");
    const events = await buildChain({ ...owner, signer: (i) => (i === 1 ? null : pair) }, 3);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ events: 3, signed_events: 2 });
  });

  it("refuses a broken link at position k: 422 at that sequence and index, nothing stored", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 5);
    const broken = events.map((e) => ({ ...e }));
    (broken[2] as WireEvent).prev_hash = "ee".repeat(32);
    const relinked = await relink(owner, broken, 2);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: relinked,
    });
    await expectBreak(res, org, {
      sequence: 3,
      index: 2,
      reason: "link_mismatch",
      expected: events[1]?.hash,
      actual: "ee".repeat(32),
    });
    expect(await entriesOf(org, "session.created")).toEqual([]);
  });

  it("refuses a tampered hash with the hash it should have been", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 4);
    const tampered = events.map((e, i) => (i === 1 ? { ...e, hash: "ab".repeat(32) } : e));
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: tampered,
    });
    await expectBreak(res, org, {
      sequence: 2,
      index: 1,
      reason: "hash_mismatch",
      expected: events[1]?.hash,
      actual: "ab".repeat(32),
    });
  });

  it("refuses an event whose payload digest changed after hashing", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 3);
    const changed = events.map((e, i) =>
      i === 2 ? { ...e, payload_digest: `sha256:${"12".repeat(32)}` } : e,
    );
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: changed,
    });
    await expectBreak(res, org, {
      sequence: 3,
      index: 2,
      reason: "hash_mismatch",
      expected: await hashEvent(owner, changed[2] as WireEvent),
      actual: events[2]?.hash,
    });
  });

  it("refuses a sequence gap", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 3);
    const gap = events.map((e, i) => (i === 2 ? { ...e, sequence: 4 } : e));
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: gap,
    });
    await expectBreak(res, org, {
      sequence: 4,
      index: 2,
      reason: "sequence_gap",
      expected: 3,
      actual: 4,
    });
  });

  it("refuses a chain that does not start at 1 from the zero hash", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain({ ...owner, after: { sequence: 0, hash: "11".repeat(32) } }, 2);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "link_mismatch",
      expected: ZERO,
      actual: "11".repeat(32),
    });
  });

  it.each([
    ["the signature of another event", (events: WireEvent[]) => events[2]?.signature as string],
    [
      "a signature with one character flipped",
      (events: WireEvent[]) => flipOneCharacter(events[3]?.signature as string),
    ],
  ])("refuses %s at position k", async (_, forge) => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: pair }, 5);
    const forged = events.map((e, i) => (i === 3 ? { ...e, signature: forge(events) } : e));
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: forged,
    });
    await expectBreak(res, org, { sequence: 4, index: 3, reason: "signature_invalid" });
  });

  it("refuses a signature by a revoked key", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const revoked = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(revoked.status).toBe(200);
    const events = await buildChain({ ...owner, signer: (i) => (i === 1 ? pair : null) }, 2);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    await expectBreak(res, org, { sequence: 2, index: 1, reason: "key_revoked", actual: pair.kid });
  });

  it("refuses a signature by another agent's key", async () => {
    const { org, agent, owner } = await setup();
    const other = await newAgent(org);
    const pair = await registerKey(org, other.id);
    const events = await buildChain({ ...owner, signer: pair }, 2);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "key_not_of_agent",
      expected: agent.id,
      actual: other.id,
    });
  });

  it("refuses a signature by a key nobody registered", async () => {
    const { org, agent, owner } = await setup();
    const pair = await keyPair();
    const events = await buildChain({ ...owner, signer: pair }, 1);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    await expectBreak(res, org, { sequence: 1, index: 0, reason: "unknown_key", actual: pair.kid });
  });

  it("refuses a signature whose alg is not the key's", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id, "ES256");
    const [event] = await buildChain(owner, 1);
    const signature = await signEvent(owner, event as WireEvent, pair, {
      alg: "ES256",
      kid: pair.kid,
    });
    // A header naming EdDSA over an ES256 key.
    const [, , sig] = signature.split(".");
    const header = btoa(JSON.stringify({ alg: "EdDSA", kid: pair.kid }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: [{ ...(event as WireEvent), signature: `${header}..${sig}` }],
    });
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "signature_invalid",
      expected: "ES256",
      actual: "EdDSA",
    });
  });

  it("refuses an unsigned event when the session requires signatures", async () => {
    const { org, agent, owner } = await setup();
    const pair = await registerKey(org, agent.id);
    const events = await buildChain({ ...owner, signer: (i) => (i === 1 ? null : pair) }, 3);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      require_signatures: true,
      events,
    });
    await expectBreak(res, org, { sequence: 2, index: 1, reason: "signature_required" });
  });

  it("answers a retry of the same creation with 200 and the stored session", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const body = { agent_id: agent.id, external_id: owner.externalId, events };
    const first = await createSession(org, body);
    const again = await createSession(org, body);
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.json).toEqual(first.json);
    expect(await entriesOf(org, "session.created")).toHaveLength(1);
  });

  it("answers 409 session_exists to another session under the same external id", async () => {
    const { org, agent, owner } = await setup();
    const first = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 2),
    });
    const other = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain({ ...owner, start: Date.parse("2026-04-01T00:00:00.000Z") }, 2),
    });
    expect(other.status).toBe(409);
    expect(other.error).toEqual(errorBody("session_exists", { id: first.json.id }));
  });

  it("creates exactly one session when the same creation races itself", async () => {
    const { org, agent, owner } = await setup();
    const body = {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 3),
    };
    const results = await Promise.all([createSession(org, body), createSession(org, body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(results[0]?.json.id).toBe(results[1]?.json.id);
    expect(await entriesOf(org, "session.created")).toHaveLength(1);
    expect(await storedCount(org)).toBe(3);
  });

  it("refuses an unknown agent, and an event linking an assessment it cannot see", async () => {
    const { org, agent, owner } = await setup();
    const noAgent = await createSession(org, {
      agent_id: crypto.randomUUID(),
      external_id: owner.externalId,
    });
    expect(noAgent.status).toBe(400);
    expect(noAgent.json).toEqual(
      errorBody("invalid_request", [{ path: "agent_id", message: "no such agent" }]),
    );
    const stranger = await newOrg();
    const foreign = await assessOnce(stranger);
    const events = await buildChain(owner, [{}, { assessment_id: foreign }]);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        {
          path: "events.1.assessment_id",
          message: "no such assessment in this organization and mode",
        },
      ]),
    );
  });

  it.each([
    ["an unknown field", (e: WireEvent) => ({ ...e, note: "x" }), "events.0"],
    [
      "a time without milliseconds",
      (e: WireEvent) => ({ ...e, time: "2026-03-01T10:00:01Z" }),
      "events.0.time",
    ],
    [
      "an uppercase hash",
      (e: WireEvent) => ({ ...e, hash: e.hash.toUpperCase() }),
      "events.0.hash",
    ],
    [
      "a bare hex payload digest",
      (e: WireEvent) => ({ ...e, payload_digest: "ab".repeat(32) }),
      "events.0.payload_digest",
    ],
    ["an unknown type", (e: WireEvent) => ({ ...e, type: "thought" }), "events.0.type"],
    ["an attached JWS", (e: WireEvent) => ({ ...e, signature: "a.b.c" }), "events.0.signature"],
  ])("answers 400 to %s", async (_, change, path) => {
    const { org, agent, owner } = await setup();
    const [event] = await buildChain(owner, 1);
    const res = await createSessionRaw(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: [change(event as WireEvent)],
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it("answers 400 to a batch of 501 events", async () => {
    const { org, agent, owner } = await setup();
    const [event] = await buildChain(owner, 1);
    const res = await createSessionRaw(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: Array.from({ length: 501 }, () => event),
    });
    expect(res.status).toBe(400);
    expect(res.error.details).toEqual([expect.objectContaining({ path: "events" })]);
  });
});

describe("a creation whose request died after the ledger object recorded it", () => {
  async function diedAfterCreate(
    org: TestOrg,
    body: { agent_id: string; external_id: string; events: WireEvent[] },
  ) {
    const facts = {
      id: crypto.randomUUID(),
      agentId: body.agent_id,
      externalId: body.external_id,
      livemode: true,
      requireSignatures: false,
      metadata: {},
      createdAt: new Date().toISOString(),
    };
    await ledgerOf(env, org.id).appendDeferred(org.id, {
      type: "session.created",
      actor: { type: "user", id: "died" },
      subject: { type: "session", id: facts.id },
      digest: `sha256:${"ab".repeat(32)}`,
      once: [`session.created:live:${body.agent_id}:${body.external_id}`],
      attachment: JSON.stringify({ facts, events: body.events }),
    });
    return facts.id;
  }

  it("is finished by its retry, which answers 201 (it stored it) with that session", async () => {
    const { org, agent, owner } = await setup();
    const body = {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 2),
    };
    const id = await diedAfterCreate(org, body);
    const res = await createSession(org, body);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ id, events: 2 });
    expect(await storedCount(org)).toBe(2);
    const again = await createSession(org, body);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
  });

  it("is finished by another creation under its name, which gets 409 naming it", async () => {
    const { org, agent, owner } = await setup();
    const body = {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: await buildChain(owner, 2),
    };
    const id = await diedAfterCreate(org, body);
    const other = await buildChain({ ...owner, start: 0 }, 1);
    const res = await createSession(org, { ...body, events: other });
    expect(res.status).toBe(409);
    expect(res.error).toEqual(errorBody("session_exists", { id }));
    expect(await storedCount(org)).toBe(2);
  });
});

describe("retrying a creation after the session grew", () => {
  it("still answers 200: the retried events are the session's first ones", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const body = { agent_id: agent.id, external_id: owner.externalId, events };
    const created = await createSession(org, body);
    const more = await buildChain(
      { ...owner, after: { sequence: 2, hash: events[1]?.hash as string } },
      1,
    );
    expect((await appendEvents(org, created.json.id, more)).status).toBe(201);
    const retry = await createSession(org, body);
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({ id: created.json.id, events: 3 });
  });
});

describe("malformed signatures", () => {
  it.each([
    ["a header that is not JSON", () => "bm90LWpzb24..c2ln", undefined],
    [
      "a header without kid",
      () => `${btoa(JSON.stringify({ alg: "EdDSA" })).replace(/=+$/, "")}..c2ln`,
      { alg: "EdDSA" },
    ],
    [
      "a header with b64",
      () =>
        `${btoa(JSON.stringify({ alg: "EdDSA", kid: "k".repeat(43), b64: false })).replace(/=+$/, "")}..c2ln`,
      { members: ["b64"] },
    ],
  ])("refuses %s as signature_malformed", async (_, signature, actual) => {
    const { org, agent, owner } = await setup();
    const [event] = await buildChain(owner, 1);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events: [{ ...(event as WireEvent), signature: signature() }],
    });
    await expectBreak(res, org, {
      sequence: 1,
      index: 0,
      reason: "signature_malformed",
      ...(actual ? { actual: expect.objectContaining(actual) } : {}),
    });
  });
});
