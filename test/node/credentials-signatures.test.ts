import { createHmac } from "node:crypto";
import { CompactSign, calculateJwkThumbprint } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { parseChain } from "../../src/ap2-credentials/chain";
import {
  forgetVerifiedSignatures,
  isPinned,
  pinKey,
  verifiesUnder,
} from "../../src/ap2-credentials/keys";
import { verifyChain } from "../../src/ap2-credentials/verify";
import {
  AUD,
  type BuiltHop,
  b64url,
  buildChain,
  buildHops,
  closedPayment,
  ecdsaTwin,
  element,
  extendHops,
  type HopSpec,
  isHighS,
  joinHops,
  NONCE,
  NOW,
  newSigner,
  openPayment,
  RANGE,
  respelt,
  type Signer,
  signatureSpellings,
  verifyBuilt,
} from "../support/ap2-chains";

// Who may sign which hop, with which algorithm, and how hops are tied together: chains made
// with jose at run time (test/support/ap2-chains.ts), each breaking one rule.

let issuer: Signer;
let agent: Signer;
let agent2: Signer;
let edIssuer: Signer;
let edAgent: Signer;
let edAgent2: Signer;

beforeAll(async () => {
  [issuer, agent, agent2] = await Promise.all([
    newSigner("ES256", "issuer-1"),
    newSigner("ES256", "agent-1"),
    newSigner("ES256", "agent-2"),
  ]);
  [edIssuer, edAgent, edAgent2] = await Promise.all([
    newSigner("EdDSA", "ed-issuer"),
    newSigner("EdDSA", "ed-agent"),
    newSigner("EdDSA", "ed-agent-2"),
  ]);
});

/** root (issuer) -> leaf (agent), each hop adjustable. */
function twoHops(root: Partial<HopSpec> = {}, leaf: Partial<HopSpec> = {}): HopSpec[] {
  return [
    { signer: issuer, mandate: openPayment(agent, [RANGE]), ...root },
    { signer: agent, mandate: closedPayment(), ...leaf },
  ];
}

async function failureOf(specs: HopSpec[], anchors = [issuer]) {
  const verdict = await verifyBuilt(await buildChain(specs), anchors);
  return verdict.failure;
}

/** `header.payload.` with the given header: what `alg: none` and forged HMACs look like. */
const unsigned = async () => "";
const hmacWith = (secret: string) => async (input: string) =>
  b64url(new Uint8Array(createHmac("sha256", secret).update(input).digest()));

describe("credential chains: algorithms and keys", () => {
  it("verifies an EdDSA chain of three hops (Ed25519 root, intermediate and leaf)", async () => {
    const credential = await buildChain([
      { signer: edIssuer, mandate: openPayment(edAgent, [RANGE]) },
      { signer: edAgent, mandate: openPayment(edAgent2, [RANGE]) },
      { signer: edAgent2, mandate: closedPayment() },
    ]);
    const verdict = await verifyBuilt(credential, [edIssuer]);
    expect(verdict).toMatchObject({ verified: true, failure: null, hops: 3, issuerId: "issuer" });
    expect(verdict.holderThumbprint).toBe(await calculateJwkThumbprint(edAgent2.jwk, "sha256"));
    expect(verdict.openMandates).toHaveLength(2);
  });

  it("verifies a chain that mixes an ES256 root with an EdDSA agent", async () => {
    const specs = twoHops({ mandate: openPayment(edAgent, [RANGE]) }, { signer: edAgent });
    expect(await failureOf(specs)).toBeNull();
  });

  it("refuses alg none on the root and on a key-binding hop: signature_invalid", async () => {
    const none = { header: { alg: "none" }, rawSignature: unsigned };
    expect(await failureOf(twoHops(none))).toBe("signature_invalid");
    expect(await failureOf(twoHops({}, none))).toBe("signature_invalid");
  });

  it("refuses an HS256 hop keyed with the delegated public key: signature_invalid", async () => {
    // The classic confusion: an HMAC whose secret is the public key the verifier holds.
    const hs = { header: { alg: "HS256" }, rawSignature: hmacWith(JSON.stringify(agent.jwk)) };
    expect(await failureOf(twoHops({}, hs))).toBe("signature_invalid");
  });

  it("refuses RS256, ES384 and a missing alg: signature_invalid", async () => {
    for (const alg of ["RS256", "ES384", undefined]) {
      const header = { alg, typ: "kb+sd-jwt" };
      expect(await failureOf(twoHops({}, { header, rawSignature: unsigned }))).toBe(
        "signature_invalid",
      );
    }
  });

  it("refuses an ES256 hop when the delegated key is Ed25519: signature_invalid", async () => {
    // Signed with a real P-256 key; the key hop 0 delegated says EdDSA.
    const specs = twoHops({ mandate: openPayment(edAgent, [RANGE]) }, { signer: agent });
    expect(await failureOf(specs)).toBe("signature_invalid");
  });

  it("refuses a hop whose header carries crit: signature_invalid", async () => {
    const crit = { header: { crit: ["b64"], b64: true } };
    expect(await failureOf(twoHops({}, crit))).toBe("signature_invalid");
  });

  it("refuses a cnf.jwk that carries its private part d: delegation_broken", async () => {
    const exported = { ...agent.jwk, d: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
    const root = { mandate: { ...openPayment(agent, [RANGE]), cnf: { jwk: exported } } };
    expect(await failureOf(twoHops(root))).toBe("delegation_broken");
  });

  it("refuses a cnf.jwk of another key type, or whose alg contradicts its type", async () => {
    for (const jwk of [
      { kty: "RSA", n: "AQAB", e: "AQAB" },
      { ...agent.jwk, alg: "EdDSA" },
      { ...agent.jwk, x: "short" },
    ]) {
      const root = { mandate: { ...openPayment(agent, [RANGE]), cnf: { jwk } } };
      expect(await failureOf(twoHops(root))).toBe("delegation_broken");
    }
  });

  it("refuses a hop signed by a key other than the delegated one: delegation_broken", async () => {
    expect(await failureOf(twoHops({}, { signer: agent2 }))).toBe("delegation_broken");
  });

  it("takes the next key from the disclosed mandate only, never a top-level cnf", async () => {
    const root = { claims: { cnf: { jwk: agent2.jwk } } };
    expect(await failureOf(twoHops(root, { signer: agent2 }))).toBe("delegation_broken");
  });
});

describe("credential chains: trust anchors", () => {
  it("refuses a root whose kid names no anchor, or whose anchor does not verify it", async () => {
    expect(await failureOf(twoHops({ header: { kid: "unknown" } }))).toBe("untrusted_issuer");
    const impostor = await newSigner("ES256", "issuer-1");
    expect(await failureOf(twoHops({ signer: impostor }))).toBe("untrusted_issuer");
  });

  it("tries every anchor for a root without kid, and names the one that verifies", async () => {
    const credential = await buildChain(twoHops({ header: { kid: undefined } }));
    const other = await newSigner("EdDSA", "other");
    const verdict = await verifyChainWith(credential, [
      { issuerId: "other", signer: other },
      { issuerId: "bank", signer: issuer },
    ]);
    expect(verdict).toMatchObject({ verified: true, issuerId: "bank" });
  });

  it("matches an anchor without kid by its RFC 7638 thumbprint", async () => {
    const { kid: _, ...bare } = issuer.jwk;
    const thumbprint = await calculateJwkThumbprint(bare, "sha256");
    const credential = await buildChain(twoHops({ header: { kid: thumbprint } }));
    const verdict = await verifyChainWith(credential, [
      { issuerId: "bank", signer: { ...issuer, jwk: bare } },
    ]);
    expect(verdict).toMatchObject({ verified: true, issuerId: "bank" });
  });

  it("never trusts a key a root carries in its own header", async () => {
    const impostor = await newSigner("ES256");
    const root = { signer: impostor, header: { kid: undefined, jwk: impostor.jwk } };
    expect(await failureOf(twoHops(root))).toBe("untrusted_issuer");
  });
});

describe("credential chains: hop types and bindings", () => {
  it("refuses both sd_hash and issuer_jwt_hash, and neither: delegation_broken", async () => {
    expect(await failureOf(twoHops({}, { binding: "both" }))).toBe("delegation_broken");
    expect(await failureOf(twoHops({}, { binding: "none" }))).toBe("delegation_broken");
  });

  it("accepts issuer_jwt_hash, and refuses one over another JWS", async () => {
    expect(await failureOf(twoHops({}, { binding: "issuer_jwt_hash" }))).toBeNull();
    const wrong = { binding: "none" as const, claims: { issuer_jwt_hash: "x".repeat(43) } };
    expect(await failureOf(twoHops({}, wrong))).toBe("delegation_broken");
  });

  it("refuses a last hop typed kb+sd-jwt+kb, and an intermediate typed kb+sd-jwt", async () => {
    expect(await failureOf(twoHops({}, { header: { typ: "kb+sd-jwt+kb" } }))).toBe(
      "delegation_broken",
    );
    const three: HopSpec[] = [
      { signer: issuer, mandate: openPayment(agent, [RANGE]) },
      { signer: agent, mandate: openPayment(agent2, [RANGE]), header: { typ: "kb+sd-jwt" } },
      { signer: agent2, mandate: closedPayment() },
    ];
    expect(await failureOf(three)).toBe("delegation_broken");
  });

  it("refuses the SDK's unemitted kb-sd-jwt spelling", async () => {
    expect(await failureOf(twoHops({}, { header: { typ: "kb-sd-jwt" } }))).toBe(
      "delegation_broken",
    );
  });

  it("refuses a closed mandate that still names a key, and a key-binding hop without iat", async () => {
    const withCnf = { mandate: { ...closedPayment(), cnf: { jwk: agent2.jwk } } };
    expect(await failureOf(twoHops({}, withCnf))).toBe("delegation_broken");
    expect(await failureOf(twoHops({}, { claims: { iat: undefined } }))).toBe("delegation_broken");
  });

  it("refuses a closed mandate on the root, an open one last, and mixed kinds", async () => {
    const closedRoot = { mandate: { ...closedPayment(), cnf: { jwk: agent.jwk } } };
    expect(await failureOf(twoHops(closedRoot))).toBe("delegation_broken");
    const openLeaf = { mandate: { vct: "mandate.payment.open.1", constraints: [] } };
    expect(await failureOf(twoHops({}, openLeaf))).toBe("delegation_broken");
    const checkoutLeaf = { mandate: { vct: "mandate.checkout.1", checkout_hash: "h" } };
    expect(await failureOf(twoHops({}, checkoutLeaf))).toBe("delegation_broken");
  });
});

describe("credential chains: audience, nonce and time", () => {
  it("checks the last hop's aud and nonce only when the caller gives them", async () => {
    const credential = await buildChain(twoHops({}, { claims: { aud: "other", nonce: "old" } }));
    expect((await verifyBuilt(credential, [issuer])).failure).toBe("audience_mismatch");
    const noAud = await verifyBuilt(credential, [issuer], { nonce: NONCE });
    expect(noAud.failure).toBe("nonce_mismatch");
    expect((await verifyBuilt(credential, [issuer], {})).verified).toBe(true);
  });

  it("allows 300 s of skew on exp and iat, and no more", async () => {
    const credential = await buildChain(
      twoHops({}, { mandate: closedPayment(5000, { exp: NOW, iat: NOW }) }),
    );
    const at = async (now: number) => (await verifyBuilt(credential, [issuer], {}, now)).failure;
    expect(await at(NOW + 300)).toBeNull();
    expect(await at(NOW + 301)).toBe("expired");
    expect(await at(NOW - 300)).toBeNull();
    expect(await at(NOW - 301)).toBe("not_yet_valid");
  });

  it("refuses a future nbf on a hop: not_yet_valid", async () => {
    expect(await failureOf(twoHops({}, { claims: { nbf: NOW + 301 } }))).toBe("not_yet_valid");
    expect(await failureOf(twoHops({}, { claims: { nbf: NOW + 300 } }))).toBeNull();
  });

  it("refuses a time claim that is not a number: delegation_broken", async () => {
    const stringExp = { mandate: { ...openPayment(agent, [RANGE]), exp: "2100-01-01" } };
    expect(await failureOf(twoHops(stringExp))).toBe("delegation_broken");
    expect(await failureOf(twoHops({}, { claims: { iat: "now" } }))).toBe("delegation_broken");
  });
});

async function verifyChainWith(
  credential: string,
  anchors: { issuerId: string; signer: Signer }[],
) {
  return await verifyChain(parseChain(credential), {
    anchors: { keys: anchors.map((a) => ({ issuerId: a.issuerId, jwk: a.signer.jwk })) },
    presentation: { aud: AUD, nonce: NONCE },
    now: NOW,
  });
}

describe("credential chains: the verified-signature cache", () => {
  // verifiesUnder keeps, when asked to remember, the signatures it has verified, per isolate: a
  // hop that comes back (an open mandate's root, a platform's hop) is not verified again. What
  // it keeps must never let another key, or other bytes, through.
  const compact = async (signer: Signer, payload: string) =>
    new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: signer.alg })
      .sign(signer.privateKey);
  const pinned = (signer: Signer) => {
    const key = pinKey(signer.jwk);
    if (!isPinned(key)) throw new Error(key.problem);
    return key;
  };
  const remember = { remember: true };

  it("verifies a kept JWS again from the cache, and never under another key", async () => {
    const jws = await compact(agent, '{"n":1}');
    const header = { alg: "ES256" };
    expect(await verifiesUnder(jws, header, pinned(agent), remember)).toBe(true);
    expect(await verifiesUnder(jws, header, pinned(agent), remember)).toBe(true);
    expect(await verifiesUnder(jws, header, pinned(agent2), remember)).toBe(false);
    expect(await verifiesUnder(jws, header, pinned(agent2))).toBe(false);
  });

  it("refuses a changed payload or signature after the original was kept", async () => {
    const jws = await compact(edAgent, '{"n":2}');
    const header = { alg: "EdDSA" };
    expect(await verifiesUnder(jws, header, pinned(edAgent), remember)).toBe(true);
    const [h, p, s] = jws.split(".") as [string, string, string];
    const otherPayload = `${h}.${b64url('{"n":3}')}.${s}`;
    const flipped = `${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`;
    for (const options of [remember, {}]) {
      expect(await verifiesUnder(otherPayload, header, pinned(edAgent), options)).toBe(false);
      expect(await verifiesUnder(`${h}.${p}.${flipped}`, header, pinned(edAgent), options)).toBe(
        false,
      );
    }
    // A header alg other than the key's is refused before the cache is asked.
    expect(await verifiesUnder(jws, { alg: "ES256" }, pinned(edAgent), remember)).toBe(false);
  });

  it("verifies a chain's hops alike with the cache empty, warm, and emptied again", async () => {
    // Root and intermediate are kept; the last hop is verified every time.
    const built = await buildChain([
      { signer: issuer, mandate: openPayment(agent, [RANGE]) },
      { signer: agent, mandate: openPayment(agent2, [RANGE]) },
      { signer: agent2, mandate: closedPayment() },
    ]);
    const tampered = `${built.slice(0, -40)}${built.slice(-40).replace(/[A-Za-z]/, (c) => (c === "A" ? "B" : "A"))}`;
    forgetVerifiedSignatures();
    expect((await verifyBuilt(built, [issuer])).verified).toBe(true);
    expect((await verifyBuilt(built, [issuer])).verified).toBe(true);
    expect((await verifyBuilt(built, [agent])).failure).toBe("untrusted_issuer");
    expect((await verifyBuilt(tampered, [issuer])).verified).toBe(false);
    forgetVerifiedSignatures();
    expect((await verifyBuilt(built, [issuer])).verified).toBe(true);
  });
});

// Ed25519's group order L: a signature's S must be below it (RFC 8032 §5.1.7).
const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;

/** The Ed25519 JWS with S replaced by S + L: the same equation, a non-canonical encoding. */
function plusL(jws: string): string {
  const dot = jws.lastIndexOf(".");
  const signature = Buffer.from(jws.slice(dot + 1), "base64url");
  const s = BigInt(`0x${Buffer.from(signature.subarray(32)).reverse().toString("hex")}`);
  const bigger = Buffer.from((s + ED25519_L).toString(16).padStart(64, "0"), "hex").reverse();
  return `${jws.slice(0, dot)}.${b64url(new Uint8Array(Buffer.concat([signature.subarray(0, 32), bigger])))}`;
}

describe("one signature, one text (docs/credentials.md, 'One consent pays once, in every spelling')", () => {
  const signers = (alg: "ES256" | "EdDSA") =>
    alg === "EdDSA"
      ? { root: edIssuer, mid: edAgent, leaf: edAgent2 }
      : { root: issuer, mid: agent, leaf: agent2 };

  for (const alg of ["EdDSA", "ES256"] as const) {
    it(`${alg}: each of the 15 other base64url spellings of a root's signature is signature_invalid`, async () => {
      const { root: user, mid } = signers(alg);
      const [root] = await buildHops([{ signer: user, mandate: openPayment(mid, [RANGE]) }]);
      const spellings = signatureSpellings((root as BuiltHop).jws);
      expect(spellings).toHaveLength(16);
      for (const [i, jws] of spellings.entries()) {
        // The agent binds its own leaf to the re-spelt root, as an attacker holding its key can.
        const hops = await extendHops(
          [respelt(root as BuiltHop, jws)],
          [{ signer: mid, mandate: closedPayment() }],
        );
        const verdict = await verifyBuilt(joinHops(hops), [user]);
        if (i === 0) expect(verdict).toMatchObject({ verified: true, failure: null });
        else {
          expect(verdict).toMatchObject({
            verified: false,
            failure: "signature_invalid",
            spend: null,
          });
          expect(verdict.detail?.message).toBe("hop 0: the signature is not canonical base64url");
        }
      }
    });

    it(`${alg}: a re-spelt signature of an intermediate hop or the leaf is signature_invalid`, async () => {
      const { root: user, mid, leaf } = signers(alg);
      const hops = await buildHops([
        { signer: user, mandate: openPayment(mid, [RANGE]) },
        { signer: mid, mandate: openPayment(leaf, [RANGE]) },
        { signer: leaf, mandate: closedPayment() },
      ]);
      const [, middle, last] = hops as [BuiltHop, BuiltHop, BuiltHop];
      const other = (jws: string) => signatureSpellings(jws)[1] as string;
      const leafRespelt = joinHops([hops[0] as BuiltHop, middle, respelt(last, other(last.jws))]);
      expect(await verifyBuilt(leafRespelt, [user])).toMatchObject({
        failure: "signature_invalid",
        detail: { message: "hop 2: the signature is not canonical base64url" },
      });
      const rebound = await extendHops(
        [hops[0] as BuiltHop, respelt(middle, other(middle.jws))],
        [{ signer: leaf, mandate: closedPayment() }],
      );
      expect(await verifyBuilt(joinHops(rebound), [user])).toMatchObject({
        failure: "signature_invalid",
        detail: { message: "hop 1: the signature is not canonical base64url" },
      });
    });

    it(`${alg}: a signature of 63 or 65 bytes is signature_invalid`, async () => {
      const { root: user, mid } = signers(alg);
      for (const length of [63, 65]) {
        const specs: HopSpec[] = [
          {
            signer: user,
            mandate: openPayment(mid, [RANGE]),
            rawSignature: async () => b64url(new Uint8Array(length).fill(7)),
          },
          { signer: mid, mandate: closedPayment() },
        ];
        expect(await verifyBuilt(await buildChain(specs), [user])).toMatchObject({
          failure: "signature_invalid",
          detail: { message: "hop 0: the signature is not 64 bytes" },
        });
      }
    });
  }

  it("EdDSA: S + L (the same equation, S not reduced) verifies nothing", async () => {
    const [root] = await buildHops([{ signer: edIssuer, mandate: openPayment(edAgent, [RANGE]) }]);
    const hops = await extendHops(
      [respelt(root as BuiltHop, plusL((root as BuiltHop).jws))],
      [{ signer: edAgent, mandate: closedPayment() }],
    );
    expect(await verifyBuilt(joinHops(hops), [edIssuer])).toMatchObject({
      verified: false,
      failure: "untrusted_issuer",
    });
  });

  it("ES256: the twin (r, n − s) verifies, stricter than nothing, and names the same consent", async () => {
    // Accepted like the SDK accepts it (its vectors hold both forms: cryptography does not
    // normalise s); harmless, because what is remembered is keyed by what was signed.
    const [root] = await buildHops([{ signer: issuer, mandate: openPayment(agent, [RANGE]) }]);
    const chainOver = async (jws: string) =>
      joinHops(
        await extendHops(
          [respelt(root as BuiltHop, jws)],
          [{ signer: agent, mandate: closedPayment() }],
        ),
      );
    const original = await verifyBuilt(await chainOver((root as BuiltHop).jws), [issuer]);
    const twin = await verifyBuilt(await chainOver(ecdsaTwin((root as BuiltHop).jws)), [issuer]);
    expect(original.verified).toBe(true);
    expect(twin.verified).toBe(true);
    expect(isHighS((root as BuiltHop).jws)).not.toBe(isHighS(ecdsaTwin((root as BuiltHop).jws)));
    expect(twin.consent).toBe(original.consent);
    expect(twin.spend?.consent).toBe(original.spend?.consent);
    expect(new Set(twin.spend?.rootSpellings)).toEqual(new Set(original.spend?.rootSpellings));
  });

  it("an issuer signing the same content twice (ECDSA is randomized) names one consent", async () => {
    const mandate = openPayment(agent, [RANGE]);
    const item = element(mandate);
    const specs = (): HopSpec[] => [
      {
        signer: issuer,
        mandate,
        delegatePayload: () => [item.ref],
        withholdItem: true,
        extraDisclosures: [item.disclosure],
      },
      { signer: agent, mandate: closedPayment() },
    ];
    const [a, b] = [await buildChain(specs()), await buildChain(specs())];
    expect(a.split("~")[0]).not.toBe(b.split("~")[0]);
    const [first, second] = [await verifyBuilt(a, [issuer]), await verifyBuilt(b, [issuer])];
    expect(first.verified && second.verified).toBe(true);
    expect(second.spend?.consent).toBe(first.spend?.consent);
  });
});
