import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { call } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { ledger } from "./support/ledger";
import {
  appendEvents,
  buildChain,
  createSession,
  entriesOf,
  recordDiedBatch,
  setup,
  sha256Hex,
  storedCount,
  type WireEvent,
} from "./support/sessions";

// Appending to agent sessions: continuing the head, replays, races, finishing a dead write.

describe("POST /v1/sessions/{id}/events", () => {
  async function started(count = 2) {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, count);
    const res = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    expect(res.status).toBe(201);
    const last = events.at(-1) as WireEvent;
    return {
      org,
      agent,
      owner,
      id: res.json.id as string,
      head: { sequence: last.sequence, hash: last.hash },
    };
  }

  it("appends a batch continuing the head: 201, the new head, and its ledger entry", async () => {
    const { org, owner, id, head } = await started();
    const batch = await buildChain({ ...owner, after: head }, 3);
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(201);
    const [entry, ...more] = await entriesOf(org, "session.events_appended");
    expect(more).toEqual([]);
    expect(res.json).toMatchObject({
      id,
      events: 5,
      head: { sequence: 5, hash: batch[2]?.hash },
      audit: { entry_id: entry?.id, sequence: Number(entry?.sequence) },
    });
    const payload = {
      object: "session_events",
      session_id: id,
      from: 3,
      to: 5,
      prev_hash: head.hash,
      head_hash: batch[2]?.hash,
      signed_events: 0,
      key_ids: [],
    };
    expect(entry?.digest).toBe(`sha256:${await sha256Hex(canonicalize(payload))}`);
    expect(await storedCount(org)).toBe(5);
  });

  it("appends to an empty session from sequence 1 and the zero hash", async () => {
    const { org, agent, owner } = await setup();
    const created = await createSession(org, { agent_id: agent.id, external_id: owner.externalId });
    const res = await appendEvents(org, created.json.id, await buildChain(owner, 2));
    expect(res.status).toBe(201);
    expect(res.json.events).toBe(2);
  });

  it("refuses a batch with the wrong prev_hash: 422 at index 0, nothing stored", async () => {
    const { org, owner, id, head } = await started();
    const batch = await buildChain({ ...owner, after: { ...head, hash: "cd".repeat(32) } }, 2);
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(422);
    expect(res.json).toEqual(
      errorBody("session_chain_broken", {
        sequence: 3,
        index: 0,
        reason: "link_mismatch",
        expected: head.hash,
        actual: "cd".repeat(32),
      }),
    );
    expect(await storedCount(org)).toBe(2);
    expect(await entriesOf(org, "session.events_appended")).toEqual([]);
  });

  it("refuses a batch that skips ahead of the head", async () => {
    const { org, owner, id, head } = await started();
    const batch = await buildChain({ ...owner, after: { sequence: 3, hash: head.hash } }, 1);
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(422);
    expect(res.error.details).toEqual({
      sequence: 4,
      index: 0,
      reason: "sequence_gap",
      expected: 3,
      actual: 4,
    });
    expect(await storedCount(org)).toBe(2);
    expect(await entriesOf(org, "session.events_appended")).toEqual([]);
  });

  it("answers a replay of a stored batch with 200 and the session unchanged", async () => {
    const { org, owner, id, head } = await started();
    const batch = await buildChain({ ...owner, after: head }, 2);
    const first = await appendEvents(org, id, batch);
    const again = await appendEvents(org, id, batch);
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.json).toEqual(first.json);
    expect(await entriesOf(org, "session.events_appended")).toHaveLength(1);
    expect(await storedCount(org)).toBe(4);
  });

  it("answers 409 session_conflict with the head to a different batch at a stored position", async () => {
    const { org, owner, id, head } = await started();
    const stored = await buildChain({ ...owner, after: head }, 2);
    expect((await appendEvents(org, id, stored)).status).toBe(201);
    const stale = await buildChain({ ...owner, after: head, start: 0 }, 1);
    const res = await appendEvents(org, id, stale);
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("session_conflict", {
        head: { sequence: 4, hash: stored[1]?.hash },
        message: "the batch does not continue the session's head: append from head.sequence + 1",
      }),
    );
  });

  it("lets one of two racing batches win; the other gets 409 and the chain stays intact", async () => {
    const { org, owner, id, head } = await started();
    const a = await buildChain({ ...owner, after: head }, 3);
    const b = await buildChain({ ...owner, after: head, start: 0 }, 2);
    const results = await Promise.all([appendEvents(org, id, a), appendEvents(org, id, b)]);
    // The winner answers 201 even when the loser finished the winner's write before it did.
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = results[0]?.status === 201 ? a : b;
    // Whichever guard stopped it (the head read, or the ledger object's once key), the loser
    // is told the winner's head.
    const loser = results.find((r) => r.status === 409);
    expect(loser?.json).toEqual(
      errorBody("session_conflict", {
        head: { sequence: 2 + winner.length, hash: winner.at(-1)?.hash },
        message: "the batch does not continue the session's head: append from head.sequence + 1",
      }),
    );
    const verify = await call(`/v1/sessions/${id}/verify`, { token: org.token });
    expect(verify.json).toMatchObject({
      ok: true,
      checked: 2 + winner.length,
      head: { sequence: 2 + winner.length, hash: winner.at(-1)?.hash },
      first_break: null,
    });
    expect(await entriesOf(org, "session.events_appended")).toHaveLength(1);
  });

  it("answers the winner 201 when the loser finished the winner's write before it did", async () => {
    const { org, owner, id, head } = await started();
    const a = await buildChain({ ...owner, after: head }, 3);
    const b = await buildChain({ ...owner, after: head, start: 0 }, 2);
    // Hold the winner inside its ledger call, after its entry is sequenced and before its write.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await runInDurableObject(ledger(org.id), (object) => {
      const alarm = (object as unknown as { alarmClock: { schedule: () => Promise<void> } })
        .alarmClock;
      const schedule = alarm.schedule.bind(alarm);
      alarm.schedule = async () => {
        alarm.schedule = schedule;
        await held;
        return schedule();
      };
    });
    const winner = appendEvents(org, id, a);
    const once = `session.events_appended:${id}:${head.sequence + 1}`;
    const sequenced = () =>
      runInDurableObject(ledger(org.id), (object) =>
        Boolean(
          (object as unknown as { store: { onceEntry: (key: string) => unknown } }).store.onceEntry(
            once,
          ),
        ),
      );
    for (let i = 0; i < 200 && !(await sequenced()); i++) await scheduler.wait(10);
    const loser = await appendEvents(org, id, b);
    expect(loser.status).toBe(409);
    expect(loser.error.details.head).toEqual({ sequence: 5, hash: a[2]?.hash });
    expect(
      await ownerSql`select bool_and(written_by_rival) as rival from session_events
                     where org_id = ${org.id} and sequence > 2`,
    ).toEqual([{ rival: true }]);
    release();
    const won = await winner;
    expect(won.status).toBe(201);
    expect(won.json).toMatchObject({ events: 5, head: { sequence: 5, hash: a[2]?.hash } });
    expect(await storedCount(org)).toBe(5);
    expect(await entriesOf(org, "session.events_appended")).toHaveLength(1);
  });

  it("stores a batch sent twice at once exactly once", async () => {
    const { org, owner, id, head } = await started();
    const batch = await buildChain({ ...owner, after: head }, 2);
    const results = await Promise.all([appendEvents(org, id, batch), appendEvents(org, id, batch)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(await storedCount(org)).toBe(4);
    expect(await entriesOf(org, "session.events_appended")).toHaveLength(1);
  });

  it("answers 404 to a session of the other mode", async () => {
    const { org, owner, id, head } = await started();
    const { key } = await org.key(["session:write"], "test");
    const res = await appendEvents(org, id, await buildChain({ ...owner, after: head }, 1), key);
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });
});

describe("a batch whose request died after the ledger object recorded it", () => {
  it("is finished by its retry, which answers 201 (it stored it), then 200", async () => {
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
      2,
    );
    const { entry } = await recordDiedBatch(org, id, batch);
    const res = await appendEvents(org, id, batch);
    expect(res.status).toBe(201);
    expect((await appendEvents(org, id, batch)).status).toBe(200);
    expect(res.json).toMatchObject({
      events: 4,
      head: { sequence: 4, hash: batch[1]?.hash },
      audit: { entry_id: entry.id, sequence: entry.sequence },
    });
    expect(await storedCount(org)).toBe(4);
    expect((await call(`/v1/sessions/${id}/verify`, { token: org.token })).json.ok).toBe(true);
  });

  it("is finished by a different batch at its position, which gets 409", async () => {
    const { org, agent, owner } = await setup();
    const events = await buildChain(owner, 2);
    const created = await createSession(org, {
      agent_id: agent.id,
      external_id: owner.externalId,
      events,
    });
    const id = created.json.id as string;
    const head = { sequence: 2, hash: events[1]?.hash as string };
    const dead = await buildChain({ ...owner, after: head }, 3);
    await recordDiedBatch(org, id, dead);
    const res = await appendEvents(
      org,
      id,
      await buildChain({ ...owner, after: head, start: 0 }, 1),
    );
    expect(res.status).toBe(409);
    expect(res.error.details.head).toEqual({ sequence: 5, hash: dead[2]?.hash });
    expect(await storedCount(org)).toBe(5);
  });
});
