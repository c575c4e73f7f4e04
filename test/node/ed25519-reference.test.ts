import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ed25519Verify } from "../support/ed25519";

const hex = (s: string) => Uint8Array.from(Buffer.from(s, "hex"));

// RFC 8032 §7.1, tests 1 and 2.
const VECTORS = [
  {
    publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
];

describe("the test suite's own Ed25519 verifier (test/support/ed25519.ts)", () => {
  it.each(VECTORS)("accepts RFC 8032 vector with message '$message'", (v) => {
    expect(ed25519Verify(hex(v.publicKey), hex(v.message), hex(v.signature))).toBe(true);
  });

  it("rejects a changed message, a changed signature and another key", () => {
    const [one, two] = VECTORS as [(typeof VECTORS)[0], (typeof VECTORS)[0]];
    expect(ed25519Verify(hex(one.publicKey), hex("00"), hex(one.signature))).toBe(false);
    const flipped = hex(one.signature);
    flipped[5] = (flipped[5] ?? 0) ^ 1;
    expect(ed25519Verify(hex(one.publicKey), hex(one.message), flipped)).toBe(false);
    expect(ed25519Verify(hex(two.publicKey), hex(one.message), hex(one.signature))).toBe(false);
  });

  it("refuses S ≥ L (a malleated signature) and bad lengths", () => {
    const [one] = VECTORS as [(typeof VECTORS)[0]];
    const sig = hex(one.signature);
    // S + L has the same value mod L: a verifier that reduced S would accept it.
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] ?? 0);
    s += 2n ** 252n + 27742317777372353535851937790883648493n;
    const malleated = Uint8Array.from(sig);
    for (let i = 32; i < 64; i++) {
      malleated[i] = Number(s & 0xffn);
      s >>= 8n;
    }
    expect(ed25519Verify(hex(one.publicKey), hex(one.message), malleated)).toBe(false);
    expect(ed25519Verify(hex(one.publicKey), hex(one.message), sig.subarray(0, 63))).toBe(false);
  });

  it("agrees with node:crypto on fresh keys and messages", () => {
    for (let i = 0; i < 5; i++) {
      const { publicKey, privateKey } = generateKeyPairSync("ed25519");
      const raw = Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url");
      const message = Buffer.from(`message ${i} ${crypto.randomUUID()}`);
      const signature = sign(null, message, privateKey);
      expect(ed25519Verify(raw, message, signature)).toBe(true);
      expect(ed25519Verify(raw, Buffer.concat([message, Buffer.from("!")]), signature)).toBe(false);
    }
  });
});
