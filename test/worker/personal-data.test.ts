import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base64url, fromBase64url } from "#audit/encoding";
import type { Env } from "../../src/env";
import { ApiError } from "../../src/errors";
import {
  type MasterKey,
  masterKey,
  openPersonalData,
  type PersonalDataBinding,
  type Sealed,
  sealPersonalData,
} from "../../src/identity/personal-data";

const utf8 = new TextEncoder();

function newMasterJwk(kid = `pmk_${crypto.randomUUID().slice(0, 8)}`) {
  return { kty: "oct", k: base64url(crypto.getRandomValues(new Uint8Array(32))), kid };
}

// Set here rather than read from the bindings, so the tests hold the key's bytes.
const masterJwk = newMasterJwk();
const testEnv: Env = { ...env, PRINCIPAL_MASTER_KEY: JSON.stringify(masterJwk) };

const ada: PersonalDataBinding = { orgId: crypto.randomUUID(), principalId: crypto.randomUUID() };
const grace: PersonalDataBinding = { orgId: ada.orgId, principalId: crypto.randomUUID() };
const data = { name: "Ada Lovelace", email: "ada@example.com", address: { city: "Zürich" } };

const seal = async (binding = ada, payload: Record<string, unknown> = data) =>
  sealPersonalData(await masterKey(testEnv), binding, payload);
const open = async (sealed: Sealed, binding = ada, master?: MasterKey) =>
  openPersonalData(master ?? (await masterKey(testEnv)), binding, sealed);

async function expectInternalError(promise: Promise<unknown>) {
  const error = await promise.then(
    () => expect.fail("the sealed data opened"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ code: "internal_error", status: 500 });
  expect((error as ApiError).cause).toBeInstanceOf(Error);
}

// The documented format, rebuilt here independently of the implementation.
function associatedData(purpose: string, binding: PersonalDataBinding, kid?: string) {
  const fields = ["agent-risk/principal", "v1", purpose, binding.orgId, binding.principalId];
  return utf8.encode(JSON.stringify(kid === undefined ? fields : [...fields, kid]));
}

async function aesGcm(keyBytes: Uint8Array, iv: Uint8Array, ad: Uint8Array, input: Uint8Array) {
  const key = await crypto.subtle.importKey("raw", keyBytes, "AES-GCM", false, ["decrypt"]);
  const params = { name: "AES-GCM", iv, additionalData: ad };
  return new Uint8Array(await crypto.subtle.decrypt(params, key, input));
}

async function encryptGcm(keyBytes: Uint8Array, ad: Uint8Array, plaintext: Uint8Array) {
  const key = await crypto.subtle.importKey("raw", keyBytes, "AES-GCM", false, ["encrypt"]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const params = { name: "AES-GCM", iv, additionalData: ad };
  const out = new Uint8Array(await crypto.subtle.encrypt(params, key, plaintext));
  return `${base64url(iv)}.${base64url(out)}`;
}

/** The data key, as anyone holding the master key's bytes and the wrapped key can recover it. */
async function unwrapWithMasterBytes(wrappedKey: string, binding: PersonalDataBinding) {
  const [, kid, iv, wrapped] = wrappedKey.split(".") as [string, string, string, string];
  const ad = associatedData("key", binding, kid);
  return aesGcm(fromBase64url(masterJwk.k), fromBase64url(iv), ad, fromBase64url(wrapped));
}

async function decryptWith(keyBytes: Uint8Array, ciphertext: string, binding = ada) {
  const [, iv, body] = ciphertext.split(".") as [string, string, string];
  const ad = associatedData("data", binding);
  const plain = await aesGcm(keyBytes, fromBase64url(iv), ad, fromBase64url(body));
  return JSON.parse(new TextDecoder().decode(plain));
}

/** Flips one bit of the decoded bytes of the dot-separated field at `index`. */
function tamper(encoded: string, index: number): string {
  const parts = encoded.split(".");
  const bytes = fromBase64url(parts[index] as string);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
  parts[index] = base64url(bytes);
  return parts.join(".");
}

describe("sealing personal data", () => {
  it("opens what it sealed, for the same org and principal", async () => {
    expect(await open(await seal())).toEqual(data);
  });

  it("writes self-describing strings that name the master key and hide the data", async () => {
    const sealed = await seal();
    const b64 = "[A-Za-z0-9_-]";
    expect(sealed.wrappedKey).toMatch(
      new RegExp(`^v1\\.${masterJwk.kid}\\.${b64}{16}\\.${b64}{64}$`),
    );
    expect(sealed.ciphertext).toMatch(new RegExp(`^v1\\.${b64}{16}\\.${b64}+$`));
    const bytes = new TextDecoder().decode(
      fromBase64url(sealed.ciphertext.split(".")[2] as string),
    );
    expect(bytes).not.toContain("Ada");
  });

  it("follows the documented format: the master key unwraps a data key that decrypts the data", async () => {
    const sealed = await seal();
    const dataKey = await unwrapWithMasterBytes(sealed.wrappedKey, ada);
    expect(dataKey).toHaveLength(32);
    expect(await decryptWith(dataKey, sealed.ciphertext)).toEqual(data);
  });

  it("draws a fresh data key and fresh IVs for every seal, even of the same data", async () => {
    const [first, second] = await Promise.all([seal(), seal()]);
    const [firstParts, secondParts] = [first, second].map((s) => [
      ...s.wrappedKey.split("."),
      ...s.ciphertext.split("."),
    ]);
    for (const i of [2, 3, 5, 6]) expect(firstParts?.[i]).not.toBe(secondParts?.[i]);
    const firstKey = await unwrapWithMasterBytes(first.wrappedKey, ada);
    const secondKey = await unwrapWithMasterBytes(second.wrappedKey, ada);
    expect(base64url(firstKey)).not.toBe(base64url(secondKey));
    await expect(decryptWith(firstKey, second.ciphertext)).rejects.toThrow();
  });
});

describe("opening refuses anything but the sealed row, untouched", () => {
  it.each<[string, PersonalDataBinding]>([
    ["another principal of the same org", grace],
    ["the same principal id in another org", { ...ada, orgId: crypto.randomUUID() }],
    ["the org and principal ids swapped", { orgId: ada.principalId, principalId: ada.orgId }],
  ])("does not open for %s", async (_, binding) => {
    await expectInternalError(open(await seal(), binding));
  });

  it("does not open one principal's ciphertext with another's wrapped key", async () => {
    const [mine, theirs] = await Promise.all([seal(ada), seal(grace)]);
    await expectInternalError(open({ ...mine, wrappedKey: theirs.wrappedKey }, ada));
    await expectInternalError(open({ ...mine, wrappedKey: theirs.wrappedKey }, grace));
  });

  it.each([
    ["the wrapped key's IV", "wrappedKey", 2],
    ["the wrapped key", "wrappedKey", 3],
    ["the data's IV", "ciphertext", 1],
    ["the data's ciphertext", "ciphertext", 2],
  ] as const)("fails when one bit of %s changes", async (_, field, index) => {
    const sealed = await seal();
    await expectInternalError(open({ ...sealed, [field]: tamper(sealed[field], index) }));
  });

  it.each([
    ["an unknown version", (s: Sealed) => ({ ...s, ciphertext: s.ciphertext.replace("v1", "v2") })],
    ["a truncated ciphertext", (s: Sealed) => ({ ...s, ciphertext: s.ciphertext.slice(0, -4) })],
    ["an empty wrapped key", (s: Sealed) => ({ ...s, wrappedKey: "" })],
    ["garbage", () => ({ wrappedKey: "v1.x.!!.??", ciphertext: "v1.%.%" })],
  ])("fails on %s", async (_, change) => {
    await expectInternalError(open(change(await seal())));
  });

  it("does not open under another master key with the same kid", async () => {
    const other = newMasterJwk(masterJwk.kid);
    const otherMaster = await masterKey({ PRINCIPAL_MASTER_KEY: JSON.stringify(other) });
    await expectInternalError(open(await seal(), ada, otherMaster));
  });

  it("does not open under the same key bytes announced under another kid", async () => {
    const renamed = { ...masterJwk, kid: "pmk_renamed" };
    const renamedMaster = await masterKey({ PRINCIPAL_MASTER_KEY: JSON.stringify(renamed) });
    await expectInternalError(open(await seal(), ada, renamedMaster));
  });

  it("never returns sealed JSON that is not an object", async () => {
    const dataKey = crypto.getRandomValues(new Uint8Array(32));
    const wrapped = await encryptGcm(
      fromBase64url(masterJwk.k),
      associatedData("key", ada, masterJwk.kid),
      dataKey,
    );
    const ciphertext = await encryptGcm(dataKey, associatedData("data", ada), utf8.encode("[1]"));
    const forged = { wrappedKey: `v1.${masterJwk.kid}.${wrapped}`, ciphertext: `v1.${ciphertext}` };
    await expectInternalError(open(forged));
  });
});

describe("crypto-erasure: without the wrapped key, the ciphertext is noise", () => {
  /** Every 256-bit key material the service or an insider could lay hands on. */
  async function everyOtherKey(erasedPrincipalOldSeal: Sealed, otherPrincipal: Sealed) {
    const signing = JSON.parse(env.SIGNING_KEY as string);
    const idp = JSON.parse(env.TEST_IDP_PRIVATE_JWK);
    const master = fromBase64url(masterJwk.k);
    return {
      "the master key itself": master,
      "SHA-256 of the master key": new Uint8Array(await crypto.subtle.digest("SHA-256", master)),
      "another principal's data key": await unwrapWithMasterBytes(otherPrincipal.wrappedKey, grace),
      "the principal's previous data key": await unwrapWithMasterBytes(
        erasedPrincipalOldSeal.wrappedKey,
        ada,
      ),
      "the signing key's private bytes": fromBase64url(signing.d),
      "the signing key's public bytes": fromBase64url(signing.x),
      "the identity provider's private bytes": fromBase64url(idp.d),
      "all zeros": new Uint8Array(32),
    };
  }

  it("no key material the service holds decrypts an erased principal's data", async () => {
    const oldSeal = await seal(ada, { name: "Ada (old)" });
    const other = await seal(grace, { name: "Grace" });
    const current = await seal();
    // Erasure: the row keeps only the ciphertext.
    const leftBehind = current.ciphertext;
    const keys = Object.entries(await everyOtherKey(oldSeal, other));
    expect(keys.every(([, bytes]) => bytes.length === 32)).toBe(true);
    for (const [name, bytes] of keys) {
      const attempt = decryptWith(bytes, leftBehind).then(() => `${name} decrypted it`);
      await expect(attempt, name).rejects.toThrow();
    }
  });

  it("even the master key cannot forge a wrapped key that opens the erased data", async () => {
    const oldSeal = await seal(ada, { name: "Ada (old)" });
    const other = await seal(grace, { name: "Grace" });
    const { ciphertext } = await seal();
    for (const [name, bytes] of Object.entries(await everyOtherKey(oldSeal, other))) {
      const wrapped = await encryptGcm(
        fromBase64url(masterJwk.k),
        associatedData("key", ada, masterJwk.kid),
        bytes,
      );
      const forged = { wrappedKey: `v1.${masterJwk.kid}.${wrapped}`, ciphertext };
      await expect(open(forged), name).rejects.toMatchObject({ code: "internal_error" });
    }
  });
});

describe("the master key", () => {
  it("is imported once per secret, as a key that only wraps and unwraps", async () => {
    const master = await masterKey(testEnv);
    expect(await masterKey({ ...testEnv })).toBe(master);
    expect(master.kid).toBe(masterJwk.kid);
    expect(master.key.extractable).toBe(false);
    expect([...master.key.usages].sort()).toEqual(["unwrapKey", "wrapKey"]);
  });

  it.each<[string, string | undefined]>([
    ["missing", undefined],
    ["empty", ""],
    ["not JSON", "not json"],
    ["a JSON array", "[]"],
    ["not an oct key", JSON.stringify({ ...masterJwk, kty: "RSA" })],
    ["128 bits", JSON.stringify({ ...masterJwk, k: base64url(new Uint8Array(16)) })],
    ["without k", JSON.stringify({ kty: "oct", kid: "pmk_x" })],
    ["without a kid", JSON.stringify({ kty: "oct", k: masterJwk.k })],
    ["a kid with a dot", JSON.stringify({ ...masterJwk, kid: "pmk.1" })],
    ["a kid that is not a string", JSON.stringify({ ...masterJwk, kid: 7 })],
  ])("answers 503 encryption_key_unavailable when the secret is %s", async (_, secret) => {
    await expect(masterKey({ PRINCIPAL_MASTER_KEY: secret })).rejects.toMatchObject({
      code: "encryption_key_unavailable",
      status: 503,
    });
  });
});
