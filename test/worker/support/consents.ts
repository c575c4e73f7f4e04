import {
  AUD,
  type BuiltHop,
  buildHops,
  type Claims,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../../support/ap2-chains";
import type { RequestBody } from "./api";
import { assessOk } from "./assess";
import { credentialOrg, leafUnder } from "./credentials";

export interface ConsentOptions {
  alg?: "ES256" | "EdDSA";
  /** The open mandate's constraints; default a CAD amount range. */
  constraints?: Claims[];
  /** False registers another issuer's key under the same kid: every payment is `untrusted_issuer`. */
  trusted?: boolean;
}

/**
 * One consent of a user: an open payment mandate (one root JWS) of an issuer to an agent whose
 * key the org registered (with a live key). `present(closed, rootJws?)` is a new presentation
 * under it (a new last hop signed by the agent, so a new assessment each time; `rootJws`, another
 * text of the root's JWS, re-spells the root), and `pay(closed)` assesses one with the live key.
 * Paying one `transaction_id` twice is a double spend; a `payment.budget` constraint caps the
 * total.
 */
export async function consentOrg(options: ConsentOptions = {}) {
  const alg = options.alg ?? "ES256";
  const issuer = await newSigner(alg, "issuer-1");
  const agent: Signer = await newSigner(alg);
  const anchor = options.trusted === false ? await newSigner(alg, "issuer-1") : issuer;
  const { org, key, agentId } = await credentialOrg([anchor.jwk], agent.jwk);
  const t = Math.floor(Date.now() / 1000);
  const [root] = (await buildHops([
    {
      signer: issuer,
      mandate: openPayment(agent, options.constraints ?? [RANGE], {
        iat: t - 3600,
        exp: t + 86_400,
      }),
    },
  ])) as [BuiltHop];
  const present = async (
    closed: Claims,
    rootJws = root.jws,
  ): Promise<RequestBody<"/v1/assess", "POST">> => {
    // The root's segment as a chain carries it: its JWS (as spelt) and disclosures, no last `~`.
    const segment = `${rootJws}${root.segment.slice(root.jws.length, -1)}`;
    const credential = await leafUnder(segment, agent, closed);
    return { credential, presentation: { aud: AUD, nonce: NONCE } };
  };
  const pay = async (closed: Claims) => await assessOk(key, await present(closed));
  return { org, key, agentId: agentId as string, agent, root, present, pay };
}
