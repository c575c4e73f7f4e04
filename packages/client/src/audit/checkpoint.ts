import { sha256 } from "./digest.js";
import {
  base64ToBytes,
  base64UrlToBytes,
  bytesToBase64,
  hashBytes,
  toHex,
  utf8,
} from "./encoding.js";

/** The JWS `typ` of a signed checkpoint note. */
export const CHECKPOINT_TYP = "tlog-checkpoint";

const ORIGIN_PREFIX = "agent-risk/log/";
const LOG_ID = /^[0-9a-f]{32}$/;
const HASH = /^[0-9a-f]{64}$/;
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * Pseudonymous and public: the first 16 bytes of SHA-256("agent-risk/log/v1\n" + orgId), in
 * hex. A log can be named in public (witnesses, checkpoints) without naming the org; the hash
 * hides the org id as well as the id itself is unguessable (UUIDv7: 74 random bits).
 */
export function logIdFor(orgId: string): string {
  return toHex(sha256(utf8(`agent-risk/log/v1\n${orgId}`)).slice(0, 16));
}

export function checkpointOrigin(logId: string): string {
  return ORIGIN_PREFIX + logId;
}

export interface CheckpointFields {
  logId: string;
  treeSize: number;
  /** Hex. */
  rootHash: string;
  /** ISO 8601 UTC with milliseconds. */
  time: string;
}

/**
 * C2SP tlog-checkpoint body: origin line, decimal tree size line, standard-base64 root hash
 * line, then one extension line "time <ISO 8601>"; every line ends with "\n". Throws rather
 * than produce a note that parseCheckpointNote would refuse: nothing malformed gets signed.
 */
export function checkpointNote(c: CheckpointFields): string {
  if (!LOG_ID.test(c.logId)) throw new TypeError("checkpoint: logId is not 32 lowercase hex");
  if (!Number.isSafeInteger(c.treeSize) || c.treeSize < 0) {
    throw new TypeError("checkpoint: treeSize is not a non-negative integer");
  }
  if (!HASH.test(c.rootHash)) throw new TypeError("checkpoint: rootHash is not 64 lowercase hex");
  if (!isIsoTime(c.time)) throw new TypeError("checkpoint: time is not ISO 8601 UTC with ms");
  const root = bytesToBase64(hashBytes(c.rootHash));
  return `${checkpointOrigin(c.logId)}\n${c.treeSize}\n${root}\ntime ${c.time}\n`;
}

/** The inverse of checkpointNote, exactly: any other spelling of the same values throws. */
export function parseCheckpointNote(note: string): CheckpointFields & { origin: string } {
  const lines = note.split("\n");
  // A trailing "\n" leaves one empty string after the last line.
  if (lines.length !== 5 || lines[4] !== "") throw new Error("checkpoint note: not 4 lines");
  const [origin = "", size = "", root = "", time = ""] = lines;
  if (!origin.startsWith(ORIGIN_PREFIX)) throw new Error("checkpoint note: unknown origin");
  const logId = origin.slice(ORIGIN_PREFIX.length);
  if (!LOG_ID.test(logId)) throw new Error("checkpoint note: malformed log id");
  if (!DECIMAL.test(size) || !Number.isSafeInteger(Number(size))) {
    throw new Error("checkpoint note: malformed tree size");
  }
  let rootBytes: Uint8Array;
  try {
    rootBytes = base64ToBytes(root);
  } catch {
    throw new Error("checkpoint note: root hash is not canonical base64");
  }
  if (rootBytes.length !== 32) throw new Error("checkpoint note: root hash is not 32 bytes");
  if (!time.startsWith("time ") || !isIsoTime(time.slice(5))) {
    throw new Error("checkpoint note: malformed time line");
  }
  return {
    origin,
    logId,
    treeSize: Number(size),
    rootHash: toHex(rootBytes),
    time: time.slice(5),
  };
}

/** What is stored and exported for a checkpoint. */
export interface CheckpointRecord {
  log_id: string;
  tree_size: number;
  root_hash: string;
  time: string;
  note: string;
  /** Compact JWS (EdDSA) whose payload is exactly the UTF-8 bytes of `note`. */
  jws: string;
  /** 0 for the first checkpoint. */
  previous_tree_size: number;
  /** Hex hashes proving the previous checkpoint's tree is a prefix of this one. */
  consistency_proof: string[];
}

/** An Ed25519 public JWK, as /.well-known/jwks.json publishes it. */
export interface VerificationKey {
  kid: string;
  x: string;
  kty?: string;
  crv?: string;
}

/** WebCrypto's CryptoKey, named without relying on DOM or workers global type names. */
export type ImportedKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

export interface CheckpointProblem {
  reason: "unknown_key" | "signature_invalid" | "note_mismatch";
  expected?: string;
  actual?: string;
}

/**
 * The checks of a checkpoint that need no entries, in order: the JWS names a known key
 * (unknown_key), is exactly what the signer writes and its Ed25519 signature holds
 * (signature_invalid), and its payload is byte for byte the note, which states exactly the
 * record's fields for this log (note_mismatch). `imported` caches keys across calls.
 */
export async function authenticateCheckpoint(
  cp: CheckpointRecord,
  logId: string,
  keys: VerificationKey[],
  imported: Map<string, Promise<ImportedKey>> = new Map(),
): Promise<CheckpointProblem | null> {
  const signed = await verifyJws(cp.jws, keys, imported);
  if (!(signed instanceof Uint8Array)) return signed;
  // Bytes, not decoded text: a lenient UTF-8 decode could make different bytes look equal.
  const noteBytes = utf8(cp.note);
  if (signed.length !== noteBytes.length || signed.some((b, i) => b !== noteBytes[i])) {
    return { reason: "note_mismatch", expected: new TextDecoder().decode(signed), actual: cp.note };
  }
  let note: ReturnType<typeof parseCheckpointNote>;
  try {
    note = parseCheckpointNote(cp.note);
  } catch (error) {
    return { reason: "note_mismatch", actual: (error as Error).message };
  }
  const pairs = [
    [note.logId, cp.log_id],
    [note.treeSize, cp.tree_size],
    [note.rootHash, cp.root_hash],
    [note.time, cp.time],
    [logId, cp.log_id],
  ];
  const differ = pairs.find(([inNote, inRecord]) => inNote !== inRecord);
  return differ
    ? { reason: "note_mismatch", expected: String(differ[0]), actual: String(differ[1]) }
    : null;
}

/**
 * The payload of a compact JWS, verified with WebCrypto directly (not jose, so the verifier is
 * independent of the signer). The protected header must be what the signer writes: alg
 * EdDSA, typ tlog-checkpoint, a known kid, nothing critical.
 */
async function verifyJws(
  jws: string,
  keys: VerificationKey[],
  imported: Map<string, Promise<ImportedKey>>,
): Promise<Uint8Array | CheckpointProblem> {
  const invalid = { reason: "signature_invalid" } as const;
  const parts = typeof jws === "string" ? jws.split(".") : [];
  const [encodedHeader = "", encodedPayload = "", encodedSignature = ""] = parts;
  let header: Record<string, unknown>;
  let payload: Uint8Array;
  let signature: Uint8Array;
  try {
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
    header = JSON.parse(decoder.decode(base64UrlToBytes(encodedHeader)));
    payload = base64UrlToBytes(encodedPayload);
    signature = base64UrlToBytes(encodedSignature);
  } catch {
    return invalid;
  }
  if (parts.length !== 3 || header === null || typeof header !== "object") return invalid;
  const kid = header.kid;
  const jwk = keys.find(
    (k) => k.kid === kid && (k.kty ?? "OKP") === "OKP" && (k.crv ?? "Ed25519") === "Ed25519",
  );
  if (typeof kid !== "string" || !jwk) return { reason: "unknown_key", actual: String(kid) };
  if (header.alg !== "EdDSA" || header.typ !== CHECKPOINT_TYP || "crit" in header) return invalid;
  try {
    let key = imported.get(kid);
    if (!key) {
      const publicJwk = { kty: "OKP", crv: "Ed25519", x: jwk.x };
      key = crypto.subtle.importKey("jwk", publicJwk, { name: "Ed25519" }, false, ["verify"]);
      imported.set(kid, key);
    }
    // Copies backed by a plain ArrayBuffer: what the DOM typing of WebCrypto insists on.
    const input = new Uint8Array(utf8(`${encodedHeader}.${encodedPayload}`));
    const signed = new Uint8Array(signature);
    const valid = await crypto.subtle.verify({ name: "Ed25519" }, await key, signed, input);
    return valid ? payload : invalid;
  } catch {
    // A key that does not import, or a signature of the wrong length, verifies nothing.
    return invalid;
  }
}

function isIsoTime(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text)) return false;
  const ms = Date.parse(text);
  return Number.isFinite(ms) && new Date(ms).toISOString() === text;
}
