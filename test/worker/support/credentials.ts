import { env, runInDurableObject } from "cloudflare:test";
import { CompactSign, type JWK } from "jose";
import { expect } from "vitest";
import { ledgerOf } from "../../../src/ledger/ledger";
import type { OrgLedger } from "../../../src/org-ledger/org-ledger";
import {
  AUD,
  buildChain,
  type Claims,
  closedPayment,
  element,
  hashOf,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../../support/ap2-chains";
import { call, type TestOrg } from "./api";
import { type Json, orgWithKey } from "./assess";
import { newAgent } from "./identity";

/** An org with a live key, an issuer registered through the API, and the holder's agent. */
export interface CredentialOrg {
  org: TestOrg;
  key: string;
  issuerId: string;
  agentId: string | null;
}

/** Registers `jwks` as one credential issuer of the org (POST /v1/credential-issuers). */
export async function registerIssuer(org: TestOrg, keys: JWK[], name = "User's wallet") {
  const res = await call("/v1/credential-issuers", {
    method: "POST",
    token: org.token,
    body: { name, jwks: { keys } },
  });
  if (res.status !== 201) throw new Error(`issuer registration failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/**
 * Registers `jwk` as a key of a new agent of the org: its holder, proven by possession.
 * `agentBody` adds to the agent's creation body (e.g. a shared `principal_id`).
 */
export async function registerHolder(
  org: TestOrg,
  jwk: JWK,
  agentBody: Record<string, unknown> = {},
): Promise<string> {
  const agent = await newAgent(org, agentBody);
  const res = await call(`/v1/agents/${agent.id}/keys`, {
    method: "POST",
    token: org.token,
    body: { jwk },
  });
  if (res.status !== 201) throw new Error(`key registration failed: ${res.status} ${res.text}`);
  return agent.id as string;
}

export async function credentialOrg(
  anchors: JWK[],
  holder: JWK | null,
  mode: "live" | "test" = "live",
): Promise<CredentialOrg> {
  const { org, key } = await orgWithKey(mode);
  const issuerId = await registerIssuer(org, anchors);
  const agentId = holder === null ? null : await registerHolder(org, holder);
  return { org, key, issuerId, agentId };
}

/**
 * Records a prior approved spend under `consent` (the digest of the root's `header.payload`) in
 * the org's ledger object, in one mode (a vector's context).
 */
export async function seedSpend(
  orgId: string,
  consent: string,
  amount: number,
  uses: number,
  livemode = true,
) {
  const stub = ledgerOf(env as never, orgId);
  await runInDurableObject(stub, (object) => {
    const store = (
      object as unknown as OrgLedger as unknown as {
        store: { addSpend: (...a: unknown[]) => void };
      }
    ).store;
    // Sequences no assessment uses: only the totals matter to the rule.
    for (let i = 0; i < Math.max(uses, 1); i++) {
      store.addSpend(livemode, consent, `prior-${i}`, i === 0 ? amount : 0, "CAD", -1 - i);
    }
  });
}

/** The consent a chain's root names: base64url(SHA-256(its `header.payload`)). */
export function consentOf(credential: string): string {
  const root = credential.split("~")[0] as string;
  return hashOf(root.slice(0, root.lastIndexOf(".")));
}

export function reasonOf(outcome: Json, key: string): Json | undefined {
  return (outcome.rejection_reasons as Json[]).find((r) => r.key === key);
}

/** The credential block of a denied assessment for `failure`, and its reason. */
export function expectRefused(outcome: Json, failure: string) {
  expect(outcome.outcome.decision).toBe("deny");
  expect(outcome.credential).toMatchObject({ verified: false, failure });
  expect(reasonOf(outcome, `credential_${failure}`)).toMatchObject({
    category: "mandate",
    description: expect.stringContaining(failure),
  });
  expect(outcome.confidences.mandate_validity).toBe(0);
}

/**
 * A new agent of `org` holding a fresh key: `body(closed, hop)` is a fresh verified two-hop chain
 * (a new root each call, so never `already_consumed`) signed by `issuer` then by the agent's
 * key, of a CAD 50 payment (or `closed`'s amount, payee...; `hop` adds to the last hop's JWT
 * claims), with its presentation. Only such a request proves the agent and moves its trust
 * (docs/assess.md).
 */
export async function provenHolder(
  org: TestOrg,
  issuer: Signer,
  agentBody: Record<string, unknown> = {},
) {
  const agent = await newSigner("ES256");
  const agentId = await registerHolder(org, agent.jwk, agentBody);
  const body = async (closed: Claims = {}, hop: Claims = {}) => {
    const t = Math.floor(Date.now() / 1000);
    const mandate = closedPayment(5000, { iat: t - 60, exp: t + 3600, ...closed });
    const amount = mandate.payment_amount as { amount: number; currency: string };
    const range = { ...RANGE, currency: amount.currency, max: Math.max(RANGE.max, amount.amount) };
    const open = openPayment(agent, [range], { iat: t - 3600, exp: t + 86_400 });
    const credential = await buildChain([
      { signer: issuer, mandate: open },
      { signer: agent, mandate, claims: { iat: t - 60, ...hop } },
    ]);
    return { credential, presentation: { aud: AUD, nonce: NONCE } };
  };
  return { agentId, body };
}

/**
 * An org with a registered issuer and one proven agent; `holder()` adds another (`agentBody`
 * adds to its creation body, e.g. `{ principal_id }`).
 */
export async function provenAgentOrg(mode: "live" | "test" = "live") {
  const issuer = await newSigner("ES256", "issuer-1");
  const { org, key } = await orgWithKey(mode);
  const issuerId = await registerIssuer(org, [issuer.jwk]);
  const first = await provenHolder(org, issuer);
  return {
    org,
    key,
    issuerId,
    ...first,
    holder: (agentBody: Record<string, unknown> = {}) => provenHolder(org, issuer, agentBody),
  };
}

/**
 * A credential of `root` (the root's segment `<JWS>~<disclosure>…`, without its trailing `~`)
 * and a new last hop signed by `agent`, for a closed payment of 50.00 CAD at the current time
 * (`closed` over those): a new presentation under the same consent each call.
 */
export async function leafUnder(root: string, agent: Signer, closed: Claims): Promise<string> {
  const t = Math.floor(Date.now() / 1000);
  const item = element(closedPayment(5000, { iat: t - 60, exp: t + 3600, ...closed }));
  const claims = {
    delegate_payload: [item.ref],
    _sd_alg: "sha-256",
    iat: t - 60,
    aud: AUD,
    nonce: NONCE,
    sd_hash: hashOf(`${root}~`),
  };
  const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: agent.alg, typ: "kb+sd-jwt" })
    .sign(agent.privateKey);
  return `${root}~~${jws}~${item.disclosure}~`;
}

/**
 * An open mandate of a fresh issuer to a fresh holder of `org`, with `constraints`, and `pay`,
 * which assesses a new closed payment under it with `key` (a new transaction each call). The
 * consent's `reference` is what `GET /v1/mandate-budgets/{reference}` names.
 */
export async function mandateOf(org: TestOrg, constraints: Claims[]) {
  const issuer = await newSigner("ES256", "issuer-1");
  const agent = await newSigner("ES256");
  await registerIssuer(org, [issuer.jwk]);
  await registerHolder(org, agent.jwk);
  const t = Math.floor(Date.now() / 1000);
  const credential = await buildChain([
    {
      signer: issuer,
      mandate: openPayment(agent, constraints, { iat: t - 3600, exp: t + 86_400 }),
    },
    {
      signer: agent,
      mandate: closedPayment(5000, { iat: t - 60, exp: t + 3600 }),
      claims: { iat: t - 60 },
    },
  ]);
  const root = credential.split("~~")[0] as string;
  let n = 0;
  const pay = async (key: string, amount = 1000) => {
    n += 1;
    const closed = { payment_amount: { amount, currency: "CAD" }, transaction_id: `tx-${n}` };
    const body = {
      credential: await leafUnder(root, agent, closed),
      presentation: { aud: AUD, nonce: NONCE },
    };
    const res = await call("/v1/assess", { method: "POST", key, body });
    if (res.status !== 200) throw new Error(`assess failed: ${res.status} ${res.text}`);
    return res.json;
  };
  return { reference: consentOf(credential), pay };
}
