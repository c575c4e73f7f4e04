import {
  CompactSign,
  calculateJwkThumbprint,
  compactVerify,
  exportJWK,
  generateKeyPair,
  type JWK,
} from "jose";
import { describe, expect, it } from "vitest";
import { base64url, fromBase64url } from "#audit/encoding";
import { ApiError } from "../../src/errors";
import { parsePublicJwk, SIGNATURE_ALGS, verificationKey } from "../../src/identity/public-jwk";

async function publicJwk(alg: string, options: { crv?: string; modulusLength?: number } = {}) {
  const pair = await generateKeyPair(alg, { ...options, extractable: true });
  return { jwk: await exportJWK(pair.publicKey), privateKey: pair.privateKey, pair };
}

/** The `details` of the 400 that parsePublicJwk answers `input` with. */
async function refusal(input: unknown): Promise<{ path: string; message: string }[]> {
  const error = await parsePublicJwk(input).then(
    () => expect.fail("the key was accepted"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ code: "invalid_request", status: 400 });
  return (error as ApiError).details as { path: string; message: string }[];
}

async function refusedPaths(input: unknown): Promise<string[]> {
  return (await refusal(input)).map((p) => p.path);
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
function flipLowBit(char: string | undefined): string {
  return ALPHABET[ALPHABET.indexOf(char as string) ^ 1] as string;
}

// RFC 7638 §3.1: the example RSA key (with its alg and kid) and its SHA-256 thumbprint.
const rfc7638Key = {
  kty: "RSA",
  n: "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
  e: "AQAB",
  alg: "RS256",
  kid: "2011-04-29",
};

describe("accepted public keys", () => {
  it.each([
    ["EdDSA", {}, "OKP", "Ed25519"],
    ["ES256", {}, "EC", "P-256"],
    ["RS256", { modulusLength: 2048 }, "RSA", null],
  ] as const)("accepts a %s key with jose's thumbprint", async (alg, options, kty, crv) => {
    const { jwk } = await publicJwk(alg, options);
    const key = await parsePublicJwk(jwk);
    expect(key).toEqual({
      jwk,
      thumbprint: await calculateJwkThumbprint(jwk, "sha256"),
      kty,
      crv,
      alg,
    });
  });

  it("gives the RFC 7638 example key its published thumbprint, and drops alg and kid", async () => {
    const key = await parsePublicJwk(rfc7638Key);
    expect(key.thumbprint).toBe("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    expect(key.jwk).toEqual({ kty: "RSA", n: rfc7638Key.n, e: "AQAB" });
    expect(key.alg).toBe("RS256");
  });

  it("keeps an RSA key's own alg when it names an RSA signature alg", async () => {
    expect((await parsePublicJwk({ ...rfc7638Key, alg: "PS384" })).alg).toBe("PS384");
  });

  it("accepts Ed25519 as the alg of an Ed25519 key (RFC 9864)", async () => {
    const { jwk } = await publicJwk("EdDSA");
    expect((await parsePublicJwk({ ...jwk, alg: "Ed25519" })).alg).toBe("Ed25519");
  });

  it("strips every member the thumbprint does not cover, after checking alg, use and key_ops", async () => {
    const { jwk } = await publicJwk("ES256");
    const key = await parsePublicJwk({
      ...jwk,
      alg: "ES256",
      use: "sig",
      key_ops: ["verify"],
      kid: "agent-key-1",
      ext: true,
      x5u: "https://example.com/cert.pem",
      note: "anything",
    });
    expect(key.jwk).toEqual({ kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y });
  });

  it("gives the same thumbprint and JWK whatever the order of the members", async () => {
    const { jwk } = await publicJwk("ES256");
    const reversed = Object.fromEntries(Object.entries({ ...jwk, kid: "k" }).reverse());
    expect(Object.keys(reversed)).not.toEqual(Object.keys(jwk));
    const [a, b] = await Promise.all([parsePublicJwk(jwk), parsePublicJwk(reversed)]);
    expect(b.thumbprint).toBe(a.thumbprint);
    expect(JSON.stringify(b.jwk)).toBe(JSON.stringify(a.jwk));
  });
});

describe("refused: private key material", () => {
  it("refuses an Ed25519 private JWK, naming d and telling the caller to rotate the key", async () => {
    const { pair } = await publicJwk("EdDSA");
    const details = await refusal(await exportJWK(pair.privateKey));
    expect(details).toHaveLength(1);
    expect(details[0]?.path).toBe("jwk.d");
    expect(details[0]?.message).toMatch(/private key material is never accepted/);
    expect(details[0]?.message).toMatch(/rotate/);
  });

  it("refuses an RSA private JWK, naming each private member", async () => {
    const { pair } = await publicJwk("RS256", { modulusLength: 2048 });
    const paths = await refusedPaths(await exportJWK(pair.privateKey));
    expect(paths.sort()).toEqual(["jwk.d", "jwk.dp", "jwk.dq", "jwk.p", "jwk.q", "jwk.qi"]);
  });

  it.each([
    ["oth", { ...rfc7638Key, oth: [] }],
    ["k", { kty: "oct", k: "c2VjcmV0" }],
    ["d", { ...rfc7638Key, d: "" }],
  ])("refuses a JWK with %s, whatever its value", async (member, jwk) => {
    expect(await refusedPaths(jwk)).toEqual([`jwk.${member}`]);
  });
});

describe("refused: key types and curves", () => {
  it("refuses X25519, a key-agreement key", async () => {
    const { jwk } = await publicJwk("ECDH-ES", { crv: "X25519" });
    expect(await refusedPaths(jwk)).toEqual(["jwk.crv"]);
  });

  it("refuses P-384", async () => {
    const { jwk } = await publicJwk("ES384");
    expect(await refusedPaths(jwk)).toEqual(["jwk.crv"]);
  });

  it("refuses secp256k1", async () => {
    const { jwk } = await publicJwk("ES256");
    expect(await refusedPaths({ ...jwk, crv: "secp256k1" })).toEqual(["jwk.crv"]);
  });

  it.each([
    ["oct", { kty: "oct" }],
    ["missing", { x: "AAAA" }],
    ["AKP", { kty: "AKP", alg: "ML-DSA-44", pub: "AAAA" }],
  ])("refuses a kty that is %s", async (_, jwk) => {
    expect(await refusedPaths(jwk)).toEqual(["jwk.kty"]);
  });

  it("refuses an RSA key of 1024 bits", async () => {
    const pair = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const jwk = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
    const details = await refusal({ kty: "RSA", n: jwk.n, e: jwk.e });
    expect(details).toEqual([{ path: "jwk.n", message: "modulus must be 2048 to 8192 bits" }]);
  });

  it.each([null, [], "a string", 42])("refuses %j, which is not a JWK object", async (input) => {
    expect(await refusedPaths(input)).toEqual(["jwk"]);
  });
});

describe("refused: malformed key material", () => {
  it.each([
    ["standard base64 characters", (x: string) => `+/${x.slice(2)}`],
    ["padding", (x: string) => `${x}=`],
    // 43 characters carry 258 bits: setting an unused low bit gives a second spelling.
    ["a non-canonical last character", (x: string) => x.slice(0, -1) + flipLowBit(x.at(-1))],
    ["a number", () => 42],
    ["missing", () => undefined],
  ])("refuses an Ed25519 x with %s", async (_, change) => {
    const { jwk } = await publicJwk("EdDSA");
    expect(await refusedPaths({ ...jwk, x: change(jwk.x as string) })).toEqual(["jwk.x"]);
  });

  it("refuses an Ed25519 x that is not a point on the curve (y = 2)", async () => {
    const x = base64url(new Uint8Array([2, ...new Uint8Array(31)]));
    expect(await refusal({ kty: "OKP", crv: "Ed25519", x })).toEqual([
      { path: "jwk.x", message: "is not a point on Ed25519" },
    ]);
  });

  it("refuses an Ed25519 y that is not below p (a second encoding of a small number)", async () => {
    const p = new Uint8Array(32).fill(0xff);
    p[0] = 0xed;
    p[31] = 0x7f;
    expect(await refusedPaths({ kty: "OKP", crv: "Ed25519", x: base64url(p) })).toEqual(["jwk.x"]);
  });

  it.each([
    ["the identity", `01${"00".repeat(31)}`],
    ["a point of order 4", "00".repeat(32)],
    ["a point of order 8", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"],
  ])("refuses %s, a small-order Ed25519 point anyone can sign for", async (_, hex) => {
    const bytes = Uint8Array.from(hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
    expect(await refusal({ kty: "OKP", crv: "Ed25519", x: base64url(bytes) })).toEqual([
      { path: "jwk.x", message: "is a small-order point, not a key" },
    ]);
  });

  it("refuses a P-256 point that is not on the curve", async () => {
    const { jwk } = await publicJwk("ES256");
    const y = fromBase64url(jwk.y as string);
    y[31] = (y[31] as number) ^ 1;
    const details = await refusal({ ...jwk, y: base64url(y) });
    expect(details).toEqual([{ path: "jwk", message: "is not a valid P-256 public key" }]);
  });

  it("refuses P-256 coordinates of the wrong length", async () => {
    const { jwk } = await publicJwk("ES256");
    expect(await refusedPaths({ ...jwk, x: (jwk.x as string).slice(0, 40) })).toEqual(["jwk.x"]);
  });

  it("refuses an RSA modulus with a leading zero octet, so one key has one thumbprint", async () => {
    const n = base64url(new Uint8Array([0, ...fromBase64url(rfc7638Key.n)]));
    expect(await refusedPaths({ ...rfc7638Key, n })).toEqual(["jwk.n"]);
  });

  it.each(["AQAA", "AQ", "AAEAAQ", "AQAAAAAB"])("refuses the RSA exponent %s", async (e) => {
    expect(await refusedPaths({ ...rfc7638Key, e })).toEqual(["jwk.e"]);
  });
});

describe("refused: metadata that contradicts the key", () => {
  it.each([
    ["EdDSA", "ES256"],
    ["ES256", "EdDSA"],
    ["ES256", "ES384"],
    ["RS256", "ES256"],
    ["RS256", "none"],
    ["RS256", "HS256"],
  ])("refuses a %s key whose alg says %s", async (keyAlg, alg) => {
    const { jwk } = await publicJwk(keyAlg, { modulusLength: 2048 });
    expect(await refusedPaths({ ...jwk, alg })).toEqual(["jwk.alg"]);
  });

  it.each([["enc"], [""], [1]])("refuses use %j", async (use) => {
    const { jwk } = await publicJwk("EdDSA");
    expect(await refusedPaths({ ...jwk, use })).toEqual(["jwk.use"]);
  });

  it.each([[["sign"]], [["verify", "encrypt"]], [[]], ["verify"]])(
    "refuses key_ops %j",
    async (keyOps) => {
      const { jwk } = await publicJwk("EdDSA");
      expect(await refusedPaths({ ...jwk, key_ops: keyOps })).toEqual(["jwk.key_ops"]);
    },
  );

  it("names every problem at once", async () => {
    const paths = await refusedPaths({
      kty: "EC",
      crv: "P-384",
      x: "a=",
      alg: "RS256",
      use: "enc",
    });
    expect(paths).toEqual(["jwk.crv", "jwk.x", "jwk.y", "jwk.alg", "jwk.use"]);
  });
});

describe("verificationKey", () => {
  it.each([
    ["EdDSA", {}],
    ["ES256", {}],
    ["PS256", { modulusLength: 2048 }],
  ])("verifies %s signatures made by the registered key's private half", async (alg, options) => {
    const { jwk, privateKey } = await publicJwk(alg, options);
    const registered = await parsePublicJwk({ ...jwk, alg });
    const jws = await new CompactSign(new TextEncoder().encode("mandate"))
      .setProtectedHeader({ alg })
      .sign(privateKey);
    const key = await verificationKey(registered.jwk, registered.alg);
    const { payload } = await compactVerify(jws, key, { algorithms: [registered.alg] });
    expect(new TextDecoder().decode(payload)).toBe("mandate");
  });

  it("does not verify another key's signatures", async () => {
    const signerKey = await publicJwk("EdDSA");
    const other = await parsePublicJwk((await publicJwk("EdDSA")).jwk);
    const jws = await new CompactSign(new Uint8Array([1]))
      .setProtectedHeader({ alg: "EdDSA" })
      .sign(signerKey.privateKey);
    await expect(compactVerify(jws, await verificationKey(other.jwk, "EdDSA"))).rejects.toThrow();
  });

  it("imports a key once per alg, and never as an extractable key", async () => {
    const { jwk } = await publicJwk("ES256");
    const a = await verificationKey(jwk as JWK, "ES256");
    expect(await verificationKey({ ...jwk, kid: "ignored" } as JWK, "ES256")).toBe(a);
    expect(a.extractable).toBe(false);
    expect(a.usages).toEqual(["verify"]);
  });

  it("refuses an alg the key cannot verify", async () => {
    const { jwk } = await publicJwk("ES256");
    await expect(verificationKey(jwk as JWK, "RS256")).rejects.toThrow();
  });
});

describe("SIGNATURE_ALGS", () => {
  it("is exactly the algs a registered key can have: no HMAC, no none, no P-384", () => {
    expect([...SIGNATURE_ALGS].sort()).toEqual([
      "ES256",
      "Ed25519",
      "EdDSA",
      "PS256",
      "PS384",
      "PS512",
      "RS256",
      "RS384",
      "RS512",
    ]);
  });
});
