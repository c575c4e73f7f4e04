/**
 * The credential mix of `npm run bench:assess`: AP2 v0.2 delegation chains of three ES256 hops,
 * as a real AP2 client sends them. One consent for the run: the issuer's root (an open payment
 * mandate naming a platform key) and the platform's hop (an open payment mandate naming the
 * agent's registered key) are signed once; every request gets its own last hop, signed by the
 * agent, with a new nonce and transaction (a fresh presentation, never a replay). The service
 * verifies the root and the platform's hop once per isolate (it keeps delegating hops' verified
 * signatures) and every last hop. docs/credentials.md has the format.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { CompactSign } from "jose";

export const BENCH_AUD = "https://bench-verifier.example";
const enc = new TextEncoder();

type PublicJwk = { kty: "EC"; crv: "P-256"; x: string; y: string; kid?: string };

export interface KeyPair {
  publicJwk: PublicJwk;
  privateKey: KeyObject;
}

export function p256KeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { x, y } = publicKey.export({ format: "jwk" });
  if (!x || !y) throw new Error("P-256 key export without coordinates");
  return { publicJwk: { kty: "EC", crv: "P-256", x, y }, privateKey };
}

const b64url = (text: string) => Buffer.from(text).toString("base64url");
const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/** A hop's segment `<jws>~<disclosure>~`, its one delegate item disclosed. */
async function hop(
  signer: KeyObject,
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  mandate: Record<string, unknown>,
): Promise<string> {
  const disclosure = b64url(JSON.stringify([randomBytes(16).toString("base64url"), mandate]));
  const payload = {
    ...claims,
    delegate_payload: [{ "...": digest(disclosure) }],
    _sd_alg: "sha-256",
  };
  const jws = await new CompactSign(enc.encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "ES256", ...header })
    .sign(signer);
  return `${jws}~${disclosure}~`;
}

function openPayment(next: PublicJwk, now: number) {
  return {
    vct: "mandate.payment.open.1",
    constraints: [{ type: "payment.amount_range", currency: "USD", max: 500_000, min: 0 }],
    cnf: { jwk: next },
    iat: now - 3600,
    exp: now + 86_400,
  };
}

/** The run's consent: the issuer's key (to register), the agent's, and the two open hops. */
export interface Consent {
  issuer: PublicJwk;
  agent: KeyPair;
  /** `<root segment>~<platform hop segment>` without the last `~`: what every leaf follows. */
  prefix: string;
  /** The platform hop's segment, which each leaf's `sd_hash` binds. */
  bound: string;
}

export async function consentFor(agent: KeyPair): Promise<Consent> {
  const issuer = p256KeyPair();
  const platform = p256KeyPair();
  const now = Math.floor(Date.now() / 1000);
  const issuerJwk = { ...issuer.publicJwk, kid: "bench-issuer" };
  const root = await hop(
    issuer.privateKey,
    { typ: "example+sd-jwt", kid: "bench-issuer" },
    {},
    openPayment(platform.publicJwk, now),
  );
  const middle = await hop(
    platform.privateKey,
    { typ: "kb+sd-jwt+kb" },
    { iat: now - 60, sd_hash: digest(root) },
    openPayment(agent.publicJwk, now),
  );
  return {
    issuer: issuerJwk,
    agent,
    prefix: `${root.slice(0, -1)}~~${middle.slice(0, -1)}`,
    bound: middle,
  };
}

/** One presentation: a new closed payment under the consent, for `payee`. */
export async function presentation(
  consent: Consent,
  payee: { id: string; name: string; website: string },
  amount: number,
): Promise<Record<string, unknown>> {
  const now = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(16).toString("hex");
  const leaf = await hop(
    consent.agent.privateKey,
    { typ: "kb+sd-jwt" },
    { iat: now - 5, aud: BENCH_AUD, nonce, sd_hash: digest(consent.bound) },
    {
      vct: "mandate.payment.1",
      transaction_id: randomBytes(32).toString("base64url"),
      payee,
      payment_amount: { amount, currency: "USD" },
      payment_instrument: { id: "stub", type: "card", description: "Card ••••4242" },
      iat: now - 5,
      exp: now + 3600,
    },
  );
  return { credential: `${consent.prefix}~~${leaf}`, presentation: { aud: BENCH_AUD, nonce } };
}
