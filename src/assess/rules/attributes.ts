import {
  ACTION_KINDS,
  AGENT_STATUSES,
  CARD_STATUSES,
  RISK_LEVELS,
  RISK_TIERS,
  type RiskLevel,
} from "../../schemas/vocabulary";
import { MANDATE_TYPES } from "../ap2";
import type { RuleInput } from "../risk-input";
import { AMOUNT_KINDS, isProven } from "../risk-input";
import { SIGNAL_CATALOG } from "../signals";
import { parseDuration } from "./duration";
import { RULES_REFERENCE } from "./reference";

/**
 * The attributes a rule of grammar 1 can read (docs/rules.md): what the request and its
 * context say, typed, so that a condition that could never be evaluated is refused when the
 * policy is created instead of failing, or silently never matching, when it runs.
 */

export type Scalar = string | number | boolean;

export type AttributeType =
  | { type: "number"; min: number; max: number; integer?: boolean }
  | { type: "string"; pattern?: RegExp; shape?: string }
  | { type: "enum"; values: readonly string[]; ordered: boolean }
  | { type: "boolean" }
  | { type: "set"; values: readonly string[] };

/** What a rule reads: the model's input, and what the model made of it before the rules ran. */
export interface RuleSubject {
  input: RuleInput;
  /** The score before rules and overrides (the sum of the signals and the trust points). */
  score: number;
  /** The band of that score. */
  level: RiskLevel;
  signals: ReadonlySet<string>;
}

export interface Attribute {
  kind: AttributeType;
  /** The value, or null when the request or its context does not say (docs/rules.md). */
  read: (subject: RuleSubject) => Scalar | ReadonlySet<string> | null;
}

export const SIGNAL_TYPES = Object.keys(SIGNAL_CATALOG);

const number = (min: number, max: number): AttributeType => ({ type: "number", min, max });
/** A whole number: an hour, a weekday or a count compared with 2.5 is a typo, not a rule. */
const integer = (min: number, max: number): AttributeType => ({
  type: "number",
  min,
  max,
  integer: true,
});
const text = (pattern?: RegExp, shape?: string): AttributeType =>
  pattern ? { type: "string", pattern, ...(shape ? { shape } : {}) } : { type: "string" };
const oneOf = (values: readonly string[], ordered = false): AttributeType => ({
  type: "enum",
  values,
  ordered,
});
const flag: AttributeType = { type: "boolean" };

/** `AMOUNT_KINDS` carry amounts; a message's stray `amount` is not one. */
function amountOf(input: RuleInput) {
  return AMOUNT_KINDS.includes(input.kind) ? input.facts.amount : null;
}

function negate(value: boolean | null): boolean | null {
  return value === null ? null : !value;
}

/** ISO weekday, Monday 1 to Sunday 7, in UTC. */
function weekday(now: number): number {
  const day = new Date(now).getUTCDay();
  return day === 0 ? 7 : day;
}

export const ATTRIBUTES: Record<string, Attribute> = {
  amount: {
    kind: number(0, Number.MAX_SAFE_INTEGER),
    read: (s) => amountOf(s.input)?.amount ?? null,
  },
  currency: {
    kind: text(/^[A-Z]{3}$/, "an ISO 4217 code of 3 uppercase letters"),
    read: (s) => amountOf(s.input)?.currency ?? null,
  },
  "payee.id": { kind: text(), read: (s) => s.input.facts.payee?.id ?? null },
  "payee.name": { kind: text(), read: (s) => s.input.facts.payee?.name ?? null },
  "payee.first_seen": { kind: flag, read: (s) => negate(s.input.history.payeeSeen) },
  recipient: { kind: text(), read: (s) => s.input.facts.recipient ?? null },
  "recipient.first_contact": { kind: flag, read: (s) => negate(s.input.history.recipientSeen) },
  kind: { kind: oneOf(ACTION_KINDS), read: (s) => s.input.kind },
  mandate_type: { kind: oneOf(MANDATE_TYPES), read: (s) => s.input.mandateType },
  // True only for an AP2 mandate taken from a verified credential; null for other kinds.
  "mandate.verified": {
    kind: flag,
    read: (s) => (s.input.kind === "ap2_payment" ? s.input.credential?.verified === true : null),
  },
  "agent.identified": { kind: flag, read: (s) => s.input.identity.agent !== null },
  // Compared byte for byte: an uppercase UUID would never match the ids the service reads.
  "agent.id": {
    kind: text(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      "a lowercase UUID",
    ),
    read: (s) => s.input.identity.agent?.id ?? null,
  },
  "agent.status": {
    kind: oneOf(AGENT_STATUSES),
    read: (s) => s.input.identity.agent?.status ?? null,
  },
  // True only when a verified credential's holder key proves the agent; a claim is false.
  "agent.proven": { kind: flag, read: (s) => isProven(s.input.identity) },
  // A claimed agent's trust is not borrowed (docs/assess.md, "What each kind of evidence
  // earns"): a rule reads it as an unknown agent's, trust 0 and tier critical, as the model does.
  "agent.trust_score": {
    kind: number(0, 100),
    read: (s) => {
      const agent = s.input.identity.agent;
      if (agent === null) return null;
      return isProven(s.input.identity) ? agent.trust_score : 0;
    },
  },
  "agent.risk_tier": {
    kind: oneOf(RISK_TIERS, true),
    read: (s) => {
      const agent = s.input.identity.agent;
      if (agent === null) return null;
      return isProven(s.input.identity) ? agent.risk_tier : "critical";
    },
  },
  "agent.card_status": {
    kind: oneOf(CARD_STATUSES),
    read: (s) => s.input.identity.agent?.card_status ?? null,
  },
  "agent.identified_by": {
    kind: oneOf(["key", "card", "explicit"]),
    read: (s) => s.input.identity.method,
  },
  "card.verification": {
    kind: oneOf(["verified", "unverified", "unknown"]),
    read: (s) => s.input.identity.card,
  },
  "key.status": {
    kind: oneOf(["active", "revoked", "unregistered"]),
    read: (s) => s.input.identity.key,
  },
  "identity.conflict": { kind: flag, read: (s) => s.input.identity.conflict },
  "risk.score": { kind: number(0, 100), read: (s) => s.score },
  "risk.level": { kind: oneOf(RISK_LEVELS, true), read: (s) => s.level },
  signals: { kind: { type: "set", values: SIGNAL_TYPES }, read: (s) => s.signals },
  "time.hour": { kind: integer(0, 23), read: (s) => new Date(s.input.now).getUTCHours() },
  "time.weekday": { kind: integer(1, 7), read: (s) => weekday(s.input.now) },
  "geo.country": {
    kind: text(/^[A-Z]{2}$/, "an ISO 3166-1 alpha-2 code of 2 uppercase letters"),
    read: (s) => s.input.geo,
  },
  ...networkAttributes(),
};

/**
 * `network.<count>`: `outcome.network`'s counts of other organizations (docs/network.md), null
 * when the org's mode does not consume network signals.
 */
function networkAttributes(): Record<string, Attribute> {
  const counts = [
    "payee_fraud_orgs",
    "payee_legitimate_orgs",
    "agent_key_fraud_orgs",
    "agent_key_legitimate_orgs",
    "issuer_fraud_orgs",
    "issuer_legitimate_orgs",
    "instrument_fraud_orgs",
    "instrument_legitimate_orgs",
  ] as const;
  return Object.fromEntries(
    counts.map((count) => [
      `network.${count}`,
      {
        kind: integer(0, Number.MAX_SAFE_INTEGER),
        read: (s: RuleSubject) => s.input.network?.[count] ?? null,
      },
    ]),
  );
}

// --- Window aggregates: `count.<per>.<window>` and `sum.<per>.<window>` ---

export const MEASURES = ["count", "sum"] as const;
export const PERS = ["agent", "principal", "payee"] as const;

export interface AggregateSpec {
  /** Canonical: `<measure>.<per>.<seconds>`, so `1h` and `PT1H` are one aggregate. */
  key: string;
  measure: (typeof MEASURES)[number];
  per: (typeof PERS)[number];
  seconds: number;
}

const AGGREGATE = /^(count|sum)\.(agent|principal|payee)\.([^.]+)$/;

/**
 * The aggregate an attribute names; null when the attribute is not one; a message when it is
 * shaped like one but its window is not a duration of 1 s to 90 d.
 */
export function aggregateOf(attr: string): AggregateSpec | string | null {
  const match = AGGREGATE.exec(attr);
  if (!match) return null;
  const seconds = parseDuration(match[3] as string);
  if (seconds === null) return "the window must be a duration from 1s to 90d, such as 15m, 1h, P7D";
  const measure = match[1] as AggregateSpec["measure"];
  const per = match[2] as AggregateSpec["per"];
  return { key: `${measure}.${per}.${seconds}`, measure, per, seconds };
}

/**
 * The attribute named, or a message saying why there is none. Aggregates read
 * `input.aggregates`, which the assess context query fills for the active policy's windows.
 */
export function attributeOf(attr: string): Attribute | string {
  const known = Object.hasOwn(ATTRIBUTES, attr) ? ATTRIBUTES[attr] : undefined;
  if (known) return known;
  const aggregate = aggregateOf(attr);
  if (aggregate === null) {
    return `unknown attribute (the attributes of grammar 1: ${RULES_REFERENCE.attributes})`;
  }
  if (typeof aggregate === "string") return aggregate;
  return {
    kind:
      aggregate.measure === "count"
        ? integer(0, Number.MAX_SAFE_INTEGER)
        : number(0, Number.MAX_SAFE_INTEGER),
    read: (s) => s.input.aggregates?.[aggregate.key] ?? null,
  };
}
