import { env } from "cloudflare:test";
import { createHash, createPublicKey, verify } from "node:crypto";
import { type PublicSigningKey, signer } from "../../../src/signing/signer";
import { ed25519Verify } from "../../support/ed25519";
import { call, type RequestBody } from "./api";
import { ownerSql } from "./db";

/** A digest no one has registered yet: `sha256:` and 64 random lowercase hex digits. */
export function randomDigest(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `sha256:${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Registers an artifact with a key or a session token, as a client would. */
export function registerArtifact(
  credential: { key?: string; token?: string },
  body: RequestBody<"/v1/artifacts", "POST">,
) {
  return call("/v1/artifacts", { method: "POST", body, ...credential });
}

// --- Independent checks: node:crypto and the RFCs, not jose and not src/ ---

/** RFC 6962 leaf hash of an entry hash: hex(SHA-256(0x00 || 32 bytes)). */
export function leafHashOf(entryHashHex: string): string {
  return createHash("sha256")
    .update(Buffer.concat([Buffer.from([0]), Buffer.from(entryHashHex, "hex")]))
    .digest("hex");
}

function text(part: string): string {
  return Buffer.from(part, "base64url").toString("utf8");
}

/**
 * Verifies a compact JWS with node:crypto's Ed25519, and with the suite's own RFC 8032
 * implementation (test/support/ed25519.ts), against a JWK set (from
 * /.well-known/jwks.json): the header's kid names a key, alg is EdDSA, and the signature over
 * `header.payload` verifies. Returns the decoded header and the payload as text.
 */
export function verifyOffline(jws: string, keys: { kid: string; x: string }[]) {
  const [h = "", p = "", s = ""] = jws.split(".");
  const header = JSON.parse(text(h)) as { alg: string; kid: string; typ: string };
  const jwk = keys.find((k) => k.kid === header.kid);
  if (!jwk || header.alg !== "EdDSA") return { valid: false, header, payload: text(p) };
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  const signingInput = Buffer.from(`${h}.${p}`, "ascii");
  const signature = Buffer.from(s, "base64url");
  const valid = verify(null, signingInput, key, signature);
  // A second, pure-arithmetic witness (RFC 8032): the two implementations must agree.
  const reference = ed25519Verify(Buffer.from(jwk.x, "base64url"), signingInput, signature);
  if (reference !== valid) throw new Error(`Ed25519 verifiers disagree: ${valid} vs ${reference}`);
  return { valid, header, payload: text(p) };
}

/** The published key set, fetched as any verifier would. */
export async function publishedKeys(): Promise<{ kid: string; x: string }[]> {
  return (await call("/.well-known/jwks.json")).json.keys;
}

/**
 * A fresh Ed25519 service key, as a rotation would deploy: the secret for `SIGNING_KEY`, the
 * entry for `SIGNING_KEYS_RETIRED` (public only), and its signer. Its kid is its own thumbprint,
 * so no other test shares it.
 */
export async function newServiceKey() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const secret = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
  const key = await signer({ ...env, SIGNING_KEY: secret });
  const published = key.keys[0] as PublicSigningKey;
  return { secret, key, published, retiredEntry: { kty: "OKP", crv: "Ed25519", x: published.x } };
}

/**
 * Seeds a key's window in signing_keys as the Cron sweep would have noted it (never an open
 * window: the sweep's "current key" must stay the deployed one), and returns its cleanup.
 */
export async function seedKeyWindow(
  published: PublicSigningKey,
  firstSeenAt: string,
  retiredAt: string,
) {
  const jwk = { kty: "OKP", crv: "Ed25519", x: published.x };
  await ownerSql`insert into signing_keys (kid, public_jwk, first_seen_at, retired_at)
    values (${published.kid}, ${JSON.stringify(jwk)}::jsonb, ${firstSeenAt}, ${retiredAt})`;
  return async () => {
    await ownerSql`delete from signing_keys where kid = ${published.kid}`;
  };
}
