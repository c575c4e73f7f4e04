/**
 * Verifying an agent-risk artifact receipt and its anchor offline (docs/artifacts.md), with
 * node:crypto only: no service library, no network. Fetch the key set yourself from
 * `https://<service>/.well-known/jwks.json` (or the trust list) and the proof from the public
 * `GET /v1/verify/artifact?receipt=…` (its `anchor`) or `GET /v1/transparency/proofs/{leaf}`.
 */
import { createHash, createPublicKey, verify } from "node:crypto";

export interface PublishedKey {
  kid: string;
  x: string;
}

export interface ReceiptClaims {
  iss: "agent-risk";
  sub: string;
  org: string;
  livemode: boolean;
  digest: string;
  iat: number;
  registered_at: string;
  log_id: string;
  entry: { id: string; sequence: number; hash: string; leaf_hash: string };
}

export interface Anchor {
  leaf_hash: string;
  leaf_index: number;
  tree_size: number;
  audit_path: string[];
  checkpoint: { log_id: string; tree_size: number; root_hash: string; note: string; jws: string };
}

/** `sha256:` and the lowercase hex SHA-256 of a file's bytes: what was registered. */
export function fileDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Verifies a compact JWS (EdDSA) with a key of the set and a `typ`; returns the payload bytes. */
function verifiedPayload(jws: string, keys: PublishedKey[], typ: string): Buffer {
  const [h, p, s, ...rest] = jws.split(".");
  if (h === undefined || p === undefined || s === undefined || rest.length > 0) {
    throw new Error("not a compact JWS");
  }
  // One spelling per token: a lenient decoder ignores padding and a last character's unused bits.
  for (const part of [h, p, s]) {
    if (Buffer.from(part, "base64url").toString("base64url") !== part) {
      throw new Error("not canonical base64url");
    }
  }
  const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
  const key = keys.find((k) => k.kid === header.kid);
  if (!key) throw new Error(`unknown key ${header.kid}`);
  if (header.alg !== "EdDSA" || header.typ !== typ || "crit" in header) {
    throw new Error(`not a ${typ}`);
  }
  const publicKey = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: key.x },
    format: "jwk",
  });
  if (!verify(null, Buffer.from(`${h}.${p}`, "ascii"), publicKey, Buffer.from(s, "base64url"))) {
    throw new Error("signature does not verify");
  }
  return Buffer.from(p, "base64url");
}

/**
 * Checks a receipt: signed by a published key as an artifact receipt, for the digest of the
 * file you hold, with the leaf hash its entry hash implies. Throws if anything is off.
 */
export function verifyReceipt(
  receipt: string,
  keys: PublishedKey[],
  digest: string,
): ReceiptClaims {
  const claims = JSON.parse(
    verifiedPayload(receipt, keys, "artifact-receipt+jwt").toString("utf8"),
  ) as ReceiptClaims;
  if (claims.iss !== "agent-risk") throw new Error("not issued by agent-risk");
  if (claims.digest !== digest) throw new Error("the receipt is for another digest");
  if (leafHash(claims.entry.hash) !== claims.entry.leaf_hash) throw new Error("bad leaf hash");
  return claims;
}

/**
 * Checks that the receipt's entry is in its org's log: the RFC 9162 inclusion proof reaches the
 * root of a checkpoint the service signed for that log. Throws if anything is off.
 */
export function verifyAnchor(claims: ReceiptClaims, anchor: Anchor, keys: PublishedKey[]): void {
  const { checkpoint } = anchor;
  if (anchor.leaf_hash !== claims.entry.leaf_hash) throw new Error("proof of another leaf");
  if (anchor.leaf_index !== claims.entry.sequence - 1) throw new Error("proof of another index");
  const note = verifiedPayload(checkpoint.jws, keys, "tlog-checkpoint").toString("utf8");
  const root = Buffer.from(checkpoint.root_hash, "hex").toString("base64");
  const lines = [`agent-risk/log/${claims.log_id}`, String(anchor.tree_size), root];
  if (note !== checkpoint.note || note.split("\n").slice(0, 3).join("\n") !== lines.join("\n")) {
    throw new Error("the signed checkpoint is not for this log, size and root");
  }
  if (!included(anchor.leaf_hash, anchor.leaf_index, anchor.tree_size, anchor.audit_path, root)) {
    throw new Error("the inclusion proof does not reach the signed root");
  }
}

function sha256(...parts: Buffer[]): Buffer {
  return createHash("sha256").update(Buffer.concat(parts)).digest();
}

/** RFC 6962: a leaf is SHA-256(0x00 || the entry hash's 32 bytes). */
function leafHash(entryHash: string): string {
  return sha256(Buffer.from([0]), Buffer.from(entryHash, "hex")).toString("hex");
}

/** RFC 9162 §2.1.3.2, with the root as standard base64. */
function included(leaf: string, index: number, size: number, path: string[], root: string) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf, "hex");
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.from([1]), Buffer.from(p, "hex"), r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = sha256(Buffer.from([1]), r, Buffer.from(p, "hex"));
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.toString("base64") === root;
}
