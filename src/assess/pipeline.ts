import { calculateJwkThumbprint } from "jose";
import type { Caller } from "../auth/caller";
import { guardSpend } from "../billing/guard";
import type { Tenant } from "../db/tenant";
import { type Env, modeOf, publicBaseUrl } from "../env";
import { ApiError } from "../errors";
import { ORPHANED, recordOnce } from "../ledger/ledger";
import { payloadDigest } from "../lib/digest";
import { newId } from "../lib/ids";
import { logError } from "../lib/log";
import { recordInputs } from "../rules/inputs";
import { signer } from "../signing/signer";
import { scoreBehavior } from "./behavior";
import { loadContext } from "./context";
import { RISK_DATA_NAMESPACE, withoutServiceRiskData } from "./facts";
import { counterpartyOf, riskInput, rulesUnreadable } from "./input";
import { type AssessmentRecord, type Outcome, toOutcome } from "./outcome";
import { PersistPlan, persist, recordOf } from "./persist";
import { evaluatePolicy } from "./policy-rules";
import { mandateCanonicalHash, type ParsedAssessRequest, unstorableAt } from "./request";
import { decide, scoreIdentity } from "./risk";
import type { ComponentResult } from "./risk-model";
import { RISK_PAYLOAD_TYP, riskPayloadClaims, riskPayloadTtlSeconds } from "./risk-payload";
import { Stopwatch } from "./stopwatch";

export interface Assessed {
  outcome: Outcome;
  record: AssessmentRecord;
  /** The submitted mandate with the signed Risk Payload in `risk_data`. */
  mandate: Record<string, unknown>;
  timing: Stopwatch;
}

/**
 * POST /v1/assess after parsing: know-your-agent, policy, risk, sign, persist. Two database
 * round trips for a fresh assessment (the context read, which also authenticates, and the
 * persist transaction), one for a replay, and one call to the org's ledger object.
 */
export async function runAssessment(
  tenant: Tenant,
  request: ParsedAssessRequest,
  receivedAt: number,
): Promise<Assessed> {
  const timing = new Stopwatch();
  const livemode = tenant.livemode;
  const contentHash = contentHashOf(request, livemode);
  const thumbprint = await holderThumbprint(request);
  const context = await timing.time("context", () =>
    loadContext(tenant, {
      contentHash,
      idempotencyKey: request.idempotencyKey,
      livemode,
      thumbprint,
      cardRef: request.a2a?.agent_card_ref ?? null,
      agentId: request.agentId,
      currency: request.facts.amount?.currency ?? null,
      counterparty: counterpartyKey(request),
    }),
  );
  if (context.keyOwner !== null && context.keyOwner !== contentHash) throw keyReused();
  if (context.replay) {
    return answer(context.replay, context.anchoredThrough, request, timing);
  }
  // Only a fresh payload needs them: a replay answers the stored one, as it was signed.
  const issuer = publicBaseUrl(tenant.env);
  const ttlSeconds = riskPayloadTtlSeconds(tenant.env);
  // A replay is never billed, so never refused; a fresh billable call past the cap is.
  await guardSpend(tenant, context.spend ?? null, livemode);

  const who = await tenant.caller();
  const input = riskInput(request, context, thumbprint, receivedAt);
  const faults = injectedFaults(tenant.env);
  if (rulesUnreadable(context)) faults.add("policy");
  const kya = timing.timeSync("kya", () => component("kya", faults, () => scoreIdentity(input)));
  const policy = timing.timeSync("policy", () =>
    component("policy", faults, () => evaluatePolicy(input)),
  );
  const decision = timing.timeSync("risk", () =>
    decide({ kya, policy, risk: component("risk", faults, () => scoreBehavior(input)) }, input),
  );

  const id = newId(receivedAt);
  const mandateId = newId(receivedAt);
  const submitted = withoutServiceRiskData(request.mandate);
  const mandateHash = payloadDigest(submitted);
  const created = new Date(receivedAt).toISOString();
  const agent = input.identity.agent;
  const snapshot = agent
    ? { id: agent.id, trust_score: agent.trust_score, risk_tier: agent.risk_tier }
    : null;
  const signed = await timing.time("sign", async () => {
    const key = await signer(tenant.env);
    const claims = riskPayloadClaims({
      issuer,
      audience: request.audience,
      orgId: who.orgId,
      livemode: who.livemode,
      assessmentId: id,
      mandateId,
      mandateHash,
      kind: request.kind,
      decision: decision.decision,
      riskScore: decision.risk_score,
      riskLevel: decision.risk_level,
      policyVersion: context.policy?.version ?? 0,
      agentId: agent?.id ?? null,
      payloadId: newId(receivedAt),
      issuedAt: receivedAt,
      ttlSeconds,
    });
    return { jws: await key.signClaims(claims, RISK_PAYLOAD_TYP), kid: key.kid };
  });

  const plan: PersistPlan = {
    record: {
      id,
      created,
      livemode: who.livemode,
      kind: request.kind,
      mandate_type: request.mandateType,
      mandate_id: mandateId,
      content_hash: contentHash,
      idempotency_key: request.idempotencyKey,
      agent: snapshot,
      decision: decision.decision,
      risk_level: decision.risk_level,
      risk_score: decision.risk_score,
      reason: decision.reason,
      policy_version: context.policy?.version ?? 0,
      confidences: decision.confidences,
      signals: decision.signals,
      rejection_reasons: decision.rejection_reasons,
      jws: signed.jws,
      kid: signed.kid,
      verify_url: `${issuer}/.well-known/jwks.json`,
      a2a: request.a2a ? { ...request.a2a } : null,
      latency_ms: Math.max(0, Math.round(Date.now() - receivedAt)),
      amount: request.facts.amount?.amount ?? null,
      currency: request.facts.amount?.currency ?? null,
      counterparty: counterpartyKey(request),
    },
    mandate: {
      id: mandateId,
      kind: request.kind,
      mandate_type: request.mandateType,
      vct: typeof submitted.vct === "string" ? submitted.vct : null,
      content_hash: contentHash,
      mandate_hash: mandateHash,
      mandate: submitted,
    },
    events: eventsOf(
      id,
      decision.decision,
      decision.risk_level,
      decision.risk_score,
      request,
      agent?.id ?? null,
    ),
    inputs: recordInputs(input),
  };
  // Nothing the ledger would record may be refused by the database afterwards.
  const unstorable = unstorableAt(plan, "request", 0);
  if (unstorable) throw new ApiError("invalid_request", [unstorable]);
  const record = await timing.time("persist", () => persistPlan(tenant, who, plan, faults));
  return answer(record, context.anchoredThrough, request, timing);
}

async function persistPlan(
  tenant: Tenant,
  who: Caller,
  fresh: PersistPlan,
  faults: Set<string>,
): Promise<AssessmentRecord> {
  const { content_hash: contentHash, idempotency_key: key, livemode } = fresh.record;
  // The ledger object arbitrates both idempotency keys at once: the content, and the caller's
  // key (per mode). Whichever was used first names the assessment every later request gets.
  const once = [`assessment:${contentHash}`];
  if (key !== null) once.push(`assessment-key:${livemode ? "live" : "test"}:${key}`);
  const change = {
    type: "assessment.completed",
    subject: { type: "assessment", id: fresh.record.id },
    payload: fresh.record,
    once,
  };
  return recordOnce(tenant.env, who, change, fresh, {
    // A racing duplicate or a retry finishes the first request's plan instead of its own.
    finish: async ({ entry, terms: plan }) => {
      if (faults.has("persist")) throw new Error("injected fault: persist");
      // The key was first used for other content: nothing of this request is written.
      if (plan.record.content_hash !== contentHash) throw keyReused();
      const stored = await persist(tenant, who.orgId, plan, entry);
      if (stored !== plan.record.id) throw new ApiError("internal_error");
      return recordOf(plan, entry);
    },
    // The first attempt's plan expired: had it reached Postgres, the context read would have
    // answered it as a replay, so its writer died. This one is recorded past the orphan.
    expired: async () => ORPHANED,
    schema: PersistPlan,
  });
}

function answer(
  record: AssessmentRecord,
  anchoredThrough: number,
  request: ParsedAssessRequest,
  timing: Stopwatch,
): Assessed {
  const outcome = toOutcome(record, record.audit_sequence <= anchoredThrough);
  return { outcome, record, mandate: withRiskPayload(request.mandate, outcome), timing };
}

/** The mandate to forward downstream: `risk_data` as submitted plus our namespaced payload. */
function withRiskPayload(mandate: Record<string, unknown>, outcome: Outcome) {
  const riskData = mandate.risk_data;
  if (
    riskData !== undefined &&
    (typeof riskData !== "object" || riskData === null || Array.isArray(riskData))
  ) {
    return mandate;
  }
  return {
    ...mandate,
    risk_data: {
      ...(riskData as Record<string, unknown> | undefined),
      [RISK_DATA_NAMESPACE]: {
        assessment_id: outcome.id,
        jws: outcome.risk_payload.jws,
        kid: outcome.risk_payload.kid,
        alg: outcome.risk_payload.alg,
        verify_url: outcome.risk_payload.verify_url,
      },
    },
  };
}

/**
 * The idempotency key of the assessment (`content_hash`): the request's canonical hash, as is
 * in live mode and prefixed `test:` in test mode, so a test key never gets a live assessment
 * back (the mode is known from the key's prefix, before the database is asked).
 */
function contentHashOf(request: ParsedAssessRequest, livemode: boolean): string {
  const hash = mandateCanonicalHash(request);
  return livemode ? hash : `test:${hash}`;
}

/** The holder key's RFC 7638 thumbprint; a key jose cannot read is an invalid mandate. */
async function holderThumbprint(request: ParsedAssessRequest): Promise<string | null> {
  if (!request.facts.holderKey) return null;
  try {
    return await calculateJwkThumbprint(request.facts.holderKey);
  } catch {
    throw new ApiError("mandate_invalid", [
      { path: "mandate.cnf.jwk", message: "not a usable public key (missing or invalid members)" },
    ]);
  }
}

/**
 * The counterparty as history stores and matches it: a digest, so an identifier of any length
 * fits the index and the comparison stays exact.
 */
function counterpartyKey(request: ParsedAssessRequest): string | null {
  const counterparty = counterpartyOf(request);
  return counterparty === null ? null : payloadDigest(counterparty);
}

function keyReused(): ApiError {
  return new ApiError("idempotency_key_reused", [
    { path: "idempotency_key", message: "already used with a different mandate" },
  ]);
}

function eventsOf(
  assessmentId: string,
  decision: string,
  riskLevel: string,
  riskScore: number,
  request: ParsedAssessRequest,
  agentId: string | null,
): PersistPlan["events"] {
  const data = {
    assessment_id: assessmentId,
    decision,
    risk_level: riskLevel,
    risk_score: riskScore,
    agent_id: agentId,
    kind: request.kind,
  };
  const types = ["assessment.completed"];
  if (decision === "deny") types.push("assessment.denied");
  if (decision === "review") types.push("assessment.flagged");
  return types.map((type) => ({ id: newId(), type, data }));
}

/**
 * A component that throws degrades the assessment instead of failing it: `decide` turns the
 * error into a `system` signal and never approves.
 */
function component(
  name: string,
  faults: Set<string>,
  run: () => ComponentResult,
): ComponentResult | Error {
  try {
    if (faults.has(name)) throw new Error(`injected fault: ${name}`);
    return run();
  } catch (error) {
    logError("assess component failed", { component: name, error: String(error) });
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Fault injection for the test suite only: `TEST_FAULTS` (comma-separated component names)
 * is honoured when ENVIRONMENT is `test` and ignored everywhere else.
 */
function injectedFaults(env: Env): Set<string> {
  if (modeOf(env) !== "test" || !env.TEST_FAULTS) return new Set();
  return new Set(env.TEST_FAULTS.split(","));
}
