import { env } from "cloudflare:test";
import { ledgerOf } from "../../../src/ledger/ledger";

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

/**
 * Sequences an entry the way a commit does and stops there, as a writer that dies before its
 * transaction: the ledger object writes the entry later, the change never lands.
 */
export async function sequenceOnly(
  orgId: string,
  input: Parameters<ReturnType<typeof ledger>["appendDeferred"]>[1],
) {
  const answer = await ledger(orgId).appendDeferred(orgId, input);
  if (!("entry" in answer)) throw new Error("a plain append was refused");
  return answer;
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

export { verifyJws } from "./jws";
