import { sql } from "drizzle-orm";
import type { NetworkOutcome } from "../../schemas/assessments";
import type { ActionKind } from "../../schemas/vocabulary";
import type { OpenMandateLimits } from "../facts";
import type { NormalizedRules } from "../policy";
import type { MandateFacts, MandateType } from "../request";
import type { CredentialEvidence, History, Identity } from "../risk-input";
import type { RiskInput } from "../risk-model";
import { aggregateValues } from "./aggregates";
import type { AggregateSpec } from "./attributes";

/**
 * What the model read for an assessment, stored with it (`assessments.inputs`) so that a
 * backtest replays a policy over the inputs as they were, not as they are now: the agent's
 * trust then, its history then. Not stored: the policy (the backtest brings its own) and the
 * window counts, which depend on the policy's windows and are counted again from the history
 * as of the assessment's time. The client's `risk_data` is not kept beyond the country read
 * from it, nor the holder key beyond the identity it resolved to, nor an open mandate's
 * constraints beyond what the model checks (`recordedLimits`).
 */
export interface RecordedInputs {
  v: 1;
  mandate_type: MandateType | null;
  facts: Omit<MandateFacts, "riskData" | "holderKey">;
  identity: Identity;
  history: Omit<History, "windowCount">;
  geo: string | null;
  now: number;
  /** What the request's AP2 credential proved; absent for decoded JSON (and older records). */
  credential?: CredentialEvidence;
  /** `outcome.network` as the model read it; absent when the org did not consume (or older). */
  network?: NetworkOutcome;
}

export function recordInputs(input: RiskInput): RecordedInputs {
  const { riskData: _riskData, holderKey: _holderKey, ...facts } = input.facts;
  const { windowCount: _windowCount, ...history } = input.history;
  return {
    v: 1,
    mandate_type: input.mandateType,
    facts: { ...facts, limits: recordedLimits(facts.limits) },
    identity: input.identity,
    history,
    geo: input.geo,
    now: input.now,
    ...(input.credential ? { credential: input.credential } : {}),
    ...(input.network ? { network: input.network } : {}),
  };
}

/**
 * An open mandate's limits as the model reads them (docs/assess.md, the mandate's own bounds):
 * the amount ceilings and payee lists already derived, and of the constraints only the scalar
 * fields of `payment.amount_range` and `payment.execution_date`. The constraints as submitted
 * may carry fields of any depth (the AP2 schemas are open), and copied one level below the
 * mandate they could exceed the storable depth where the mandate itself did not.
 */
function recordedLimits(limits: OpenMandateLimits | null): OpenMandateLimits | null {
  if (limits === null) return null;
  const constraints = limits.constraints.flatMap((constraint): typeof limits.constraints => {
    if (constraint.type === "payment.amount_range") {
      const { type, currency, max, min } = constraint;
      return [{ type, currency, max, ...(min === undefined ? {} : { min }) }];
    }
    if (constraint.type === "payment.execution_date") {
      const { type, not_before: notBefore, not_after: notAfter } = constraint;
      return [
        {
          type,
          ...(notBefore === undefined ? {} : { not_before: notBefore }),
          ...(notAfter === undefined ? {} : { not_after: notAfter }),
        },
      ];
    }
    return [];
  });
  return { maxAmounts: limits.maxAmounts, allowedPayees: limits.allowedPayees, constraints };
}

/**
 * How an assessment's credential ended, as its stored outcome says: the failure (the
 * verifier's, or the ledger object's `already_consumed`/`budget_exceeded`, decided after the
 * model scored and so never in the recorded inputs) and the words of its `credential_<failure>`
 * rejection reason. Both null for a verified credential and for none.
 */
export interface StoredCredential {
  failure: string | null;
  reason: string | null;
}

/**
 * `StoredCredential`'s columns (`credential_failure`, `credential_reason`) of the assessment
 * `a`; the rejection reasons are only read for a refused credential.
 */
export const STORED_CREDENTIAL_COLUMNS = sql`a.credential->>'failure' as credential_failure,
  (select r->>'description' from jsonb_array_elements(a.rejection_reasons) r
    where a.credential->>'failure' is not null
      and r->>'key' = 'credential_' || (a.credential->>'failure')
    limit 1) as credential_reason`;

/**
 * The recorded inputs with the facts of history a replay must hold (docs/rules.md, "What a
 * replay holds"): a credential the outcome says was refused is refused in the replay, with the
 * same failure and the same words, whatever the replayed policy says. Read from the stored
 * outcome, so assessments recorded before this rule replay the same way. The agent's status
 * (revoked, suspended) is in the recorded identity already.
 */
export function heldInputs(recorded: RecordedInputs, stored: StoredCredential): RecordedInputs {
  if (stored.failure === null) return recorded;
  const credential = recorded.credential;
  // The verifier's refusal: recorded with its detail, as the model read it.
  if (credential && !credential.verified && credential.failure === stored.failure) return recorded;
  return {
    ...recorded,
    credential: { verified: false, failure: stored.failure, detail: refusalDetail(stored) },
  };
}

/**
 * A refusal's detail from its stored words, `the credential is refused (<failure>[,
 * <constraint>]): <message>` as the policy stage and the ledger object's refusal write them, so
 * that the replay's reason is the assessment's, word for word.
 */
function refusalDetail(stored: StoredCredential): CredentialEvidence["detail"] {
  if (stored.reason === null) return null;
  const stated = /^the credential is refused \(([^,)]+)(?:, ([^)]+))?\): ([\s\S]*)$/.exec(
    stored.reason,
  );
  if (!stated || stated[1] !== stored.failure) return { message: stored.reason };
  const [, , constraint, message = ""] = stated;
  return constraint === undefined ? { message } : { constraint, message };
}

/** Whether a stored value is inputs this version of the service can replay. */
export function isRecordedInputs(value: unknown): value is RecordedInputs {
  return typeof value === "object" && value !== null && (value as { v?: unknown }).v === 1;
}

/**
 * The model's input for replaying `rules` over a recorded assessment; `counted` holds the
 * window aggregates (the velocity window's count included) as of the assessment's time.
 */
export function replayInput(
  recorded: RecordedInputs,
  kind: ActionKind,
  hasCounterparty: boolean,
  rules: NormalizedRules,
  counted: Record<string, unknown> | null,
): RiskInput {
  const agent = recorded.identity.agent !== null;
  const specs = replaySpecs(rules);
  const values = aggregateValues(specs, counted, { agent, counterparty: hasCounterparty });
  const velocity = rules.velocity ? velocitySpec(rules.velocity.window_seconds) : null;
  return {
    kind,
    mandateType: recorded.mandate_type,
    facts: { ...recorded.facts, riskData: null, holderKey: null },
    identity: recorded.identity,
    rules,
    policyVersion: 0,
    history: {
      ...recorded.history,
      windowCount: velocity && agent ? (values[velocity.key] ?? 0) : null,
    },
    now: recorded.now,
    geo: recorded.geo,
    ...(recorded.credential ? { credential: recorded.credential } : {}),
    ...(recorded.network ? { network: recorded.network } : {}),
    ...(rules.program?.aggregates.length ? { aggregates: values } : {}),
  };
}

/** The windows a replay must count: the rule list's, and the velocity limit's. */
export function replaySpecs(rules: NormalizedRules): AggregateSpec[] {
  const specs = [...(rules.program?.aggregates ?? [])];
  if (rules.velocity) {
    const velocity = velocitySpec(rules.velocity.window_seconds);
    if (!specs.some((spec) => spec.key === velocity.key)) specs.push(velocity);
  }
  return specs;
}

function velocitySpec(seconds: number): AggregateSpec {
  return { key: `count.agent.${seconds}`, measure: "count", per: "agent", seconds };
}
