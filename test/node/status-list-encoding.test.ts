import { describe, expect, it } from "vitest";
import {
  compressStatusList,
  decompressStatusList,
  StatusListUnreadable,
  setStatus,
  statusAt,
} from "../../src/status-lists/encoding";
import { readStatusListToken, StatusListRefused, verifyingKey } from "../../src/status-lists/token";
import {
  EXAMPLE_TOKEN,
  EXAMPLE_TOKEN_KEY,
  LONG_VECTORS,
  SHORT_VECTORS,
} from "../support/status-list-vectors";

// draft-ietf-oauth-status-list §4.1 (the byte array), §4.2 (`lst`), §5.1 (the token) and its
// appendix of test vectors, as §11.1 asks of implementations.

describe("the Status List byte array (§4.1)", () => {
  it("reads the draft's 1-bit and 2-bit examples bit for bit", async () => {
    const [one, two] = SHORT_VECTORS;
    const bytes1 = await decompressStatusList(one.lst);
    expect([...bytes1]).toEqual(one.bytes);
    const expected1 = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    expect(expected1.map((_, i) => statusAt(bytes1, 1, i))).toEqual(expected1);
    const bytes2 = await decompressStatusList(two.lst);
    expect([...bytes2]).toEqual(two.bytes);
    const expected2 = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3];
    expect(expected2.map((_, i) => statusAt(bytes2, 2, i))).toEqual(expected2);
  });

  for (const vector of LONG_VECTORS) {
    it(`reads the appendix's ${vector.bits}-bit list of 2^20 entries`, async () => {
      const bytes = await decompressStatusList(vector.lst);
      expect(bytes.byteLength).toBe((vector.size * vector.bits) / 8);
      // Later assignments win, as in the generator (the 8-bit one draws indices at random).
      const expected = new Map(vector.statuses);
      for (const [idx, status] of expected) expect(statusAt(bytes, vector.bits, idx)).toBe(status);
      let nonZero = 0;
      for (let idx = 0; idx < vector.size; idx++) {
        if (statusAt(bytes, vector.bits, idx) !== 0) nonZero++;
      }
      expect(nonZero).toBe([...expected.values()].filter((s) => s !== 0).length);
      expect(statusAt(bytes, vector.bits, vector.size)).toBeNull();
    });
  }

  it("writes what it reads: set, compress, inflate, read, for every width", async () => {
    for (const bits of [1, 2, 4, 8] as const) {
      const bytes = new Uint8Array((1024 * bits) / 8);
      const max = (1 << bits) - 1;
      for (const idx of [0, 1, 7, 8, 500, 1023]) setStatus(bytes, bits, idx, idx % (max + 1));
      setStatus(bytes, bits, 7, max);
      setStatus(bytes, bits, 7, 1);
      const back = await decompressStatusList(await compressStatusList(bytes));
      expect(back).toEqual(bytes);
      expect(statusAt(back, bits, 7)).toBe(1);
      expect(statusAt(back, bits, 500)).toBe(500 % (max + 1));
      expect(statusAt(back, bits, 2)).toBe(0);
    }
  });

  it("refuses what is not ZLIB, not base64url, or inflates past the bound", async () => {
    await expect(decompressStatusList("not*base64")).rejects.toBeInstanceOf(StatusListUnreadable);
    await expect(decompressStatusList("AAAA")).rejects.toBeInstanceOf(StatusListUnreadable);
    const bomb = await compressStatusList(new Uint8Array(4 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(10_000);
    await expect(decompressStatusList(bomb)).rejects.toThrow(/inflates past/);
  });
});

describe("the Status List Token (§5.1)", () => {
  it("reads and verifies the draft's example token under its key", async () => {
    const token = readStatusListToken(EXAMPLE_TOKEN);
    expect(token).toMatchObject({
      sub: "https://example.com/statuslists/1",
      iat: 1686920170,
      exp: 2291720170,
      ttl: 43200,
      bits: 1,
      lst: "eNrbuRgAAhcBXQ",
    });
    const key = await verifyingKey(token, [{ kid: "12", jwk: EXAMPLE_TOKEN_KEY }]);
    expect(key?.alg).toBe("ES256");
    expect(await verifyingKey(token, [{ kid: "13", jwk: EXAMPLE_TOKEN_KEY }])).toBeNull();
    const bytes = await decompressStatusList(token.lst);
    expect(statusAt(bytes, token.bits, 0)).toBe(1);
    expect(statusAt(bytes, token.bits, 1)).toBe(0);
  });

  it("refuses a token of another typ, without sub or iat, or with bits outside 1, 2, 4, 8", () => {
    const [, payload, signature] = EXAMPLE_TOKEN.split(".");
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const claims = JSON.parse(Buffer.from(payload as string, "base64url").toString());
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ alg: "ES256", typ: "JWT" }, claims],
      [
        { alg: "ES256", typ: "statuslist+jwt" },
        { ...claims, sub: undefined },
      ],
      [
        { alg: "ES256", typ: "statuslist+jwt" },
        { ...claims, iat: "now" },
      ],
      [
        { alg: "ES256", typ: "statuslist+jwt" },
        { ...claims, ttl: 0 },
      ],
      [
        { alg: "ES256", typ: "statuslist+jwt" },
        { ...claims, status_list: { bits: 3, lst: "" } },
      ],
    ];
    for (const [header, body] of cases) {
      expect(() => readStatusListToken(`${b64(header)}.${b64(body)}.${signature}`)).toThrow(
        StatusListRefused,
      );
    }
    const media = `${b64({ alg: "ES256", typ: "application/statuslist+jwt" })}.${payload}.${signature}`;
    expect(readStatusListToken(media).sub).toBe(claims.sub);
  });
});
