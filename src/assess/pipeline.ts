import { calculateJwkThumbprint } from "jose";
import type { Caller } from "../auth/caller";
import type { Tenant } from "../auth/tenant";
import { guardSpend } from "../billing/guard";
import { publicBaseUrl } from "../env";
import { ApiError } from "../errors";
import { commitAssessment } from "../ledger/ledger";
import type { Refinement } from "../schemas/reviews";
import { signer } from "../signing/signer";
import { requireLivePresentation } from "./ap2-credential";
import type { AssessmentCommit } from "./commit";
import { loadContext } from "./context";
import { credentialOf } from "./credential-status";
import { assessmentCommit } from "./draft";
import { withRiskPayload } from "./facts";
import { httpSignatureQuery } from "./http-signature/nonce";
import { httpSignatureOf, withHttpSignature } from "./http-signature/outcome";
import { riskInput, rulesUnreadable } from "./input";
import { modelsHeld } from "./learned-model";
import { type AssessmentRecord, type Outcome, toOutcome } from "./outcome";
import { counterpartyKey, networkOf } from "./payment-keys";
import { evaluatePolicy } from "./policy-rules";
import { startBeside } from "./prefetch";
import { openedRefinement, refinementOf } from "./refinement";
import { mandateCanonicalHash, type ParsedAssessRequest } from "./request";
import { decide, scoreIdentity } from "./risk";
import { riskPayloadTtlSeconds } from "./risk-payload";
import {
  component,
  injectedFaults,
  modelPayment,
  riskStage,
  shadowModelVerdict,
} from "./risk-stage";
import { shadowVerdict } from "./shadow";
import { Stopwatch } from "./stopwatch";
import { unstorableAt } from "./storable";
import { rememberTelemetry } from "./telemetry-store";

export interface Assessed {
  outcome: Outcome;
  record: AssessmentRecord;
  /** The submitted mandate with the signed Risk Payload in `risk_data`. */
  mandate: Record<string, unknown>;
  timing: Stopwatch;
}

/**
 * POST /v1/assess after parsing: know-your-agent, policy, risk, then the org's ledger object
 * signs, sequences and stores. Two sequential hops for a fresh assessment (the context read,
 * which also authenticates, and the ledger call), one for a replay (docs/architecture.md, "The
 * assess path").
 */
export async function runAssessment(
  tenant: Tenant,
  request: ParsedAssessRequest,
  receivedAt: number,
): Promise<Assessed> {
  const timing = new Stopwatch();
  const livemode = tenant.livemode;
  const presented = request.credential;
  if (presented && livemode) requireLivePresentation(presented);
  if (request.testClock && livemode) throw testClockRefused("test clocks are for test keys only");
  const contentHash = contentHashOf(request, livemode);
  // With a credential, the agent is named by the key its last hop claims to be signed with.
  const thumbprint = presented ? presented.claimedHolder : await holderThumbprint(request);
  const credentialRoot = presented ? presented.chain.hops[0]?.header : null;
  const started = await startBeside(tenant.env, request, thumbprint, credentialRoot, receivedAt);
  const { network, digests, signature, directory } = started;
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
      credentialRoot,
      testClock: request.testClock ?? null,
      modelsHeld: modelsHeld(),
      network,
      telemetry: digests,
      httpSignature: signature ? httpSignatureQuery(signature) : null,
    }),
  );
  if (context.keyOwner !== null && context.keyOwner !== contentHash) throw keyReused();
  if (context.replay) {
    const refinement = refinementOf(context.replayReview, context.replay.verify_url);
    return answer(context.replay, context.anchoredThrough, request, timing, refinement);
  }
  if (context.testClockMissing) throw testClockRefused("no such test clock");
  // The instant the assessment is made at: its test clock's, else its arrival.
  const now = context.asOf ? Date.parse(context.asOf) : receivedAt;
  // Only a fresh payload needs them: a replay answers the stored one, as it was signed.
  const issuer = publicBaseUrl(tenant.env);
  const ttlSeconds = riskPayloadTtlSeconds(tenant.env);
  // A replay is never billed, so never refused; a fresh billable call past the cap is.
  await guardSpend(tenant, context.spend ?? null, livemode);

  const who = await tenant.caller();
  const credential = presented
    ? await timing.time("kya", () =>
        credentialOf(presented, context.anchors, now, started.status, receivedAt),
      )
    : null;
  const verdict = credential?.verdict ?? null;
  const evidence = credential?.evidence ?? null;
  const httpSignature = signature
    ? await timing.time("kya", () =>
        httpSignatureOf(tenant, signature, directory, context, thumbprint, now),
      )
    : null;
  const networked = networkOf(network, context, verdict?.issuerKeyThumbprint ?? null);
  const input = withHttpSignature(
    riskInput(request, context, thumbprint, now, evidence, networked),
    httpSignature,
  );
  const faults = injectedFaults(tenant.env);
  if (rulesUnreadable(context)) faults.add("policy");
  const kya = timing.timeSync("kya", () => component("kya", faults, () => scoreIdentity(input)));
  const policy = timing.timeSync("policy", () =>
    component("policy", faults, () => evaluatePolicy(input)),
  );
  const payment = modelPayment(request, now, networked);
  const risk = timing.timeSync("risk", () => riskStage(input, context, payment, faults));
  const decision = timing.timeSync("risk", () =>
    decide({ kya, policy, risk: risk.part }, input, risk.model ?? undefined),
  );
  // Recorded with the assessment, never acted on, never signed (docs/shadow-policies.md).
  const shadow = timing.timeSync("policy", () =>
    shadowVerdict(request, context, thumbprint, now, evidence, networked),
  );
  const shadowModel = timing.timeSync("risk", () =>
    shadowModelVerdict(context, payment, { kya, policy }, input),
  );

  const commit = assessmentCommit({
    request,
    who,
    context,
    input,
    contentHash,
    thumbprint,
    now,
    receivedAt,
    issuer,
    ttlSeconds,
    risk,
    decision,
    credential,
    httpSignature,
    networked,
    shadow,
    shadowModel,
    faults,
  });
  const id = commit.record.id;
  // Nothing the ledger would record may be refused by the database afterwards.
  const unstorable = unstorableAt(commit, "request", 0);
  if (unstorable) throw new ApiError("invalid_request", [unstorable]);
  // Signing happens in the ledger object, so `persist` times the whole second hop.
  const { record, reviewId } = await timing.time("persist", () => commitTo(tenant, who, commit));
  // What the agent was seen from, for the next request: only the digests, after the response.
  if (digests && record.agent && record.id === id) {
    rememberTelemetry(tenant, digests, record.agent.id, record.created);
  }
  const refinement = reviewId === null ? null : openedRefinement(reviewId);
  return answer(record, context.anchoredThrough, request, timing, refinement);
}

/**
 * The second hop: the org's ledger object signs, sequences and stores the assessment (or
 * answers the first commit under the same keys). Its answer is the stored record.
 */
async function commitTo(
  tenant: Tenant,
  who: Caller,
  commit: AssessmentCommit,
): Promise<{ record: AssessmentRecord; reviewId: string | null }> {
  // The ledger object signs with the same keys; without one nothing is sequenced (503): the
  // Ed25519 key always, the ES256 key when a Mandate Receipt is to be signed.
  const key = await signer(tenant.env);
  if (commit.verdict.receipt && key.es256.kid === null)
    throw new ApiError("signing_key_unavailable");
  const answered = await commitAssessment(tenant.env, who, commit);
  if (answered.kind === "refused") {
    throw new ApiError("spending_cap_reached", {
      message: "the spending cap was reached while this request was in flight",
    });
  }
  if (answered.kind === "expired") {
    // An earlier commit under these keys, whose answer the ledger object no longer keeps (a
    // day later): had it been stored under this content, the context read would have answered
    // it, so the key names other content.
    throw keyReused();
  }
  // The key was first used for other content: nothing of this request was written.
  if (answered.record.content_hash !== commit.record.content_hash) throw keyReused();
  return { record: answered.record, reviewId: answered.reviewId };
}

function answer(
  record: AssessmentRecord,
  anchoredThrough: number,
  request: ParsedAssessRequest,
  timing: Stopwatch,
  refinement: Refinement | null,
): Assessed {
  const outcome = toOutcome(record, record.audit_sequence <= anchoredThrough, refinement);
  return { outcome, record, mandate: withRiskPayload(request.mandate, outcome), timing };
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

function testClockRefused(message: string): ApiError {
  return new ApiError("invalid_request", [{ path: "test_clock", message }]);
}

function keyReused(): ApiError {
  return new ApiError("idempotency_key_reused", [
    { path: "idempotency_key", message: "already used with a different mandate" },
  ]);
}
