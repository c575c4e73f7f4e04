import { canonicalize } from "#audit/canonical";
import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import type { BreakReason, SESSION_EVENT_TYPES } from "../schemas/vocabulary";
import { checkSignature, type KeyCache, type SessionKey, signatureKid } from "./signature";

/**
 * The session chain (docs/sessions.md#the-chained-event): each event is hashed in its RFC 8785 form,
 * which names the session, the agent, its position and the previous event's hash, so an event
 * can be neither moved, nor dropped, nor replayed into another session or agent.
 */

/** The `prev_hash` of the first event. */
export const ZERO_HASH = "0".repeat(64);

export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/** One event as the agent sent it (or as stored): the chained fields, its hash, its signature. */
export interface SessionEventInput {
  sequence: number;
  type: SessionEventType;
  time: string;
  payload_digest: string;
  prev_hash: string;
  hash: string;
  assessment_id?: string | null;
  signature?: string | null;
}

/** Exactly what is hashed and signed. `assessment_id` is absent, never null, when not linked. */
export interface ChainedEvent {
  v: 1;
  session: string;
  agent: string;
  livemode: boolean;
  sequence: number;
  type: SessionEventType;
  time: string;
  payload_digest: string;
  prev_hash: string;
  assessment_id?: string;
}

export interface ChainOwner {
  externalId: string;
  agentId: string;
  /** The session's mode, bound into every event: a live chain cannot be replayed as test. */
  livemode: boolean;
}

export function chainedEvent(owner: ChainOwner, event: SessionEventInput): ChainedEvent {
  const chained: ChainedEvent = {
    v: 1,
    session: owner.externalId,
    agent: owner.agentId,
    livemode: owner.livemode,
    sequence: event.sequence,
    type: event.type,
    time: event.time,
    payload_digest: event.payload_digest,
    prev_hash: event.prev_hash,
  };
  if (event.assessment_id) chained.assessment_id = event.assessment_id;
  return chained;
}

/** The canonical bytes of a chained event, as text: hashed, and signed as the JWS payload. */
export function canonicalEvent(chained: ChainedEvent): string {
  return canonicalize(chained);
}

/** `hex(SHA-256(UTF-8(JCS(event))))`. */
export function hashOf(canonical: string): string {
  return toHex(sha256(utf8(canonical)));
}

/** The first place a chain does not hold, and why. */
export interface ChainBreak {
  sequence: number;
  /** The position in the batch (ingestion) or in the stored chain (0-based). */
  index: number;
  reason: BreakReason;
  expected?: unknown;
  actual?: unknown;
}

export interface Head {
  sequence: number;
  /** Null before the first event. */
  hash: string | null;
}

export interface ChainRules extends ChainOwner {
  requireSignatures: boolean;
  /** Keys by thumbprint: those the events name (any agent of the org). */
  keys: ReadonlyMap<string, SessionKey>;
  /** Keys imported so far in this request. */
  cache?: KeyCache;
}

/** What re-verification knows of a stored event beyond its chained fields. */
export interface StoredFacts {
  receivedAt: Date;
  /** The thumbprint recorded for the signature when it was accepted. */
  keyId: string | null;
}

/** Where the first event of a batch at `index` breaks the rule that sequences are consecutive. */
export function nonConsecutive(events: readonly SessionEventInput[]): ChainBreak | null {
  const first = events[0];
  if (!first) return null;
  for (const [index, event] of events.entries()) {
    const expected = first.sequence + index;
    if (event.sequence !== expected) {
      return {
        sequence: event.sequence,
        index,
        reason: "sequence_gap",
        expected,
        actual: event.sequence,
      };
    }
  }
  return null;
}

/**
 * Checks events in order from a head: position, link, hash, then signature, and answers the
 * first break (null when all hold). `stored` gives, per event, what re-verification knows of
 * a stored row: the instant its key had to be unrevoked at (at ingestion it is omitted: the key
 * must be active now) and the key recorded for it, which the signature's `kid` must name.
 */
export async function firstBreak(
  rules: ChainRules,
  head: Head,
  events: readonly SessionEventInput[],
  stored?: (index: number) => StoredFacts,
): Promise<ChainBreak | null> {
  const keyRules = { ...rules, cache: rules.cache ?? new Map() };
  let expected = { sequence: head.sequence + 1, hash: head.hash ?? ZERO_HASH };
  for (const [index, event] of events.entries()) {
    const at = (reason: BreakReason, more: { expected?: unknown; actual?: unknown } = {}) => ({
      sequence: event.sequence,
      index,
      reason,
      ...more,
    });
    if (event.sequence !== expected.sequence) {
      return at("sequence_gap", { expected: expected.sequence, actual: event.sequence });
    }
    if (event.prev_hash !== expected.hash) {
      return at("link_mismatch", { expected: expected.hash, actual: event.prev_hash });
    }
    const canonical = canonicalEvent(chainedEvent(rules, event));
    const hash = hashOf(canonical);
    if (event.hash !== hash) return at("hash_mismatch", { expected: hash, actual: event.hash });
    if (event.signature) {
      const facts = stored?.(index);
      const kid = signatureKid(event.signature);
      if (facts && kid !== null && kid !== facts.keyId) {
        return at("key_mismatch", { expected: facts.keyId, actual: kid });
      }
      const problem = await checkSignature(event.signature, canonical, keyRules, facts?.receivedAt);
      if (problem)
        return at(problem.reason, { expected: problem.expected, actual: problem.actual });
    } else if (rules.requireSignatures) {
      return at("signature_required");
    }
    expected = { sequence: event.sequence + 1, hash };
  }
  return null;
}
