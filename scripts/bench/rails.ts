/**
 * What each artefact of docs/rails.md costs the Worker per assessment, as pure compute: the
 * stored Risk Payload's claims decoded, the rail's claims built and signed with the ES256 key
 * (signedArtifacts, the code the routes run); and the Mandate Receipt the ledger object signs
 * beside a credential's Risk Payload (its claims built and signed with the ES256 key, once per
 * fresh credential assessment), with the Risk Payload's own Ed25519 signature beside it for
 * scale. p50 and p90 of 2000 rounds each, in ms, on
 * Node's WebCrypto (workerd's is BoringSSL; compare rows, not machines).
 * `node --import tsx scripts/bench/rails.ts`
 */
import { exportJWK, generateKeyPair } from "jose";
import { MANDATE_RECEIPT_TYP, mandateReceiptClaims } from "../../src/assess/mandate-receipt.ts";
import type { Outcome } from "../../src/assess/outcome.ts";
import { signedArtifacts } from "../../src/assess/rails/artifacts.ts";
import type { Env } from "../../src/env.ts";
import { signer } from "../../src/signing/signer.ts";

const ROUNDS = 2000;

async function privateJwk(alg: "EdDSA" | "ES256", crv: string) {
  const { privateKey } = await generateKeyPair(alg, { crv, extractable: true });
  return JSON.stringify(await exportJWK(privateKey));
}

const env = {
  SIGNING_KEY: await privateJwk("EdDSA", "Ed25519"),
  SIGNING_KEY_ES256: await privateJwk("ES256", "P-256"),
  PUBLIC_BASE_URL: "https://risk.example.com",
} as unknown as Env;
const now = Math.floor(Date.now() / 1000);
const jws = await (await signer(env)).signClaims(
  { sub: "a", iat: now, exp: now + 300, aud: "https://psp.example", mandate_hash: "sha256:00" },
  "risk-payload+jwt",
);
const outcome = {
  id: "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b",
  outcome: { decision: "review", risk_score: 55 },
  risk_payload: { jws },
} as unknown as Outcome;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function timed(name: string, run: () => Promise<unknown>) {
  for (let i = 0; i < 200; i += 1) await run();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const row = `${name.padEnd(16)} p50 ${percentile(times, 0.5).toFixed(3)} ms`;
  console.log(`${row}, p90 ${percentile(times, 0.9).toFixed(3)} ms`);
}

for (const names of [["x402"], ["acp"], ["x402", "acp"]] as const) {
  await timed(names.join("+"), () => signedArtifacts(env, outcome, names));
}

const key = await signer(env);
const status = { status_list: { idx: 4711, uri: "https://risk.example.com/v1/status-lists/ab.0" } };
const facts = {
  issuer: "https://risk.example.com",
  issuedAt: Date.now(),
  assessmentId: outcome.id,
  references: { reference: "r".repeat(43), closedMandateReference: "c".repeat(43) },
};
const credential = { verified: true, failure: null } as never;
await timed("mandate receipt", () =>
  key.es256.signClaims(
    { ...mandateReceiptClaims(facts, credential, null), status },
    MANDATE_RECEIPT_TYP,
  ),
);
await timed("risk payload", () =>
  key.signClaims({ sub: "a", iat: now, exp: now + 300, status }, "risk-payload+jwt"),
);
