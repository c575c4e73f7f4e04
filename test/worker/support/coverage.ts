import { createHash } from "node:crypto";
import { newSigner } from "../../support/ap2-chains";
import { CAPTURE, decide, newMandate, redeem } from "./action";
import { call, type RequestBody, type TestOrg } from "./api";
import { agentOf, assessOk, createPolicy, jcs, payment } from "./assess";
import { provenHolder, registerIssuer } from "./credentials";

/** Helpers of the control-coverage suite (docs/control-coverage.md). */

export type Json = Record<string, any>;

/** POST /v1/control-coverage/effects with a key: the body is the route's request schema. */
export function reportEffect(
  key: string,
  body: RequestBody<"/v1/control-coverage/effects", "POST">,
) {
  return call("/v1/control-coverage/effects", { method: "POST", key, body });
}

/** POST /v1/control-coverage/effects with a body the request schema would refuse, as given. */
export function reportEffectRaw(key: string, body: unknown) {
  return call("/v1/control-coverage/effects", { method: "POST", key, body, raw: true });
}

type EffectBody = RequestBody<"/v1/control-coverage/effects", "POST">;

/** A minimal valid effect with a fresh reference. */
export function effect(changes: Partial<EffectBody> = {}): EffectBody {
  return {
    effect: "payment.executed",
    observer: "stripe-webhook",
    reference: `pi_${crypto.randomUUID()}`,
    occurred_at: new Date().toISOString(),
    ...changes,
  };
}

/**
 * An assessment of a fresh agent (19900 USD to a new payee: approved unless a policy denies).
 * The agent proves itself with a verified chain from an issuer registered for the call: an
 * agent named only as a claim (decoded JSON) earns no trust to be approved (docs/assess.md).
 */
export async function assessment(org: TestOrg, key: string) {
  const issuer = await newSigner("ES256", `issuer-${crypto.randomUUID()}`);
  await registerIssuer(org, [issuer.jwk], `wallet-${crypto.randomUUID()}`);
  const agent = await provenHolder(org, issuer);
  return assessOk(key, await agent.body({ payment_amount: { amount: 19_900, currency: "USD" } }));
}

/** An assessment the active policy denies (it caps single payments at 100). */
export async function deniedAssessment(org: TestOrg, key: string) {
  await createPolicy(org, { max_amount: 100 });
  return assessOk(key, { mandate: payment(), agent_id: (await agentOf(org)).id });
}

/** A decider, an executor, and a mandate with room for ten ALLOWs of up to 5000 USD. */
export async function actionSetup(org: TestOrg) {
  const { key } = await org.key(["assess:write", "assess:read"]);
  const executor = await org.key(["assess:write"]);
  const mandate = await newMandate(org, { max_uses: 10, max_amount_total: 100_000 });
  return { key, executor, mandate };
}

type Setup = Awaited<ReturnType<typeof actionSetup>>;

/** A decision for `resource` (ALLOW with a grant unless the request says otherwise). */
export async function decision(setup: Setup, resource: string, changes: Json = {}) {
  const res = await decide(setup.key, setup.mandate.id, {
    ...CAPTURE,
    resource,
    audience: setup.executor.id,
    ...changes,
  });
  if (res.status !== 201) throw new Error(`decision failed: ${res.status} ${res.text}`);
  return res.json;
}

/** Redeems a decision's grant as its executor; returns the redemption. */
export async function redeemed(setup: Setup, allowed: Json) {
  const res = await redeem(setup.executor.key, {
    grant: allowed.grant.jws,
    action: allowed.action,
    resource: allowed.resource,
    amount: allowed.amount,
    currency: allowed.currency,
  });
  if (res.status !== 200) throw new Error(`redemption failed: ${res.status} ${res.text}`);
  return res.json;
}

/** Every gap field, for an exact comparison. */
export function gap(code: string, message: string, fields: Json = {}): Json {
  return {
    code,
    message,
    effect_id: null,
    reference: null,
    occurred_at: null,
    assessment_id: null,
    decision_id: null,
    grant_id: null,
    ...fields,
  };
}

/** The gap fields an effect contributes. */
export function ofEffect(record: Json, gate: Json = {}): Json {
  return {
    effect_id: record.id,
    reference: record.reference,
    occurred_at: record.occurred_at,
    ...gate,
  };
}

// --- Independent checks: node:crypto and RFC 8785 from the test support, not jose or src/ ---

/**
 * Verifies a compact JWS against a JWK set (as /.well-known/jwks.json publishes it), with
 * node:crypto and the suite's own RFC 8032 arithmetic: the artifact tests' verifier.
 */
export { verifyOffline as verifyCompact } from "./artifacts";

/** `sha256:<hex>` of the RFC 8785 form of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${createHash("sha256").update(jcs(value), "utf8").digest("hex")}`;
}
