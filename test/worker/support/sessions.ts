import { CompactSign } from "jose";
import { expect } from "vitest";
import { canonicalize } from "#audit/canonical";
import { call, newOrg, type RequestBody, type TestOrg } from "./api";
import { ownerSql } from "./db";
import { errorBody } from "./errors";
import { type AgentKeyPair, newAgent } from "./identity";
import { sequenceOnly } from "./ledger";
import { assessOnce as assessPayment } from "./routes";

/**
 * Builds session chains as an agent would (docs/sessions.md#the-chained-event), with WebCrypto's SHA-256
 * and jose's signer rather than the service's own code.
 */

export const ZERO = "0".repeat(64);

/** An event as the agent sends it: the request schema's `SessionEventInput`. */
export type WireEvent = RequestBody<"/v1/sessions/{id}/events", "POST">["events"][number];

export interface EventSpec {
  type?: WireEvent["type"];
  payload?: unknown;
  assessment_id?: string;
}

export interface ChainOptions extends Owner {
  /** The head to continue: sequence and hash of the last stored event. */
  after?: { sequence: number; hash: string };
  /** Signs every event (or those the function returns a key for). */
  signer?: AgentKeyPair | ((index: number) => AgentKeyPair | null);
  /** The first event's time; later ones one second apart. */
  start?: number;
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** Whose chain: the session's name, its agent, and its mode (live unless `livemode: false`). */
export interface Owner {
  externalId: string;
  agentId: string;
  livemode?: boolean;
}

/** The object an event's hash and signature cover. */
export function chained(owner: Owner, event: WireEvent) {
  const { hash: _h, signature: _s, ...fields } = event;
  return {
    v: 1,
    session: owner.externalId,
    agent: owner.agentId,
    livemode: owner.livemode ?? true,
    ...fields,
  };
}

export function hashEvent(owner: Owner, event: WireEvent) {
  return sha256Hex(canonicalize(chained(owner, event)));
}

/** A detached compact JWS (RFC 7515 appendix F) over the canonical event. */
export async function signEvent(
  owner: Owner,
  event: WireEvent,
  pair: AgentKeyPair,
  header: Record<string, unknown> = {},
): Promise<string> {
  const payload = new TextEncoder().encode(canonicalize(chained(owner, event)));
  const jws = await new CompactSign(payload)
    .setProtectedHeader({ alg: pair.alg, kid: pair.kid, ...header })
    .sign(pair.privateKey);
  const [protectedHeader, , signature] = jws.split(".");
  return `${protectedHeader}..${signature}`;
}

/** A valid chain of events continuing `after` (or starting a session). */
export async function buildChain(
  options: ChainOptions,
  specs: EventSpec[] | number,
): Promise<WireEvent[]> {
  const list: EventSpec[] =
    typeof specs === "number" ? Array.from({ length: specs }, () => ({})) : specs;
  const start = options.start ?? Date.parse("2026-03-01T10:00:00.000Z");
  let prev = options.after ?? { sequence: 0, hash: ZERO };
  const events: WireEvent[] = [];
  for (const [index, spec] of list.entries()) {
    const sequence = prev.sequence + 1;
    const event: WireEvent = {
      sequence,
      type: spec.type ?? "tool_call",
      time: new Date(start + sequence * 1000).toISOString(),
      payload_digest: `sha256:${await sha256Hex(canonicalize(spec.payload ?? { n: sequence }))}`,
      prev_hash: prev.hash,
      hash: "",
      ...(spec.assessment_id ? { assessment_id: spec.assessment_id } : {}),
    };
    event.hash = await hashEvent(options, event);
    const pair = typeof options.signer === "function" ? options.signer(index) : options.signer;
    if (pair) event.signature = await signEvent(options, event, pair);
    events.push(event);
    prev = { sequence, hash: event.hash };
  }
  return events;
}

/** Rehashes event `from` as edited and re-links every later one to it (signatures dropped). */
export async function relink(
  owner: Owner,
  events: WireEvent[],
  from: number,
): Promise<WireEvent[]> {
  const out = events.map((e) => ({ ...e }));
  for (let i = from; i < out.length; i++) {
    const event = out[i] as WireEvent;
    if (i > from) event.prev_hash = (out[i - 1] as WireEvent).hash;
    delete event.signature;
    event.hash = await hashEvent(owner, event);
  }
  return out;
}

/** POST /v1/sessions (the org's session, or `key`): the body is the route's request schema. */
export function createSession(
  org: TestOrg,
  body: RequestBody<"/v1/sessions", "POST">,
  key?: string,
) {
  return call("/v1/sessions", { method: "POST", ...(key ? { key } : { token: org.token }), body });
}

/** POST /v1/sessions with a body the request schema would refuse, as given. */
export function createSessionRaw(org: TestOrg, body: unknown, key?: string) {
  return call("/v1/sessions", {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    body,
    raw: true,
  });
}

/** POST /v1/sessions/{id}/events: the events are the route's request schema. */
export function appendEvents(
  org: TestOrg,
  id: string,
  events: RequestBody<"/v1/sessions/{id}/events", "POST">["events"],
  key?: string,
) {
  return call(`/v1/sessions/${id}/events`, {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    body: { events },
  });
}

/** POST /v1/sessions/{id}/events with events the request schema would refuse, as given. */
export function appendEventsRaw(org: TestOrg, id: string, events: unknown, key?: string) {
  return call(`/v1/sessions/${id}/events`, {
    method: "POST",
    ...(key ? { key } : { token: org.token }),
    body: { events },
    raw: true,
  });
}

export const isoDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** An org, one of its agents, and a fresh external id for a session of it. */
export async function setup() {
  const org = await newOrg();
  const agent = await newAgent(org);
  return { org, agent, owner: { externalId: `run-${crypto.randomUUID()}`, agentId: agent.id } };
}

export function entriesOf(org: TestOrg, type: string) {
  return ownerSql`select id, sequence, subject_id, digest from audit_entries
    where org_id = ${org.id} and type = ${type} order by sequence`;
}

export async function storedCount(org: TestOrg) {
  const [row] =
    await ownerSql`select count(*)::int as n from session_events where org_id = ${org.id}`;
  return row?.n as number;
}

export async function storedSessions(org: TestOrg) {
  const [row] = await ownerSql`select count(*)::int as n from sessions where org_id = ${org.id}`;
  return row?.n as number;
}

export async function sessionEntries(org: TestOrg) {
  const [row] = await ownerSql`select count(*)::int as n from audit_entries
    where org_id = ${org.id} and type like 'session.%'`;
  return row?.n as number;
}

/**
 * Expects a whole creation refused at one position: no session row, no event, no ledger entry
 * (for an append into an existing session, pass what was stored before).
 */
export async function expectBreak(
  res: { status: number; json: any },
  org: TestOrg,
  details: Record<string, unknown>,
  before: { sessions: number; events: number; entries: number } = {
    sessions: 0,
    events: 0,
    entries: 0,
  },
) {
  expect(res.status).toBe(422);
  expect(res.json).toEqual(errorBody("session_chain_broken", details));
  expect(await storedCount(org)).toBe(before.events);
  expect(await storedSessions(org)).toBe(before.sessions);
  expect(await sessionEntries(org)).toBe(before.entries);
}

/** What an org holds of sessions now, to compare after a refused batch. */
export async function storedState(org: TestOrg) {
  return {
    sessions: await storedSessions(org),
    events: await storedCount(org),
    entries: await sessionEntries(org),
  };
}

export function flipOneCharacter(signature: string): string {
  const [header, , sig] = signature.split(".") as [string, string, string];
  const i = Math.floor(sig.length / 2);
  const flipped = sig[i] === "A" ? "B" : "A";
  return `${header}..${sig.slice(0, i)}${flipped}${sig.slice(i + 1)}`;
}

/** One assessment of a fresh payment mandate in the org, as its owner (live): its id. */
export async function assessOnce(org: TestOrg, key?: string): Promise<string> {
  return (await assessPayment(org, key)).assessmentId;
}

/**
 * Stands for an append request that died right after the ledger object recorded its batch: the
 * entry and the draft the request hands the ledger object before writing (src/agent-sessions/
 * ingest.ts), written here by hand, with no rows behind them.
 */
export async function recordDiedBatch(org: TestOrg, id: string, events: WireEvent[]) {
  const first = events[0] as WireEvent;
  const payload = {
    object: "session_events",
    session_id: id,
    from: first.sequence,
    to: events.at(-1)?.sequence,
    prev_hash: first.prev_hash,
    head_hash: events.at(-1)?.hash,
    signed_events: 0,
    key_ids: [],
  };
  return sequenceOnly(org.id, {
    type: "session.events_appended",
    actor: { type: "user", id: "died" },
    subject: { type: "session", id },
    digest: `sha256:${await sha256Hex(canonicalize(payload))}`,
    once: [`session.events_appended:${id}:${first.sequence}`],
    attachment: JSON.stringify({ receivedAt: new Date().toISOString(), events }),
  });
}
