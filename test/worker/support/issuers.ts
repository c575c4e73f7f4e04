/** Credential issuers registered through the API, and chains verified against them. */
import { env } from "cloudflare:test";
import { parseChain } from "../../../src/ap2-credentials/chain";
import { trustAnchorsFor } from "../../../src/ap2-credentials/issuers";
import { verifyChain } from "../../../src/ap2-credentials/verify";
import { readCredential } from "../../../src/auth/credential";
import { Tenant } from "../../../src/auth/tenant";
import {
  AUD,
  buildChain,
  closedPayment,
  NONCE,
  NOW,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../../support/ap2-chains";
import { call, type RequestBody } from "./api";

export function publicJwk(signer: Signer): Record<string, unknown> {
  return { ...signer.jwk };
}

/** POST /v1/credential-issuers with a key: the body is the route's request schema. */
export function register(key: string, body: RequestBody<"/v1/credential-issuers", "POST">) {
  return call("/v1/credential-issuers", { method: "POST", key, body });
}

/** POST /v1/credential-issuers with a body the request schema would refuse, as given. */
export function registerRaw(key: string, body: unknown) {
  return call("/v1/credential-issuers", { method: "POST", key, body, raw: true });
}

/** A payment chain whose root `issuer` signed (its `kid` in the header when it has one). */
export async function chainFrom(issuer: Signer, header: Record<string, unknown> = {}) {
  const agent = await newSigner("ES256");
  return buildChain([
    { signer: issuer, mandate: openPayment(agent, [RANGE]), header },
    { signer: agent, mandate: closedPayment() },
  ]);
}

/**
 * Verifies a chain with the anchors `trustAnchorsFor` gives the API key's org, as the assess
 * path does (the root's header passed along), and finishes the work it deferred.
 */
export async function verifyWith(key: string, credential: string) {
  const deferred: Promise<unknown>[] = [];
  const header = (name: string) => (name === "x-api-key" ? key : undefined);
  const tenant = new Tenant(env, await readCredential(header, env), "issuers:read", (work) => {
    deferred.push(work);
  });
  const chain = parseChain(credential);
  const anchors = await trustAnchorsFor(tenant, env, chain.hops[0]?.header);
  const verdict = await verifyChain(chain, {
    anchors,
    presentation: { aud: AUD, nonce: NONCE },
    now: NOW,
  });
  // Deferred work may defer more (a refresh stores its outcome): wait until none is left.
  for (let done = 0; done < deferred.length; done++) await deferred[done];
  return verdict;
}
