import { describe, expect, it } from "vitest";
import { parseChain } from "../../src/ap2-credentials/chain";
import { verifyChain } from "../../src/ap2-credentials/verify";
import vector from "../fixtures/ap2-v0.2-vectors/payment_valid_basic.json";
import {
  buildChain,
  closedPayment,
  NOW,
  newSigner,
  openPayment,
  RANGE,
  verifyBuilt,
} from "../support/ap2-chains";

// The credential verifier inside workerd, where the service runs it: jose over workerd's
// WebCrypto (ES256 and Ed25519) and the SHA-256 of nodejs_compat. The rules themselves are
// specified by the Node tests (test/node/credentials-*.test.ts).

describe("credential chains in workerd", () => {
  it("verifies an ES256 vector of the AP2 SDK", async () => {
    const verdict = await verifyChain(parseChain(vector.credential), {
      anchors: { keys: vector.trusted_keys.map((k) => ({ issuerId: k.role, jwk: k.jwk })) },
      presentation: {
        aud: vector.expected_aud,
        nonce: vector.expected_nonce,
        checkout_jwt: vector.constraint_inputs.checkout_jwt,
      },
      now: vector.verify_params.current_time,
    });
    expect(verdict).toMatchObject({ verified: true, failure: null, issuerId: "user" });
    expect(verdict.reference).toBe(vector.closed_mandate_reference);
    expect([...verdict.openMandates, verdict.mandate]).toEqual(vector.decoded);
  });

  it("verifies an EdDSA chain made here, and refuses it once a hop is re-signed", async () => {
    const [issuer, agent, impostor] = await Promise.all([
      newSigner("EdDSA", "issuer"),
      newSigner("EdDSA", "agent"),
      newSigner("EdDSA", "agent"),
    ]);
    const hops = (leafSigner: typeof agent) => [
      { signer: issuer, mandate: openPayment(agent, [RANGE]) },
      { signer: leafSigner, mandate: closedPayment() },
    ];
    const verdict = await verifyBuilt(await buildChain(hops(agent)), [issuer]);
    expect(verdict).toMatchObject({ verified: true, hops: 2, vct: "mandate.payment.1" });
    expect(verdict.spend?.amount).toBe(5000);
    const forged = await verifyBuilt(await buildChain(hops(impostor)), [issuer], {}, NOW);
    expect(forged.failure).toBe("delegation_broken");
  });
});
