import { spawnSync } from "node:child_process";
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { entryHash, GENESIS_HASH, type LedgerEntry, leafHash, toLedgerEntry } from "#audit/chain";
import {
  type CheckpointRecord,
  checkpointNote,
  checkpointOrigin,
  logIdFor,
  parseCheckpointNote,
} from "#audit/checkpoint";
import { payloadDigest, sha256 } from "#audit/digest";
import {
  base64ToBytes,
  base64UrlToBytes,
  base64url,
  bytesToBase64,
  hexToBytes,
  toHex,
  utf8,
} from "#audit/encoding";
import {
  ExportFormatError,
  formatCheckpointLine,
  formatEndLine,
  formatEntryLine,
  formatHeaderLine,
  parseExportLine,
  verifyExport,
} from "#audit/export-format";
import {
  appendLeaf,
  consistencyProof,
  EMPTY_ROOT,
  Frontier,
  inclusionProof,
  memoryNodeStore,
  type NodeStore,
  nodeHash,
  rootAt,
  verifyConsistency,
  verifyInclusion,
} from "#audit/merkle";
import {
  type AuditEntryRecord,
  AuditVerifier,
  type VerificationKey,
  type VerifyReport,
} from "#audit/verify";

const sha256Hex = (...parts: (string | Uint8Array)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};
const flip = (hex: string) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);

describe("canonicalize (RFC 8785)", () => {
  it("matches the JCS reference test data (cyberphone/json-canonicalization)", () => {
    const values = `{"numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],
      "escaping": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}`;
    expect(canonicalize(JSON.parse(values))).toBe(
      '{"escaping":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],' +
        '"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
    );
    const structures = `{"1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0}, "10": { }, "": "empty",
      "a": { }, "111": [ { } ], "A": { }}`;
    expect(canonicalize(JSON.parse(structures))).toBe(
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
    );
    // Sorting by UTF-16 code units, not code points or locale: the emoji (a surrogate pair,
    // 0xd83d...) sorts before U+FB33.
    const weird = `{"\\u20ac": "Euro Sign", "1": "One", "\\u0080": "Control\\u007f",
      "\\ud83d\\ude02": "Smiley", "\\u00f6": "Latin Small Letter O With Diaeresis",
      "\\ufb33": "Hebrew Letter Dalet With Dagesh", "</script>": "Browser Challenge"}`;
    expect(canonicalize(JSON.parse(weird))).toBe(
      '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude02":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("serializes numbers as ECMAScript does (RFC 8785 appendix B) and refuses non-finite", () => {
    const fromBits = (hex: string) => new DataView(hexToBytes(hex).buffer).getFloat64(0);
    const cases: [string, string][] = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"],
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af6", "1e+23"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"],
    ];
    for (const [bits, text] of cases) expect(canonicalize(fromBits(bits))).toBe(text);
    expect(canonicalize([1e21, 0.000001, 1e-7, -0, 100, 1.5])).toBe(
      "[1e+21,0.000001,1e-7,0,100,1.5]",
    );
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => canonicalize({ a: [bad] })).toThrow(RangeError);
    }
  });

  it("treats JavaScript-only values as JSON.stringify does", () => {
    expect(canonicalize({ b: undefined, a: [undefined, () => 1], c: new Date(0) })).toBe(
      '{"a":[null,null],"c":"1970-01-01T00:00:00.000Z"}',
    );
    expect(canonicalize(["z", "a", { y: 1, x: [3, 2, 1] }])).toBe('["z","a",{"x":[3,2,1],"y":1}]');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalize(cyclic)).toThrow(TypeError);
    expect(() => canonicalize(10n)).toThrow(TypeError);
    expect(() => canonicalize(undefined)).toThrow(TypeError);
    const shared = { k: 1 };
    expect(canonicalize([shared, shared])).toBe('[{"k":1},{"k":1}]');
  });
});

describe("digest helpers", () => {
  it("hashes, encodes and decodes", () => {
    expect(toHex(sha256(utf8("ab"), utf8("c")))).toBe(sha256Hex("abc"));
    expect(toHex(hexToBytes("00ff10AB"))).toBe("00ff10ab");
    expect(() => hexToBytes("abc")).toThrow();
    const bytes = Uint8Array.from({ length: 40 }, (_, i) => i * 7);
    expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
    expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
    expect(base64url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
    expect(base64UrlToBytes(base64url(bytes))).toEqual(bytes);
    expect(() => base64ToBytes("AB==")).toThrow(); // non-zero unused bits: not canonical
    expect(() => base64ToBytes("AA")).toThrow(); // padding required
  });

  it("digests the canonical payload", () => {
    expect(payloadDigest({ b: 1, a: "x" })).toBe(`sha256:${sha256Hex('{"a":"x","b":1}')}`);
    expect(payloadDigest({ a: "x", b: 1 })).toBe(payloadDigest(JSON.parse('{"b":1,"a":"x"}')));
  });
});

const ORG = "0190f0c2-7a3e-7d41-9c1e-8b5d2f3a4c6e";
const SAMPLE: LedgerEntry = {
  v: 1,
  org_id: ORG,
  sequence: 1,
  id: "0190f0c2-7a3f-7000-8000-000000000001",
  type: "org.created",
  actor: { type: "user", id: "user-1" },
  subject: { type: "org", id: ORG },
  digest: `sha256:${"ab".repeat(32)}`,
  time: "2026-01-01T00:00:00.000Z",
};

describe("hash chain", () => {
  it("hashes prev_hash bytes then the canonical entry, and leaves per RFC 6962", () => {
    const json =
      '{"actor":{"id":"user-1","type":"user"},"digest":"sha256:' +
      "ab".repeat(32) +
      `","id":"0190f0c2-7a3f-7000-8000-000000000001","org_id":"${ORG}","sequence":1,` +
      `"subject":{"id":"${ORG}","type":"org"},"time":"2026-01-01T00:00:00.000Z","type":"org.created","v":1}`;
    expect(canonicalize(SAMPLE)).toBe(json);
    const hash = entryHash(GENESIS_HASH, SAMPLE);
    expect(hash).toBe(sha256Hex(Buffer.alloc(32), json));
    // Pinned: docs/ledger.md quotes this worked example.
    expect(hash).toBe("78dc8b36246a061cf8020b377b30d349773afdb926139a5785577bbac998b82f");
    expect(leafHash(hash)).toBe(sha256Hex(Buffer.from([0]), Buffer.from(hash, "hex")));
    // The checkpoint over this one-entry ledger, as docs/ledger.md shows it.
    const rootHash = leafHash(hash);
    expect(rootHash).toBe("026a532f7f46771a71c11eecb7ed2c9376d66fe26baafa386093d1cd2159b3a7");
    expect(rootAt(treeOf([rootHash]), 1)).toBe(rootHash);
    const logId = logIdFor(ORG);
    expect(logId).toBe("e3293b190e5f17b916f165736be2e183");
    expect(checkpointNote({ logId, treeSize: 1, rootHash, time: "2026-01-01T00:00:10.000Z" })).toBe(
      `agent-risk/log/${logId}\n1\nAmpTL39GdxpxwR7st+0sk3bWb+Jrqvo4YJPRzSFZs6c=\ntime 2026-01-01T00:00:10.000Z\n`,
    );
  });

  it("covers exactly the entry fields", () => {
    const wider = { ...SAMPLE, prev_hash: "x", actor: { ...SAMPLE.actor, name: "Alice" } };
    expect(entryHash(GENESIS_HASH, wider as LedgerEntry)).toBe(entryHash(GENESIS_HASH, SAMPLE));
    expect(entryHash(GENESIS_HASH, { ...SAMPLE, type: "org.updated" })).not.toBe(
      entryHash(GENESIS_HASH, SAMPLE),
    );
    expect(() => entryHash("00", SAMPLE)).toThrow();
  });
});

// Certificate Transparency / transparency-dev/merkle reference tree (RFC 6962 hashing).
const CT_DATA = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f",
];
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
const P = {
  a: "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
  b: "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
  c: "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
  d: "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
  e: "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
  f: "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  g: "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
  h: "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
};

function treeOf(leaves: string[]): NodeStore {
  const store = memoryNodeStore();
  for (const [i, leaf] of leaves.entries()) appendLeaf(store, i, leaf);
  return store;
}

/** RFC 6962 §2.1 MTH, straight from the definition. */
function naiveRoot(leaves: string[]): string {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}

describe("merkle (RFC 6962 / 9162)", () => {
  const ctLeaves = CT_DATA.map((d) => sha256Hex(Buffer.from([0]), Buffer.from(d, "hex")));
  const ct = treeOf(ctLeaves);

  it("reproduces the published roots and proofs", () => {
    expect(EMPTY_ROOT).toBe(sha256Hex(""));
    expect(rootAt(ct, 0)).toBe(EMPTY_ROOT);
    for (let n = 1; n <= 8; n++) expect(rootAt(ct, n)).toBe(CT_ROOTS[n - 1]);
    const inclusions: [number, number, string[]][] = [
      [0, 8, [P.a, P.b, P.c]],
      [5, 8, [P.d, P.e, P.f]],
      [2, 3, [CT_ROOTS[1]!]],
      [1, 5, [CT_ROOTS[0]!, P.b, P.d]],
      [0, 1, []],
    ];
    for (const [index, size, proof] of inclusions) {
      expect(inclusionProof(ct, index, size)).toEqual(proof);
      expect(verifyInclusion(ctLeaves[index]!, index, size, proof, CT_ROOTS[size - 1]!)).toBe(true);
    }
    const consistencies: [number, number, string[]][] = [
      [1, 1, []],
      [1, 8, [P.a, P.b, P.c]],
      [6, 8, [P.g, P.e, P.f]],
      [2, 5, [P.b, P.d]],
      [6, 7, [P.g, P.h, P.f]],
    ];
    for (const [m, n, proof] of consistencies) {
      expect(consistencyProof(ct, m, n)).toEqual(proof);
      expect(verifyConsistency(m, n, CT_ROOTS[m - 1]!, CT_ROOTS[n - 1]!, proof)).toBe(true);
    }
  });

  const N = 70;
  const leaves = Array.from({ length: N }, (_, i) => sha256Hex(Buffer.from([0]), `leaf ${i}`));
  const store = treeOf(leaves);
  const roots = Array.from({ length: N + 1 }, (_, n) => naiveRoot(leaves.slice(0, n)));

  it("computes every root from stored subtrees, and the frontier agrees", () => {
    const frontier = new Frontier();
    expect(frontier.root()).toBe(EMPTY_ROOT);
    for (let n = 1; n <= N; n++) {
      frontier.push(leaves[n - 1]!);
      expect(rootAt(store, n)).toBe(roots[n]);
      expect(frontier.size).toBe(n);
      expect(frontier.root()).toBe(roots[n]);
    }
  });

  it("proves every leaf included in every tree, and nothing else", () => {
    for (let n = 1; n <= N; n++) {
      const root = roots[n]!;
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(store, i, n);
        expect(verifyInclusion(leaves[i]!, i, n, proof, root)).toBe(true);
        expect(verifyInclusion(leaves[(i + 1) % N]!, i, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaves[i]!, i, n, proof, flip(root))).toBe(false);
        if (n > 1) expect(verifyInclusion(leaves[i]!, (i + 1) % n, n, proof, root)).toBe(false);
        // A wrong size changes the shape of the path (sizes with the same shape are bound by
        // the root instead, which a checkpoint signs together with its size).
        expect(verifyInclusion(leaves[i]!, i, 2 * n, proof, root)).toBe(false);
        if (i < n >> 1) expect(verifyInclusion(leaves[i]!, i, n >> 1, proof, root)).toBe(false);
        if (proof.length > 0) {
          expect(verifyInclusion(leaves[i]!, i, n, proof.slice(1), root)).toBe(false);
          expect(
            verifyInclusion(leaves[i]!, i, n, [flip(proof[0]!), ...proof.slice(1)], root),
          ).toBe(false);
        }
        expect(verifyInclusion(leaves[i]!, i, n, [...proof, root], root)).toBe(false);
      }
    }
  });

  it("proves every older tree a prefix of every newer one, and nothing else", () => {
    for (let n = 0; n <= N; n++) {
      for (let m = 0; m <= n; m++) {
        const proof = consistencyProof(store, m, n);
        const [r1, r2] = [roots[m]!, roots[n]!];
        expect(verifyConsistency(m, n, r1, r2, proof)).toBe(true);
        if (m === n) {
          expect(proof).toEqual([]);
          expect(verifyConsistency(m, n, r1, flip(r2), proof)).toBe(false);
          continue;
        }
        expect(verifyConsistency(n, m, r2, r1, proof)).toBe(false);
        if (m === 0) {
          // Every tree extends the empty one; only the empty root and an empty proof are asked.
          expect(proof).toEqual([]);
          expect(verifyConsistency(0, n, flip(EMPTY_ROOT), r2, [])).toBe(false);
          expect(verifyConsistency(0, n, EMPTY_ROOT, r2, [r2])).toBe(false);
          continue;
        }
        expect(verifyConsistency(m, n, r1, flip(r2), proof)).toBe(false);
        expect(verifyConsistency(m, n, flip(r1), r2, proof)).toBe(false);
        expect(verifyConsistency(m, n, r1, r2, proof.slice(0, -1))).toBe(false);
        expect(verifyConsistency(m, n, r1, r2, [flip(proof[0]!), ...proof.slice(1)])).toBe(false);
        expect(verifyConsistency(m, n, r1, r2, [...proof, r1])).toBe(false);
        if (m + 1 < n) expect(verifyConsistency(m + 1, n, roots[m + 1]!, r2, proof)).toBe(false);
      }
    }
  });

  it("reads O(log n) stored nodes and appends only the next leaf", () => {
    const big = treeOf(Array.from({ length: 1000 }, (_, i) => sha256Hex(`big ${i}`)));
    let reads = 0;
    const counting: NodeStore = {
      get: (level, index) => {
        reads++;
        return big.get(level, index);
      },
      set: big.set,
    };
    const count = (f: () => unknown) => {
      reads = 0;
      f();
      return reads;
    };
    for (const n of [1, 2, 3, 7, 8, 9, 100, 511, 512, 513, 777, 1000]) {
      expect(count(() => rootAt(counting, n))).toBe(n.toString(2).replaceAll("0", "").length);
      const bound = 2 * Math.ceil(Math.log2(n)) + 2;
      for (const i of [0, 1, n >> 1, n - 2, n - 1].filter((i) => i >= 0 && i < n)) {
        expect(count(() => inclusionProof(counting, i, n))).toBeLessThanOrEqual(bound);
        expect(count(() => consistencyProof(counting, i, n))).toBeLessThanOrEqual(bound);
      }
    }
    const small = treeOf(leaves.slice(0, 3));
    expect(() => appendLeaf(small, 2, leaves[2]!)).toThrow();
    expect(() => appendLeaf(small, 4, leaves[4]!)).toThrow();
    expect(() => rootAt(small, 4)).toThrow();
  });
});

describe("checkpoint note (C2SP tlog-checkpoint)", () => {
  const logId = logIdFor(ORG);
  const root = sha256Hex("root");
  const time = "2026-01-02T03:04:05.678Z";

  it("names the log pseudonymously", () => {
    expect(logId).toBe(sha256Hex(`agent-risk/log/v1\n${ORG}`).slice(0, 32));
    expect(checkpointOrigin(logId)).toBe(`agent-risk/log/${logId}`);
  });

  it("writes and parses the exact note", () => {
    const note = checkpointNote({ logId, treeSize: 100, rootHash: root, time });
    const b64 = Buffer.from(root, "hex").toString("base64");
    expect(note).toBe(`agent-risk/log/${logId}\n100\n${b64}\ntime ${time}\n`);
    const origin = checkpointOrigin(logId);
    expect(parseCheckpointNote(note)).toEqual({
      origin,
      logId,
      treeSize: 100,
      rootHash: root,
      time,
    });
    const bad = [
      note.slice(0, -1),
      `${note}extra\n`,
      note.replace("\n100\n", "\n0100\n"),
      note.replace("\n100\n", "\n-1\n"),
      note.replace(b64, b64.replace("=", "")),
      note.replace(b64, Buffer.alloc(31).toString("base64")),
      note.replace(time, "2026-01-02T03:04:05Z"),
      note.replace(time, "2026-02-30T03:04:05.678Z"),
      note.replace("agent-risk/log/", "other/log/"),
      note.replace("time ", "time:"),
    ];
    for (const text of bad) expect(() => parseCheckpointNote(text), JSON.stringify(text)).toThrow();
    expect(() => checkpointNote({ logId, treeSize: 1.5, rootHash: root, time })).toThrow();
    expect(() => checkpointNote({ logId, treeSize: 1, rootHash: "ab", time })).toThrow();
    expect(() => checkpointNote({ logId: "x", treeSize: 1, rootHash: root, time })).toThrow();
  });
});

// ---- A generated ledger, signed checkpoints, and the verifier ----

interface TestKey {
  kid: string;
  privateKey: KeyObject;
  jwk: VerificationKey;
}

function testKey(kid: string): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const { x, kty, crv } = publicKey.export({ format: "jwk" });
  return { kid, privateKey, jwk: { kid, x: x!, kty, crv } };
}

const KEY = testKey("test-key");
const OTHER = testKey("other-key");
const KEYS = [KEY.jwk];
const CHECKPOINT_SIZES = [10, 37, 64, 100];

/** By hand, independent of src/signing: base64url(header).base64url(note).signature. */
function signNote(note: string, key: TestKey, kid = key.kid): string {
  const b64u = (b: Uint8Array | string) => Buffer.from(b).toString("base64url");
  const input = `${b64u(JSON.stringify({ alg: "EdDSA", kid, typ: "tlog-checkpoint" }))}.${b64u(note)}`;
  return `${input}.${b64u(sign(null, Buffer.from(input), key.privateKey))}`;
}

function buildLog(size: number, orgId = ORG) {
  const rows: AuditEntryRecord[] = [];
  const store = memoryNodeStore();
  let prev = GENESIS_HASH;
  for (let sequence = 1; sequence <= size; sequence++) {
    const entry: LedgerEntry = {
      ...{ v: 1, org_id: orgId, sequence, id: `entry-${sequence}` },
      type: sequence === 1 ? "org.created" : "api_key.created",
      actor: { type: "user", id: "user-1" },
      subject: sequence % 3 === 0 ? null : { type: "api_key", id: `key-${sequence}` },
      digest: payloadDigest({ sequence }),
      time: new Date(Date.UTC(2026, 0, 1, 0, 0, sequence)).toISOString(),
    };
    const hash = entryHash(prev, entry);
    const { v, org_id, ...fields } = entry;
    rows.push({ ...fields, prev_hash: prev, hash });
    appendLeaf(store, sequence - 1, leafHash(hash));
    prev = hash;
  }
  let previous = 0;
  const checkpoints = CHECKPOINT_SIZES.filter((s) => s <= size).map(
    (treeSize): CheckpointRecord => {
      const rootHash = rootAt(store, treeSize);
      const time = new Date(Date.UTC(2026, 0, 2, 0, 0, treeSize)).toISOString();
      const note = checkpointNote({ logId: logIdFor(orgId), treeSize, rootHash, time });
      const record = {
        ...{ log_id: logIdFor(orgId), tree_size: treeSize, root_hash: rootHash, time, note },
        jws: signNote(note, KEY),
        previous_tree_size: previous,
        consistency_proof: consistencyProof(store, previous, treeSize),
      };
      previous = treeSize;
      return record;
    },
  );
  return { rows, checkpoints, store };
}

type Item = { entry: AuditEntryRecord } | { checkpoint: CheckpointRecord };

/** Export order, as the service writes it: each checkpoint after the row at its size. */
function exportOrder(rows: AuditEntryRecord[], checkpoints: CheckpointRecord[]): Item[] {
  const items: Item[] = [];
  const queue = [...checkpoints];
  for (const entry of rows) {
    while (queue[0] && queue[0].tree_size < entry.sequence)
      items.push({ checkpoint: queue.shift()! });
    items.push({ entry });
    while (queue[0]?.tree_size === entry.sequence) items.push({ checkpoint: queue.shift()! });
  }
  return [...items, ...queue.map((checkpoint) => ({ checkpoint }))];
}

async function verify(items: Item[], orgId = ORG, keys = KEYS): Promise<VerifyReport> {
  const verifier = new AuditVerifier(orgId, keys);
  for (const item of items) {
    if ("entry" in item) verifier.addEntry(item.entry);
    else await verifier.addCheckpoint(item.checkpoint);
  }
  return verifier.finish();
}

const log = buildLog(100);
const run = (rows = log.rows, checkpoints = log.checkpoints) =>
  verify(exportOrder(rows, checkpoints));
const withRow = (sequence: number, change: (r: AuditEntryRecord) => AuditEntryRecord) =>
  log.rows.map((r) => (r.sequence === sequence ? change(r) : r));
const withCheckpoint = (size: number, change: (c: CheckpointRecord) => CheckpointRecord) =>
  log.checkpoints.map((c) => (c.tree_size === size ? change(c) : c));
const cp = (size: number) => log.checkpoints.find((c) => c.tree_size === size)!;
const row = (sequence: number) => log.rows[sequence - 1]!;

describe("AuditVerifier", () => {
  it("accepts an intact ledger, deterministically", async () => {
    const report = await run();
    expect(report).toEqual({
      ok: true,
      checked: 100,
      head: { sequence: 100, hash: row(100).hash },
      first_break: null,
      checkpoints: {
        checked: 4,
        latest: { tree_size: 100, root_hash: cp(100).root_hash, time: cp(100).time },
        first_invalid: null,
      },
    });
    expect(await run()).toEqual(report);
    // Checkpoints may come early: they wait for their rows.
    const early = [
      ...log.checkpoints.map((checkpoint) => ({ checkpoint })),
      ...log.rows.map((entry) => ({ entry })),
    ];
    expect(await verify(early)).toEqual(report);
    const empty = await verify([]);
    expect(empty).toMatchObject({ ok: true, checked: 0, head: null, first_break: null });
  });

  it("finds an edited entry", async () => {
    const report = await run(withRow(40, (r) => ({ ...r, type: "org.deleted" })));
    const recomputed = entryHash(
      row(40).prev_hash,
      toLedgerEntry(ORG, { ...row(40), type: "org.deleted" }),
    );
    expect(report.ok).toBe(false);
    expect(report.first_break).toEqual({
      sequence: 40,
      reason: "hash_mismatch",
      expected: recomputed,
      actual: row(40).hash,
    });
    // The stored hashes still form the signed tree: the edit is pinned to the row, not the tree.
    expect(report.checkpoints.first_invalid).toBeNull();
    expect(report.checked).toBe(100);
  });

  it("finds a deleted entry, and the checkpoints over it", async () => {
    const report = await run(log.rows.filter((r) => r.sequence !== 40));
    expect(report.first_break).toEqual({
      sequence: 40,
      reason: "sequence_gap",
      expected: "40",
      actual: "41",
    });
    expect(report.checked).toBe(99);
    expect(report.checkpoints.latest?.tree_size).toBe(37);
    expect(report.checkpoints.first_invalid).toMatchObject({
      tree_size: 64,
      reason: "root_mismatch",
    });
  });

  it("finds reordered entries", async () => {
    const swapped = [...log.rows];
    [swapped[39], swapped[40]] = [swapped[40]!, swapped[39]!];
    const report = await run(swapped);
    expect(report.first_break).toEqual({
      sequence: 40,
      reason: "sequence_gap",
      expected: "40",
      actual: "41",
    });
  });

  it("finds an edited entry whose hash was rewritten to match", async () => {
    const forged = { ...row(40), type: "org.deleted" };
    forged.hash = entryHash(forged.prev_hash, toLedgerEntry(ORG, forged));
    const report = await run(withRow(40, () => forged));
    expect(report.first_break).toEqual({
      sequence: 41,
      reason: "link_mismatch",
      expected: forged.hash,
      actual: row(40).hash,
    });
    const frontier = new Frontier();
    for (const r of withRow(40, () => forged).slice(0, 64)) frontier.push(leafHash(r.hash));
    expect(report.checkpoints.first_invalid).toEqual({
      tree_size: 64,
      reason: "root_mismatch",
      expected: frontier.root(),
      actual: cp(64).root_hash,
    });
    expect(report.checkpoints.latest?.tree_size).toBe(37);
  });

  it("rejects checkpoints signed by an unknown key, or forged", async () => {
    const unknown = await run(
      undefined,
      withCheckpoint(37, (c) => ({ ...c, jws: signNote(c.note, OTHER) })),
    );
    expect(unknown.checkpoints.first_invalid).toEqual({
      tree_size: 37,
      reason: "unknown_key",
      actual: "other-key",
    });
    expect(unknown.checkpoints.latest?.tree_size).toBe(10);
    expect(unknown.first_break).toBeNull();
    const forged = await run(
      undefined,
      withCheckpoint(37, (c) => ({ ...c, jws: signNote(c.note, OTHER, KEY.kid) })),
    );
    expect(forged.checkpoints.first_invalid).toEqual({
      tree_size: 37,
      reason: "signature_invalid",
    });
    const cut = await run(
      undefined,
      withCheckpoint(37, (c) => ({ ...c, jws: c.jws.slice(0, -4) })),
    );
    expect(cut.checkpoints.first_invalid).toEqual({ tree_size: 37, reason: "signature_invalid" });
    // The same signature under another key's published kid does not verify either.
    const trusted = await verify(exportOrder(log.rows, log.checkpoints), ORG, [OTHER.jwk]);
    expect(trusted.checkpoints.first_invalid).toMatchObject({
      tree_size: 10,
      reason: "unknown_key",
    });
  });

  it("rejects a checkpoint whose note or record differs from what was signed", async () => {
    const note = await run(
      undefined,
      withCheckpoint(37, (c) => ({
        ...c,
        note: c.note.replace(c.time, "2030-01-01T00:00:00.000Z"),
      })),
    );
    expect(note.checkpoints.first_invalid).toMatchObject({
      tree_size: 37,
      reason: "note_mismatch",
      expected: cp(37).note,
    });
    const record = await run(
      undefined,
      withCheckpoint(37, (c) => ({ ...c, root_hash: cp(10).root_hash })),
    );
    expect(record.checkpoints.first_invalid).toEqual({
      tree_size: 37,
      reason: "note_mismatch",
      expected: cp(37).root_hash,
      actual: cp(10).root_hash,
    });
    const otherOrg = await verify(exportOrder(log.rows, log.checkpoints), "another-org");
    expect(otherOrg.first_break).toMatchObject({ sequence: 1, reason: "hash_mismatch" });
    expect(otherOrg.checkpoints.first_invalid).toMatchObject({
      tree_size: 10,
      reason: "note_mismatch",
      actual: cp(10).log_id,
    });
  });

  it("rejects a checkpoint that is not consistent with the previous one", async () => {
    const proof = await run(
      undefined,
      withCheckpoint(64, (c) => ({
        ...c,
        consistency_proof: [flip(c.consistency_proof[0]!), ...c.consistency_proof.slice(1)],
      })),
    );
    expect(proof.checkpoints.first_invalid).toEqual({ tree_size: 64, reason: "inconsistent" });
    expect(proof.checkpoints.latest?.tree_size).toBe(37);
    const skipped = await run(
      undefined,
      withCheckpoint(64, (c) => ({ ...c, previous_tree_size: 10 })),
    );
    expect(skipped.checkpoints.first_invalid).toEqual({
      tree_size: 64,
      reason: "inconsistent",
      expected: "37",
      actual: "10",
    });
  });

  it("finds newest entries deleted once a checkpoint covers them, not before", async () => {
    const report = await run(log.rows.slice(0, 90));
    expect(report.first_break).toBeNull();
    expect(report.head).toEqual({ sequence: 90, hash: row(90).hash });
    expect(report.checkpoints.first_invalid).toEqual({
      tree_size: 100,
      reason: "beyond_log",
      expected: "90",
      actual: "100",
    });
    // The documented limit: rows after the last checkpoint can vanish without trace.
    const unanchored = await run(log.rows.slice(0, 80), log.checkpoints.slice(0, 3));
    expect(unanchored.ok).toBe(true);
  });

  it("cannot recompute a checkpoint fed after later entries", async () => {
    const items = exportOrder(log.rows, log.checkpoints).filter(
      (i) => !("checkpoint" in i && i.checkpoint.tree_size === 37),
    );
    items.splice(items.findIndex((i) => "entry" in i && i.entry.sequence === 38) + 1, 0, {
      checkpoint: cp(37),
    });
    const report = await verify(items);
    expect(report.checkpoints.first_invalid).toEqual({
      tree_size: 37,
      reason: "root_mismatch",
      actual: cp(37).root_hash,
    });
  });
});

// ---- The export format and the offline verifier ----

function exportLines(rows = log.rows, checkpoints = log.checkpoints, end = true): string[] {
  const header = {
    org_id: ORG,
    log_id: logIdFor(ORG),
    exported_at: "2026-02-01T00:00:00.000Z",
    keys: KEYS,
  };
  const lines = [formatHeaderLine(header)];
  for (const item of exportOrder(rows, checkpoints)) {
    lines.push(
      "entry" in item ? formatEntryLine(item.entry) : formatCheckpointLine(item.checkpoint),
    );
  }
  if (end) lines.push(formatEndLine(rows.length, checkpoints.length));
  return lines;
}

async function* iterate(lines: string[]): AsyncIterable<string> {
  yield* lines;
}

describe("export format", () => {
  it("round-trips every line kind", () => {
    const [header, first] = exportLines();
    expect(parseExportLine(header!)).toMatchObject({ type: "header", org_id: ORG, keys: KEYS });
    expect(JSON.parse(first!)).toEqual({ type: "entry", entry: row(1) });
    expect(parseExportLine(first!)).toEqual({ type: "entry", entry: row(1) });
    const line = formatCheckpointLine(cp(10));
    expect(JSON.parse(line)).toEqual({ type: "checkpoint", ...cp(10) });
    expect(parseExportLine(line)).toEqual({ type: "checkpoint", checkpoint: cp(10) });
    expect(parseExportLine(formatEndLine(3, 1))).toEqual({
      type: "end",
      entries: 3,
      checkpoints: 1,
    });
    expect(() => parseExportLine('{"type":"entry","entry":{"sequence":"1"}}')).toThrow();
    expect(() => parseExportLine('{"type":"mystery"}')).toThrow();
  });

  it("verifies a complete export and fails a truncated one", async () => {
    const good = await verifyExport(iterate(exportLines()));
    expect(good.truncated).toBe(false);
    expect(good.report).toEqual(await run());
    expect(good.header.org_id).toBe(ORG);
    const truncated = await verifyExport(iterate(exportLines(undefined, undefined, false)));
    expect(truncated.truncated).toBe(true);
    expect(truncated.report.ok).toBe(false);
    expect(truncated.report.first_break).toBeNull();
    const lines = exportLines();
    const missingLine = await verifyExport(
      iterate(lines.filter((l) => l !== formatCheckpointLine(cp(100)))),
    );
    expect(missingLine.truncated).toBe(true);
    await expect(verifyExport(iterate(lines.slice(1)))).rejects.toThrow(ExportFormatError);
    await expect(verifyExport(iterate([...lines, lines[1]!]))).rejects.toThrow(/after the end/);
    await expect(verifyExport(iterate(["not json"]))).rejects.toThrow(ExportFormatError);
    const pinned = await verifyExport(iterate(lines), { keys: [OTHER.jwk] });
    expect(pinned.report.checkpoints.first_invalid?.reason).toBe("unknown_key");
  });
});

describe("npm run verify-audit", () => {
  const dir = mkdtempSync(join(tmpdir(), "verify-audit-"));
  const cli = (...args: string[]) =>
    spawnSync("npx", ["tsx", "scripts/verify-audit.ts", ...args], {
      encoding: "utf8",
      cwd: process.cwd(),
    });

  it("prints the report and exits 0, 1 or 2", async () => {
    const good = join(dir, "good.jsonl");
    writeFileSync(good, `${exportLines().join("\n")}\n`);
    const ok = cli(good);
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual(await run());
    expect(ok.stderr).toMatch(/^OK: 100 entries/m);

    const tampered = join(dir, "tampered.jsonl");
    const rows = withRow(40, (r) => ({ ...r, digest: payloadDigest({ forged: true }) }));
    writeFileSync(tampered, `${exportLines(rows).join("\n")}\n`);
    const bad = cli(tampered);
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stdout).first_break).toMatchObject({
      sequence: 40,
      reason: "hash_mismatch",
    });
    expect(bad.stderr).toMatch(/FAIL: chain broken at sequence 40: hash_mismatch/);

    const cut = join(dir, "cut.jsonl");
    writeFileSync(cut, `${exportLines().slice(0, -1).join("\n")}\n`);
    expect(cli(cut).status).toBe(1);
    expect(cli(join(dir, "missing.jsonl")).status).toBe(2);
    expect(cli().status).toBe(2);
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [OTHER.jwk] }));
    expect(cli("--jwks", jwks, good).status).toBe(1);
  }, 120_000);
});
