import type { GapCode } from "../schemas/vocabulary";
/**
 * Matching an observed effect against the gate it names, apart from HTTP and SQL: the facts
 * come in (src/control-coverage/coverage.ts reads them in one batch), the gaps go out. An effect with
 * no gap is gated. The rules are docs/control-coverage.md's "Matching an effect to its gate".
 */

export interface Gap {
  code: GapCode;
  message: string;
  effect_id: string | null;
  reference: string | null;
  occurred_at: string | null;
  assessment_id: string | null;
  decision_id: string | null;
  grant_id: string | null;
}

export interface AssessmentFacts {
  id: string;
  decision: string;
  createdAt: Date;
  amount: number | null;
  currency: string | null;
}

export interface DecisionFacts {
  id: string;
  decision: string;
  grantId: string | null;
  grantExpiresAt: Date | null;
  /** The credential the grant was issued to (an API key's or a user's id). */
  audience: string | null;
  action: string;
  resource: string;
  amount: number | null;
  currency: string | null;
}

/** The one redemption of a decision's grant, as the executor stated it when redeeming. */
export interface RedemptionFacts {
  redeemedAt: Date;
  executorType: string;
  executorId: string;
  /**
   * The mode of the redeeming credential: an API key's own, a user's live; null when the key
   * is not found in the org.
   */
  executorLive: boolean | null;
  action: string;
  resource: string;
  amount: number | null;
  currency: string | null;
}

/** One effect with everything its gate check needs, as one row of the coverage query. */
export interface EffectFacts {
  id: string;
  livemode: boolean;
  reference: string;
  occurredAt: Date;
  action: string | null;
  resource: string | null;
  amount: number | null;
  currency: string | null;
  gateType: "assessment" | "grant" | "decision" | null;
  gateId: string | null;
  /** The effect that first claimed the same gate (by occurrence, then id), itself included. */
  firstClaimant: string | null;
  assessment: AssessmentFacts | null;
  decision: DecisionFacts | null;
  redemption: RedemptionFacts | null;
}

/**
 * Rails often report time to the second: an effect is before its gate only if it occurred
 * before the second in which the gate was passed.
 */
function before(occurred: Date, gate: Date): boolean {
  return occurred.getTime() < Math.floor(gate.getTime() / 1000) * 1000;
}

type Value = string | number | null;
type Compared = [field: string, gate: Value, effect: Value];

/** The fields that differ: `amount 2000 ≠ 1000`, prefixed (`redemption `) when given. */
function differing(pairs: Compared[], prefix = ""): string[] {
  return pairs
    .filter(([, gate, stated]) => gate !== stated)
    .map(
      ([field, gate, stated]) =>
        `${prefix}${field} ${JSON.stringify(stated)} ≠ ${JSON.stringify(gate)}`,
    );
}

/**
 * The effect against its gate's terms. A field the gate has must be stated by the effect
 * (`amount not stated`); a stated field must equal the gate's (a gate without an amount
 * differs from an effect with one). `required` are the fields that must be stated whatever.
 */
function againstGate(pairs: Compared[], required: string[]): string[] {
  return pairs.flatMap(([field, gate, stated]) => {
    if (stated === null) {
      return gate !== null || required.includes(field) ? [`${field} not stated`] : [];
    }
    return differing([[field, gate, stated]]);
  });
}

const modeName = (live: boolean) => (live ? "live" : "test");

/** Every gap of one effect, in a fixed order; none means gated. */
export function effectGaps(f: EffectFacts): Gap[] {
  const base = {
    effect_id: f.id,
    reference: f.reference,
    occurred_at: f.occurredAt.toISOString(),
    assessment_id: f.gateType === "assessment" ? f.gateId : null,
    decision_id: f.gateType === "decision" ? f.gateId : (f.decision?.id ?? null),
    grant_id: f.gateType === "grant" ? f.gateId : (f.decision?.grantId ?? null),
  };
  const gap = (code: GapCode, message: string): Gap => ({ code, message, ...base });
  if (f.gateType === null) return [gap("effect_without_gate", "the effect names no gate")];
  const reused =
    f.firstClaimant !== null && f.firstClaimant !== f.id
      ? [gap("gate_reused", `the effect ${f.firstClaimant} claimed this gate first`)]
      : [];
  if (f.gateType === "assessment") {
    const a = f.assessment;
    if (!a) return [gap("gate_not_found", "no such assessment in this organization and mode")];
    const gaps: Gap[] = [];
    if (a.decision !== "approve") {
      gaps.push(gap("gate_not_approved", `the assessment decided ${a.decision}`));
    }
    if (before(f.occurredAt, a.createdAt)) {
      gaps.push(gap("effect_before_gate", `assessed at ${a.createdAt.toISOString()}`));
    }
    // An assessment has no action or resource of its own, and its payee is not compared:
    // only money, and only when the assessment has an amount (then the effect must state it).
    const differ =
      a.amount === null
        ? []
        : againstGate(
            [
              ["amount", a.amount, f.amount],
              ["currency", a.currency, f.currency],
            ],
            [],
          );
    if (differ.length > 0) gaps.push(gap("gate_mismatch", differ.join("; ")));
    return [...gaps, ...reused];
  }
  const d = f.decision;
  if (!d) return [gap("gate_not_found", `no such ${f.gateType} in this organization`)];
  const r = f.redemption;
  const gaps: Gap[] = [];
  if (d.decision !== "ALLOW") {
    gaps.push(gap("gate_not_approved", `the decision was ${d.decision}`));
  } else if (d.grantId === null) {
    gaps.push(gap("grant_not_redeemed", "the decision issued no grant: nothing was redeemed"));
  } else if (r === null) {
    gaps.push(gap("grant_not_redeemed", "the grant was never redeemed"));
  } else {
    if (d.grantExpiresAt !== null && r.redeemedAt.getTime() >= d.grantExpiresAt.getTime()) {
      gaps.push(
        gap(
          "redeemed_after_expiry",
          `redeemed at ${r.redeemedAt.toISOString()}, expired at ${d.grantExpiresAt.toISOString()}`,
        ),
      );
    }
    if (r.executorLive !== f.livemode) {
      const by =
        r.executorLive === null
          ? `an API key not found in this organization (${r.executorId})`
          : `a ${modeName(r.executorLive)} credential`;
      gaps.push(
        gap("gate_mode_mismatch", `redeemed by ${by}; the effect is ${modeName(f.livemode)}`),
      );
    }
    if (before(f.occurredAt, r.redeemedAt)) {
      gaps.push(gap("effect_before_gate", `redeemed at ${r.redeemedAt.toISOString()}`));
    }
  }
  const differ = againstGate(
    [
      ["action", d.action, f.action],
      ["resource", d.resource, f.resource],
      ["amount", d.amount, f.amount],
      ["currency", d.currency, f.currency],
    ],
    ["action", "resource"],
  );
  if (r !== null) {
    if (r.executorId !== d.audience) {
      differ.push(
        `redeemed by ${r.executorType} ${r.executorId}, the grant's audience is ${JSON.stringify(d.audience)}`,
      );
    }
    differ.push(
      ...differing(
        [
          ["action", d.action, r.action],
          ["resource", d.resource, r.resource],
          ["amount", d.amount, r.amount],
          ["currency", d.currency, r.currency],
        ],
        "redemption ",
      ),
    );
  }
  if (differ.length > 0) gaps.push(gap("gate_mismatch", differ.join("; ")));
  return [...gaps, ...reused];
}

/** A grant that expired unredeemed: a gate no executor ever passed. */
export function neverRedeemedGap(decisionId: string, grantId: string, expiresAt: Date): Gap {
  return {
    code: "gate_never_redeemed",
    message: `the grant expired at ${expiresAt.toISOString()} without a redemption`,
    effect_id: null,
    reference: null,
    occurred_at: null,
    assessment_id: null,
    decision_id: decisionId,
    grant_id: grantId,
  };
}
