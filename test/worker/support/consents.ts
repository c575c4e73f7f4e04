import { CompactSign } from "jose";
import {
  AUD,
  buildHops,
  type Claims,
  closedPayment,
  element,
  hashOf,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
} from "../../support/ap2-chains";
import { assessOk } from "./assess";
import { credentialOrg } from "./credentials";

/**
 * One consent of a user: an open payment mandate (one root JWS) of an issuer to an agent whose
 * key the org registered, and `pay(closed)`, which presents a closed payment under it (a new
 * last hop signed by the agent, so a new assessment each time) and answers the assessment.
 * Paying one `transaction_id` twice is a double spend; a `payment.budget` constraint caps the
 * total. `trusted: false` registers another issuer's key, so every payment is refused
 * `untrusted_issuer`.
 */
export async function consentOrg(constraints: Claims[] = [RANGE], trusted = true) {
  const issuer = await newSigner("ES256", "issuer-1");
  const agent = await newSigner("ES256");
  const anchor = trusted ? issuer : await newSigner("ES256", "issuer-1");
  const { org, key, agentId } = await credentialOrg([anchor.jwk], agent.jwk);
  const t = Math.floor(Date.now() / 1000);
  const [root] = await buildHops([
    {
      signer: issuer,
      mandate: openPayment(agent, constraints, { iat: t - 3600, exp: t + 86_400 }),
    },
  ]);
  const rootSegment = root?.segment as string;
  const pay = async (closed: Claims) => {
    const item = element(closedPayment(5000, { iat: t - 60, exp: t + 3600, ...closed }));
    const claims = {
      delegate_payload: [item.ref],
      _sd_alg: "sha-256",
      iat: t - 60,
      aud: AUD,
      nonce: NONCE,
      sd_hash: hashOf(rootSegment),
    };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: agent.alg, typ: "kb+sd-jwt" })
      .sign(agent.privateKey);
    const credential = `${rootSegment}~${jws}~${item.disclosure}~`;
    return await assessOk(key, { credential, presentation: { aud: AUD, nonce: NONCE } });
  };
  return { org, key, agentId: agentId as string, pay };
}
