/**
 * AP2 v0.2 delegation chains made at run time with jose, for the rules the SDK's vectors do not
 * cover (EdDSA, refused algorithms, broken bindings, odd disclosures, every constraint type).
 * Written from the vectors' README, independently of src/credentials, so that a mistake shared
 * by both cannot hide: hashing is node:crypto's, encoding is done here.
 *
 *   const chain = await buildChain([
 *     { signer: user, mandate: openMandate(agent) },
 *     { signer: agent, mandate: closedPayment() },
 *   ]);
 */
import { createHash } from "node:crypto";
import { CompactSign, type CryptoKey, exportJWK, generateKeyPair, type JWK } from "jose";
import { parseChain } from "../../src/ap2-credentials/chain";
import {
  type ChainVerdict,
  type PresentationInputs,
  verifyChain,
} from "../../src/ap2-credentials/verify";

export type Claims = Record<string, unknown>;

export interface Signer {
  alg: "ES256" | "EdDSA";
  /** Public JWK, with `kid` when one was given. */
  jwk: JWK;
  privateKey: CryptoKey;
}

export async function newSigner(alg: "ES256" | "EdDSA", kid?: string): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, jwk: kid ? { ...jwk, kid } : jwk, privateKey };
}

const enc = new TextEncoder();

export function b64url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** base64url(SHA-256(text)): disclosure digests, bindings, references. */
export function hashOf(text: string): string {
  return b64url(new Uint8Array(createHash("sha256").update(text, "ascii").digest()));
}

let salts = 0;
/** An array-element disclosure `[salt, value]` and the `{"...": digest}` that references it. */
export function element(value: unknown): { ref: Claims; disclosure: string } {
  const disclosure = b64url(JSON.stringify([`salt-${++salts}`, value]));
  return { ref: { "...": hashOf(disclosure) }, disclosure };
}

/** An object-property disclosure `[salt, name, value]` and its digest (for `_sd`). */
export function property(name: string, value: unknown): { digest: string; disclosure: string } {
  const disclosure = b64url(JSON.stringify([`salt-${++salts}`, name, value]));
  return { digest: hashOf(disclosure), disclosure };
}

/** P-256's group order n. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function bytesOf(encoded: string): Uint8Array {
  return new Uint8Array(Buffer.from(encoded, "base64url"));
}

/** An ES256 JWS with its signature (r, s) re-spelt as (r, n − s): ECDSA accepts both. */
export function ecdsaTwin(jws: string): string {
  const dot = jws.lastIndexOf(".");
  const signature = bytesOf(jws.slice(dot + 1));
  const s = BigInt(`0x${Buffer.from(signature.subarray(32)).toString("hex")}`);
  const twin = Buffer.concat([
    signature.subarray(0, 32),
    Buffer.from((P256_N - s).toString(16).padStart(64, "0"), "hex"),
  ]);
  return `${jws.slice(0, dot)}.${b64url(new Uint8Array(twin))}`;
}

/** Whether an ES256 JWS's s is above n/2 (the "high-S" of two spellings). */
export function isHighS(jws: string): boolean {
  const signature = bytesOf(jws.slice(jws.lastIndexOf(".") + 1));
  return BigInt(`0x${Buffer.from(signature.subarray(32)).toString("hex")}`) > P256_N / 2n;
}

/**
 * Every base64url text a lenient decoder reads as the JWS's signature bytes: the canonical one
 * first, then the others (its last character with other unused low bits; 64 bytes leave 4).
 */
export function signatureSpellings(jws: string): string[] {
  const dot = jws.lastIndexOf(".");
  const signature = jws.slice(dot + 1);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const unused = 6 - ((bytesOf(signature).length * 8) % 6);
  const last = alphabet.indexOf(signature.at(-1) as string);
  const spellings = [];
  for (let low = 0; low < 1 << unused; low++) {
    const char = alphabet[(last & ~((1 << unused) - 1)) | low] as string;
    spellings.push(`${jws.slice(0, dot)}.${signature.slice(0, -1)}${char}`);
  }
  return [jws, ...spellings.filter((s) => s !== jws)];
}

export interface HopSpec {
  signer: Signer;
  /** The delegate item (the mandate), disclosed as the one element of `delegate_payload`. */
  mandate: Claims;
  /** Disclosures the mandate's own digests reference (nested selective disclosure). */
  nested?: string[];
  /** Header members over the defaults (alg of the signer, typ for the place, kid). */
  header?: Claims;
  /** JWT claims over the defaults (iat, aud, nonce, and the binding). */
  claims?: Claims;
  binding?: "sd_hash" | "issuer_jwt_hash" | "both" | "none";
  /** The signed `delegate_payload` from the mandate's reference (decoys, a second item, …). */
  delegatePayload?: (itemRef: Claims) => unknown[];
  /** Leaves the mandate's own disclosure out of the hop (it is still referenced). */
  withholdItem?: boolean;
  /** Sent after the hop's own disclosures: an unreferenced one, a duplicate, … */
  extraDisclosures?: string[];
  /** Signs with this instead of the signer's key (a raw signature over `header.payload`). */
  rawSignature?: (signingInput: string) => Promise<string>;
}

export const AUD = "https://verifier.example";
export const NONCE = "n-0123456789";
export const NOW = 1_800_000_000;

export interface BuiltHop {
  jws: string;
  segment: string;
}

async function signHop(header: Claims, payload: Claims, spec: HopSpec): Promise<string> {
  if (spec.rawSignature) {
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
    return `${input}.${await spec.rawSignature(input)}`;
  }
  return await new CompactSign(enc.encode(JSON.stringify(payload)))
    .setProtectedHeader(header as { alg: string })
    .sign(spec.signer.privateKey);
}

/** The hops of a chain, root first; each hop's binding is to the hop built before it. */
export async function buildHops(specs: HopSpec[]): Promise<BuiltHop[]> {
  return await extendHops([], specs);
}

/**
 * `built` (hops made already, e.g. a root with its signature re-spelt) followed by hops made
 * from `specs`, the first bound to the last of `built`.
 */
export async function extendHops(from: BuiltHop[], specs: HopSpec[]): Promise<BuiltHop[]> {
  const built: BuiltHop[] = [...from];
  const total = from.length + specs.length;
  for (const spec of specs) {
    const i = built.length;
    const item = element(spec.mandate);
    const previous = built[i - 1];
    const last = i === total - 1;
    const items = spec.delegatePayload ? spec.delegatePayload(item.ref) : [item.ref];
    const claims: Claims = { delegate_payload: items, _sd_alg: "sha-256" };
    if (previous) {
      Object.assign(claims, { iat: NOW - 60, aud: AUD, nonce: NONCE });
      const binding = spec.binding ?? "sd_hash";
      if (binding === "sd_hash" || binding === "both") claims.sd_hash = hashOf(previous.segment);
      if (binding === "issuer_jwt_hash" || binding === "both") {
        claims.issuer_jwt_hash = hashOf(previous.jws);
      }
    }
    Object.assign(claims, spec.claims);
    const typ = i === 0 ? "example+sd-jwt" : last ? "kb+sd-jwt" : "kb+sd-jwt+kb";
    const header: Claims = { alg: spec.signer.alg, typ, ...spec.header };
    if (spec.signer.jwk.kid && !("kid" in header)) header.kid = spec.signer.jwk.kid;
    const jws = await signHop(header, claims, spec);
    const disclosures = [
      ...(spec.withholdItem ? [] : [item.disclosure]),
      ...(spec.nested ?? []),
      ...(spec.extraDisclosures ?? []),
    ];
    built.push({ jws, segment: `${jws}~${disclosures.join("~")}~` });
  }
  return built;
}

/** The hop with its JWS replaced by `jws` (another spelling of it), its disclosures kept. */
export function respelt(hop: BuiltHop, jws: string): BuiltHop {
  return { jws, segment: `${jws}${hop.segment.slice(hop.jws.length)}` };
}

/** `<root>~<d>~~<hop>~<d>~`: every segment but the last loses its trailing `~`. */
export function joinHops(hops: BuiltHop[]): string {
  return hops.map((h, i) => (i < hops.length - 1 ? h.segment.slice(0, -1) : h.segment)).join("~~");
}

export async function buildChain(specs: HopSpec[]): Promise<string> {
  return joinHops(await buildHops(specs));
}

/** The public JWK the next hop is bound to, as an open mandate's `cnf`. */
export function cnfOf(signer: Signer): Claims {
  return { jwk: signer.jwk };
}

export const MERCHANT = { id: "m-1", name: "Kestrel Surf Co", website: "https://kestrel.example" };
export const OTHER_MERCHANT = { id: "m-2", name: "Velvet", website: "https://velvet.example" };
export const INSTRUMENT = { id: "pi-1", type: "card", description: "Card 1266" };
export const CHECKOUT_JWT = `${b64url('{"alg":"ES256"}')}.${b64url(
  JSON.stringify({
    id: "chk-1",
    merchant: MERCHANT,
    line_items: [{ id: "li-1", item: { id: "SKU-1", title: "Shoe" }, quantity: 1 }],
    currency: "CAD",
  }),
)}.c2ln`;

/** An open payment mandate delegating to `next`, with the given constraints. */
export function openPayment(next: Signer, constraints: Claims[], extra: Claims = {}): Claims {
  return {
    vct: "mandate.payment.open.1",
    constraints,
    cnf: cnfOf(next),
    iat: NOW - 3600,
    exp: NOW + 86_400,
    ...extra,
  };
}

/** A closed payment mandate for `amount` CAD (minor units) to MERCHANT, bound to CHECKOUT_JWT. */
export function closedPayment(amount = 5000, extra: Claims = {}): Claims {
  return {
    vct: "mandate.payment.1",
    transaction_id: hashOf(CHECKOUT_JWT),
    payee: MERCHANT,
    payment_amount: { amount, currency: "CAD" },
    payment_instrument: INSTRUMENT,
    iat: NOW - 60,
    exp: NOW + 3600,
    ...extra,
  };
}

export const RANGE = { type: "payment.amount_range", currency: "CAD", max: 10_000, min: 100 };

/** Parses and verifies with `anchors` (issuer "issuer") at NOW, aud and nonce as built. */
export async function verifyBuilt(
  credential: string,
  anchors: Signer[],
  presentation: PresentationInputs = { aud: AUD, nonce: NONCE },
  now = NOW,
): Promise<ChainVerdict> {
  return await verifyChain(parseChain(credential), {
    anchors: { keys: anchors.map((a) => ({ issuerId: "issuer", jwk: a.jwk })) },
    presentation,
    now,
  });
}
