import { createHash, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ed25519Jwk } from "../../scripts/local-keys";
import type { Env } from "../../src/env";
import {
  ARTIFACT_RECEIPT_TYP,
  checkReceipt,
  receiptClaims,
  signArtifactReceipt,
  storedLeafHash,
} from "../../src/evidence/artifact-receipt";
import { ES256_KEY_PURPOSES, KEY_PURPOSES } from "../../src/evidence/trust-list";
import type { StoredEntry } from "../../src/ledger/ledger-store";
import { signer } from "../../src/signing/signer";
import { ed25519Verify } from "../support/ed25519";

// The receipt as a holder meets it: verified here with node:crypto's Ed25519 and the RFCs
// alone, then the service's own check run against the same bytes and their forgeries.

const ORG = "0190f0c2-7a3e-7d41-9c1e-8b5d2f3a4c6e";
const ENTRY_HASH = "78dc8b36246a061cf8020b377b30d349773afdb926139a5785577bbac998b82f";
const LEAF_HASH = createHash("sha256")
  .update(Buffer.concat([Buffer.from([0]), Buffer.from(ENTRY_HASH, "hex")]))
  .digest("hex");

const entry: StoredEntry = {
  sequence: 7,
  id: "0190f0c2-7a3f-7000-8000-000000000007",
  type: "artifact.registered",
  actor: { type: "api_key", id: "k1" },
  subject: { type: "artifact", id: "0190f0c2-7a3f-7000-8000-0000000000aa" },
  digest: `sha256:${"ab".repeat(32)}`,
  time: "2026-01-01T00:00:00.000Z",
  prev_hash: "0".repeat(64),
  hash: ENTRY_HASH,
  leaf_hash: LEAF_HASH,
};

const facts = {
  artifactId: "0190f0c2-7a3f-7000-8000-0000000000aa",
  orgId: ORG,
  livemode: true,
  digest: `sha256:${"9f".repeat(32)}`,
  registeredAt: new Date("2026-01-01T00:00:00.123Z"),
};

async function serviceKey() {
  const { privateJwk } = ed25519Jwk();
  return signer({ SIGNING_KEY: JSON.stringify(privateJwk) } as Env);
}

/** node:crypto's Ed25519 and the suite's own RFC 8032 arithmetic, which must agree. */
function nodeVerify(jws: string, x: string): boolean {
  const [h, p, s] = jws.split(".") as [string, string, string];
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  const input = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, "base64url");
  const valid = verify(null, input, key, signature);
  expect(ed25519Verify(Buffer.from(x, "base64url"), input, signature)).toBe(valid);
  return valid;
}

const part = (jws: string, i: number) =>
  JSON.parse(Buffer.from(jws.split(".")[i] ?? "", "base64url").toString("utf8"));

describe("an artifact receipt, offline", () => {
  it("verifies with node:crypto under the published key and says exactly what it binds", async () => {
    const key = await serviceKey();
    const jws = await signArtifactReceipt(key, facts, entry);
    const published = key.keys[0];
    expect(nodeVerify(jws, published?.x ?? "")).toBe(true);
    expect(part(jws, 0)).toEqual({ alg: "EdDSA", kid: key.kid, typ: ARTIFACT_RECEIPT_TYP });
    expect(part(jws, 1)).toEqual({
      iss: "agent-risk",
      sub: facts.artifactId,
      org: ORG,
      livemode: true,
      digest: facts.digest,
      iat: 1767225600,
      registered_at: "2026-01-01T00:00:00.123Z",
      // docs/ledger.md's worked example: this org's log id.
      log_id: "e3293b190e5f17b916f165736be2e183",
      entry: { id: entry.id, sequence: 7, hash: ENTRY_HASH, leaf_hash: LEAF_HASH },
    });
  });

  it("is the same bytes whoever signs the same registration (Ed25519 is deterministic)", async () => {
    const key = await serviceKey();
    const a = await signArtifactReceipt(key, facts, entry);
    const b = await signArtifactReceipt(key, { ...facts }, { ...entry });
    expect(a).toBe(b);
    expect(receiptClaims(facts, entry)).toEqual(part(a, 1));
  });

  it("is accepted by the service's check, and each forgery refused with its reason", async () => {
    const key = await serviceKey();
    const jws = await signArtifactReceipt(key, facts, entry);
    const ok = await checkReceipt(key.keys, jws);
    expect(ok).toEqual({
      signature_valid: true,
      kid: key.kid,
      key_status: "current",
      claims: part(jws, 1),
      problem: null,
    });

    const [h, , s] = jws.split(".") as [string, string, string];
    const changed = Buffer.from(
      JSON.stringify({ ...part(jws, 1), digest: `sha256:${"00".repeat(32)}` }),
    ).toString("base64url");
    const reencoded = await checkReceipt(key.keys, `${h}.${changed}.${s}`);
    expect(reencoded.problem?.code).toBe("signature_invalid");
    expect(nodeVerify(`${h}.${changed}.${s}`, key.keys[0]?.x ?? "")).toBe(false);

    const other = await serviceKey();
    expect((await checkReceipt(other.keys, jws)).problem?.code).toBe("unknown_key");
    // A retired key still published verifies, named retired.
    const rotated = [...other.keys, ...key.keys];
    expect(await checkReceipt(rotated, jws)).toMatchObject({
      signature_valid: true,
      key_status: "retired",
    });

    // Signed by the key, but not a receipt: another typ, or claims of another shape.
    const grant = await key.signClaims(part(jws, 1), "action-grant+jwt");
    expect((await checkReceipt(key.keys, grant)).problem?.code).toBe("not_a_receipt");
    const extra = await key.signClaims({ ...part(jws, 1), admin: true }, ARTIFACT_RECEIPT_TYP);
    expect((await checkReceipt(key.keys, extra)).problem?.code).toBe("not_a_receipt");

    // alg none, or an HMAC header, never verifies whatever the bytes.
    const none = Buffer.from(JSON.stringify({ alg: "none", kid: key.kid })).toString("base64url");
    expect((await checkReceipt(key.keys, `${none}.${changed}.${s}`)).problem?.code).toBe(
      "signature_invalid",
    );
    expect((await checkReceipt(key.keys, "x.y.z")).problem?.code).toBe("malformed_receipt");
  });

  it("a signature by another Ed25519 key under the service's kid does not verify", async () => {
    const key = await serviceKey();
    const { privateKey } = generateKeyPairSync("ed25519");
    const header = Buffer.from(
      JSON.stringify({ alg: "EdDSA", kid: key.kid, typ: ARTIFACT_RECEIPT_TYP }),
    ).toString("base64url");
    const payload = Buffer.from(JSON.stringify(receiptClaims(facts, entry))).toString("base64url");
    const signature = sign(null, Buffer.from(`${header}.${payload}`), privateKey);
    const forged = `${header}.${payload}.${signature.toString("base64url")}`;
    expect((await checkReceipt(key.keys, forged)).problem?.code).toBe("signature_invalid");
  });
});

describe("a receipt's encoding", () => {
  it("is refused as malformed when a part is not canonical base64url (padding, stray bits)", async () => {
    const key = await serviceKey();
    const jws = await signArtifactReceipt(key, facts, entry);
    const [h, p, s] = jws.split(".") as [string, string, string];
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const strayBit = (part: string) =>
      `${part.slice(0, -1)}${alphabet[alphabet.indexOf(part.at(-1) ?? "A") ^ 1]}`;
    // A 64-byte signature has 4 unused bits: the flipped spelling decodes to the same bytes.
    expect(Buffer.from(strayBit(s), "base64url")).toEqual(Buffer.from(s, "base64url"));
    // Stray bits, padding, a part of a length no bytes encode to.
    for (const forged of [`${h}.${p}.${strayBit(s)}`, `${h}.${p}.${s}=`, `${h}.A.${s}`]) {
      expect(await checkReceipt(key.keys, forged)).toEqual({
        signature_valid: false,
        kid: null,
        key_status: "unknown",
        claims: null,
        problem: {
          code: "malformed_receipt",
          message: "a part is not canonical unpadded base64url",
        },
      });
    }
  });

  it("names its leaf hash to the service leniently: only that field is read from a stored receipt", async () => {
    const key = await serviceKey();
    expect(storedLeafHash(await signArtifactReceipt(key, facts, entry))).toBe(LEAF_HASH);
    const older = await key.signClaims({ entry: { leaf_hash: LEAF_HASH }, v: 0 }, "x");
    expect(storedLeafHash(older)).toBe(LEAF_HASH);
    expect(storedLeafHash("x.y.z")).toBeNull();
    expect(storedLeafHash(await key.signClaims({ entry: {} }, "x"))).toBeNull();
  });
});

// --- The trust list's purposes against every `typ` the service key signs, found in src/ ---

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? sourceFiles(join(dir, d.name))
      : d.name.endsWith(".ts")
        ? [join(dir, d.name)]
        : [],
  );
}

/** The arguments of the call whose `(` is at `open`, split at top-level commas. */
function callArguments(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    else if (ch === "(" || ch === "{" || ch === "[") depth++;
    else if (ch === ")" || ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i));
        return args.map((a) => a.trim()).filter((a) => a !== "");
      }
    } else if (ch === "," && depth === 1) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  throw new Error("unbalanced call");
}

/**
 * Every `typ` passed to signClaims / signBytes / signDetached in src/, literal or constant,
 * by the key that signs it: `es256.signClaims` is the ES256 key's, the rest the Ed25519 key's.
 */
function signedTyps(): { eddsa: Set<string>; es256: Set<string> } {
  const root = fileURLToPath(new URL("../../src", import.meta.url));
  const files = sourceFiles(root).filter((f) => !f.endsWith(join("signing", "signer.ts")));
  const texts = files.map((f) => readFileSync(f, "utf8"));
  const constants = new Map<string, Set<string>>();
  for (const text of texts) {
    for (const [, name = "", value = ""] of text.matchAll(/const (\w+) = "([^"]+)"/g)) {
      constants.set(name, (constants.get(name) ?? new Set()).add(value));
    }
  }
  const typs = { eddsa: new Set<string>(), es256: new Set<string>() };
  texts.forEach((text, i) => {
    for (const call of text.matchAll(/(\.es256)?\.sign(?:Claims|Bytes|Detached)\(/g)) {
      const into = call[1] ? typs.es256 : typs.eddsa;
      // The typ is the second argument of each (a header may follow it).
      const last = callArguments(text, (call.index ?? 0) + call[0].length - 1)[1] ?? "";
      const literal = /^"([^"]+)"$/.exec(last)?.[1];
      const named = constants.get(last);
      if (literal) into.add(literal);
      else if (named) for (const value of named) into.add(value);
      else throw new Error(`${files[i]}: cannot resolve the typ argument ${last}`);
    }
  });
  return typs;
}

describe("the trust list's purposes", () => {
  it("are exactly the typ values the service key signs anywhere in src/", () => {
    const found = signedTyps();
    // The grep itself finds the known signers (so it cannot pass by finding nothing).
    for (const typ of ["coverage-report+jwt", "tlog-checkpoint", "risk-payload+jwt"]) {
      expect(found.eddsa).toContain(typ);
    }
    expect([...KEY_PURPOSES].sort()).toEqual([...found.eddsa].sort());
    expect([...ES256_KEY_PURPOSES].sort()).toEqual([...found.es256].sort());
  });
});
