/**
 * `node --import tsx scripts/bench/status-lists.ts`: the CPU status lists add per fresh
 * assessment, p50 over many runs in one process (docs/status-lists.md, "Cost"):
 *
 * - the verdict's place: `placeOf` (four SHA-256 rounds of the keyed permutation), as the
 *   ledger object runs it before signing (its SQLite counter statement is not in it);
 * - a credential's check with its list cached and its signer already seen: the references read
 *   from the parsed chain, the list found, the place read (what every request after the first
 *   within a list's ttl pays);
 * - the first check of a list: the ES256 signature and the inflation of a 65,536-place list.
 */
import { createHash } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { parseChain } from "../../src/ap2-credentials/chain.ts";
import { compressStatusList, decompressStatusList } from "../../src/status-lists/encoding.ts";
import { checkStatus, statusReferences } from "../../src/status-lists/lookup.ts";
import { placeOf } from "../../src/status-lists/permutation.ts";
import { readStatusListToken, verifyingKey } from "../../src/status-lists/token.ts";
import {
  buildChain,
  closedPayment,
  newSigner,
  openPayment,
  RANGE,
} from "../../test/support/ap2-chains.ts";

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function time(runs: number, run: (i: number) => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await run(i);
    samples.push(performance.now() - t);
  }
  return p50(samples);
}

const key = new Uint8Array(createHash("sha256").update("status-list-index bench").digest());
await time(200, (i) => placeOf(key, { kind: "verdict", counter: i }));
const place = await time(5000, (i) => placeOf(key, { kind: "verdict", counter: i }));

const issuer = await newSigner("ES256", "issuer-1");
const agent = await newSigner("ES256");
const uri = "https://issuer.example/lists/1";
const t = Math.floor(Date.now() / 1000);
const credential = await buildChain([
  {
    signer: issuer,
    mandate: openPayment(agent, [RANGE], { iat: t - 3600, exp: t + 86_400 }),
    claims: { status: { status_list: { idx: 4242, uri } } },
  },
  { signer: agent, mandate: closedPayment(5000, { iat: t - 60 }), claims: { iat: t - 60 } },
]);
const { privateKey, publicKey } = await generateKeyPair("ES256");
const jwk = { ...(await exportJWK(publicKey)), kid: "list-key" };
const lst = await compressStatusList(new Uint8Array(16_384));
const jws = await new SignJWT({
  sub: uri,
  iat: t,
  exp: t + 3600,
  ttl: 300,
  status_list: { bits: 2, lst },
})
  .setProtectedHeader({ alg: "ES256", kid: "list-key", typ: "statuslist+jwt" })
  .sign(privateKey);
const token = readStatusListToken(jws);
const bytes = await decompressStatusList(token.lst);
const cached = { token, bytes, freshUntil: Date.now() + 3_600_000, verifiedBy: new Set<string>() };
const lists = new Map([[uri, cached]]);
const keys = [{ kid: "list-key", jwk }];
await checkStatus(statusReferences(parseChain(credential)), lists as never, keys, Date.now());
const check = await time(5000, async () => {
  const references = statusReferences(parseChain(credential));
  await checkStatus(references, lists as never, keys, Date.now());
});
const parsed = parseChain(credential);
statusReferences(parsed);
// As on the assess path: the hops were parsed and read by the request's parser already.
const warm = await time(5000, async () => {
  await checkStatus(statusReferences(parsed), lists as never, keys, Date.now());
});
const first = await time(200, async () => {
  const read = readStatusListToken(jws);
  await decompressStatusList(read.lst);
  await verifyingKey(read, keys);
});
console.log(`verdict's place (keyed permutation), p50: ${place.toFixed(4)} ms`);
console.log(
  `credential check, list cached and trusted (includes parseChain), p50: ${check.toFixed(4)} ms`,
);
console.log(
  `credential check on a parsed chain (the assess path's share), p50: ${warm.toFixed(4)} ms`,
);
console.log(`first check of a list (ES256 verify + inflate 16 KiB), p50: ${first.toFixed(4)} ms`);
