/**
 * The assess pipeline's compute, timed where a clock runs: the same pure code the Worker runs
 * between its I/O waits (parse and validate, canonical hash, key thumbprint, know-your-agent,
 * policy, risk, and the EdDSA signature of the Risk Payload), in a loop in Node. Inside workerd
 * the clock moves only at I/O and in whole milliseconds, so `Server-Timing` cannot show it.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { forgetVerifiedSignatures } from "../../src/ap2-credentials/keys.ts";
import { type TrustAnchors, verifyChain } from "../../src/ap2-credentials/verify.ts";
import { scoreBehavior } from "../../src/assess/behavior.ts";
import { type AssessContext, type ModelContext, riskInput } from "../../src/assess/input.ts";
import { type ModelPayment, modelFindings, runModel } from "../../src/assess/learned-model.ts";
import { evaluatePolicy } from "../../src/assess/policy-rules.ts";
import { mandateCanonicalHash, parseAssessRequest } from "../../src/assess/request.ts";
import { decide, scoreIdentity } from "../../src/assess/risk.ts";
import type { CredentialEvidence } from "../../src/assess/risk-input.ts";
import { shadowVerdict } from "../../src/assess/shadow.ts";
import type { HistoryEvent } from "../../src/model/features.ts";
import { trainRiskModel } from "../../src/model/training.ts";
import { ed25519Jwk } from "../local-keys.ts";
import { consentFor, p256KeyPair, presentation } from "./assess-credentials.ts";
import { SHADOW_RULES } from "./assess-tenant.ts";
import { SIMULATION_START_MS, scaledOptions, simulate } from "./quality/simulator.ts";

const DAY_MS = 86_400_000;

export interface ComputeFigures {
  iterations: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** A realistic request (an open payment mandate bound to a registered key) and its context. */
async function scenario() {
  const { publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = await exportJWK(publicKey);
  const body = {
    mandate: {
      vct: "mandate.payment.open.1",
      constraints: [
        { type: "payment.amount_range", currency: "USD", max: 200000, min: 0 },
        { type: "payment.allowed_payees", allowed: [{ id: "m-7", name: "Shop" }] },
        { type: "payment.reference", conditional_transaction_id: "FzLoxbbtgQGYZxoSM2NJYJ" },
      ],
      cnf: { jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } },
      iat: Math.floor(Date.now() / 1000) - 10,
      exp: Math.floor(Date.now() / 1000) + 3600,
      risk_data: { country: "US" },
    },
    mandateType: "open_payment",
    a2a: { task_id: "t-1", agent_card_ref: "sha256:00" },
    idempotency_key: "bench-1",
  };
  const context: AssessContext = {
    replay: null,
    replayReview: null,
    keyOwner: null,
    policy: {
      id: "0190b7d2-8c5e-7c4a-9d3e-0000000000a1",
      version: 3,
      rules: {
        max_amount: 1000000,
        currencies: ["USD", "EUR"],
        geo: { allow: ["US", "DE"] },
        velocity: { window: "1h", max: 1000 },
      },
    },
    keyHit: { agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", status: "active" },
    cardHit: null,
    explicit: null,
    agent: {
      id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
      status: "active",
      trust_score: 62,
      risk_tier: "medium",
      card_status: "verified",
    },
    history: {
      window_count: 40,
      burst: 2,
      approved_count: 300,
      median_amount: 4500,
      counterparty_seen: true,
    },
    anchoredThrough: 0,
  };
  const key = await importJWK(ed25519Jwk().privateJwk as Parameters<typeof importJWK>[0], "EdDSA");
  return { body, context, key };
}

/**
 * The same with an AP2 credential instead of decoded JSON: a 3-hop ES256 chain (the bench's
 * consent, assess-credentials.ts), verified against the issuer's key, as the Worker does after
 * its context read.
 */
async function credentialScenario() {
  const base = await scenario();
  const consent = await consentFor(p256KeyPair());
  const body = await presentation(
    consent,
    { id: "m-7", name: "Shop", website: "https://shop.example" },
    4200,
  );
  const anchors: TrustAnchors = { keys: [{ issuerId: "bench", jwk: consent.issuer }] };
  return { ...base, body, anchors };
}

/** The same with the org's shadow policy evaluated next to the active one (its windows counted). */
async function shadowScenario() {
  const base = await scenario();
  const shadow = {
    id: "0190b7d2-8c5e-7c4a-9d3e-00000000000a",
    version: null,
    rules: SHADOW_RULES,
    window_count: 12,
    aggregates: { "count.agent.600": 12 },
  };
  return { ...base, context: { ...base.context, shadow } };
}

/**
 * The same with the org's active learned model (issue 39): a model the service's trainer made
 * on the Handbook simulator's history (1,000 customers, seed 0, as of day 70), and the history
 * the context read returns for it: a busy agent's payments of 30 days and a busy payee's of 37,
 * with its known frauds.
 */
async function modelScenario() {
  const base = await scenario();
  const { models, payment } = benchModel();
  return { ...base, context: { ...base.context, models }, payment };
}

let trained: ReturnType<typeof trainBenchModel> | undefined;
function benchModel() {
  trained ??= trainBenchModel();
  return trained;
}

function trainBenchModel() {
  const tx = simulate(scaledOptions(0, 1000, 2000));
  const events: HistoryEvent[] = Array.from({ length: tx.count }, (_, i) => {
    const time = SIMULATION_START_MS + (tx.seconds[i] as number) * 1000;
    return {
      time,
      agent: tx.customer[i] as number,
      payee: tx.terminal[i] as number,
      amount: Math.round((tx.amount[i] as number) * 100),
      fraudKnownAt: tx.fraud[i] ? time + 7 * DAY_MS : null,
    };
  });
  const asOf = SIMULATION_START_MS + 70 * DAY_MS;
  const past = events.filter((e) => e.time < asOf);
  const result = trainRiskModel(past, {
    asOf,
    labelDelayMs: 7 * DAY_MS,
    trainingWindowMs: 7 * DAY_MS,
  });
  if (result.status !== "ready") throw new Error(`bench model: ${result.reason}`);
  // The busiest agent and payee of the last day: the longest lists the context read returns.
  const last = past.filter((e) => e.time >= asOf - DAY_MS);
  const busiest = (key: "agent" | "payee") => {
    const counts = new Map<string | number, number>();
    for (const e of last) counts.set(e[key], (counts.get(e[key]) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  };
  const agent = busiest("agent");
  const payee = busiest("payee");
  const models: ModelContext = {
    active: {
      id: "0190b7d2-8c5e-7c4a-9d3e-0000000000b1",
      version: 1,
      label_delay_seconds: 7 * 86_400,
      thresholds: {
        review: { probability: result.metrics.thresholds.review.probability },
        deny: { probability: result.metrics.thresholds.deny.probability },
      },
      params: result.model,
    },
    shadow: null,
    agentPast: past
      .filter((e) => e.agent === agent && e.time >= asOf - 30 * DAY_MS)
      .map((e) => [e.time, e.amount, String(e.payee)]),
    payeePast: past
      .filter((e) => e.payee === payee && e.time >= asOf - 37 * DAY_MS)
      .map((e) => [e.time, e.fraudKnownAt]),
  };
  return { models, payment: { time: asOf, amount: 4200, payee: String(payee) } };
}

type Scenario = Omit<Awaited<ReturnType<typeof scenario>>, "body"> & {
  body: Record<string, unknown>;
  anchors?: TrustAnchors;
  payment?: ModelPayment;
};

/** One assessment's compute, as runAssessment does it between its I/O waits. */
async function once(s: Scenario): Promise<void> {
  const request = parseAssessRequest(structuredClone(s.body), "1.0");
  mandateCanonicalHash(request);
  let evidence: CredentialEvidence | null = null;
  let thumbprint: string | null = null;
  if (request.credential && s.anchors) {
    // Each run verifies all three hops: the Worker's cache of delegating hops' signatures would
    // otherwise answer the same chain's root and intermediate from memory (keys.ts).
    forgetVerifiedSignatures();
    const verdict = await verifyChain(request.credential.chain, {
      anchors: s.anchors,
      presentation: request.credential.presentation,
      now: Math.floor(Date.now() / 1000),
    });
    if (!verdict.verified) throw new Error(`the bench credential is refused: ${verdict.failure}`);
    evidence = { verified: true, failure: null, detail: null };
    thumbprint = request.credential.claimedHolder;
  } else if (request.facts.holderKey) {
    thumbprint = await calculateJwkThumbprint(request.facts.holderKey);
  }
  const input = riskInput(request, s.context, thumbprint, Date.now(), evidence);
  // The pipeline's behaviour stage: the active learned model when there is one.
  const active = s.context.models?.active;
  const model =
    active && s.context.models && s.payment ? runModel(active, s.context.models, s.payment) : null;
  const decision = decide(
    {
      kya: scoreIdentity(input),
      policy: evaluatePolicy(input),
      risk: model ? modelFindings(model) : scoreBehavior(input),
    },
    input,
    model ?? undefined,
  );
  // What the pipeline adds with a shadow policy: null (nothing done) without one.
  shadowVerdict(request, s.context, thumbprint, Date.now(), evidence);
  await new SignJWT({ decision: decision.decision, risk_score: decision.risk_score })
    .setProtectedHeader({ alg: "EdDSA", kid: "bench", typ: "risk-payload+jwt" })
    .setIssuedAt()
    .sign(s.key);
}

/**
 * The learned model alone, as the behaviour stage runs it: the features from the context's
 * history, the trees, the score and the reasons (the budget: 0.1 ms at p50).
 */
export function measureModelInference(iterations = 20_000): ComputeFigures {
  const { models, payment } = benchModel();
  const active = models.active as NonNullable<ModelContext["active"]>;
  const run = () => runModel(active, models, payment);
  for (let i = 0; i < 2000; i++) run(); // JIT warm-up
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { iterations, p50: percentile(times, 50), p99: percentile(times, 99) };
}

export async function measureCompute(
  iterations = 5000,
  kind: "json" | "credential" | "shadow" | "model" = "json",
): Promise<ComputeFigures> {
  const scenarios = {
    json: scenario,
    credential: credentialScenario,
    shadow: shadowScenario,
    model: modelScenario,
  };
  const s: Scenario = await scenarios[kind]();
  for (let i = 0; i < 500; i++) await once(s); // JIT warm-up
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await once(s);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { iterations, p50: percentile(times, 50), p99: percentile(times, 99) };
}
