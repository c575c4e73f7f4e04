import { env } from "cloudflare:test";
import { ledgerOf } from "../../../src/ledger/ledger";
import { fromBase64url } from "../../../src/lib/encoding";

export function ledger(orgId: string) {
  return ledgerOf(env, orgId);
}

/** Appends `count` entries concurrently, as that many simultaneous requests would. */
export function appendMany(orgId: string, count: number, type = "test.event") {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      ledger(orgId).append(orgId, [
        {
          type,
          actor: { type: "api_key", id: "k1" },
          subject: { type: "thing", id: String(i) },
          digest: `sha256:${"ab".repeat(32)}`,
        },
      ]),
    ),
  );
}

/** Builds a checkpoint now, as the alarm or the Cron sweep would. */
export function anchor(orgId: string) {
  return ledger(orgId).anchor(orgId);
}

// --- Independent checks, written here from the RFCs and WebCrypto, not from src/ledger ---

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function unhex(text: string): Uint8Array {
  return Uint8Array.from(text.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
}

/** RFC 9162 §2.1.3.2: verifies an inclusion proof against a root. */
export async function rfcVerifyInclusion(
  leafHashHex: string,
  index: number,
  size: number,
  path: string[],
  rootHex: string,
): Promise<boolean> {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = unhex(leafHashHex);
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(new Uint8Array([1]), unhex(p), r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = await sha256(new Uint8Array([1]), r, unhex(p));
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && hex(r) === rootHex;
}

/** Verifies a compact JWS with WebCrypto's Ed25519 against a key set; returns the payload. */
export async function verifyJws(jws: string, keys: { kid: string; x: string }[]) {
  const [h, p, s] = jws.split(".") as [string, string, string];
  const header = JSON.parse(new TextDecoder().decode(fromBase64url(h)));
  const jwk = keys.find((k) => k.kid === header.kid);
  if (!jwk) return { valid: false, header, payload: "" };
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x },
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const valid = await crypto.subtle.verify(
    { name: "Ed25519" },
    key,
    fromBase64url(s),
    new TextEncoder().encode(`${h}.${p}`),
  );
  return { valid, header, payload: new TextDecoder().decode(fromBase64url(p)) };
}
