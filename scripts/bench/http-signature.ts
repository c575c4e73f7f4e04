/**
 * `node --import tsx scripts/bench/http-signature.ts [--runs 2000 --warmup 200 --alg EdDSA]`
 *
 * The CPU the agent's HTTP message signature (docs/http-signatures.md) adds to one fresh
 * assessment, in the pure code the Worker runs between its I/O waits: the request parsed and
 * hashed with and without `http_signature` (its schema, the RFC 8941 fields, the signature
 * base), the nonce digest the context read is sent, and the verification (WebCrypto, the key
 * imported once per isolate as in the Worker) with its time checks and binding. Each run has its
 * own signature (its own nonce), as real traffic does. Reports p50 of the difference, the share
 * ADR issue 42 point 5 asks each part to report. The extra statement rides in the context read's
 * batch: no round trip is added (bench:assess counts them).
 */
import { parseArgs } from "node:util";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";
import { httpSignatureQuery } from "../../src/assess/http-signature/nonce.ts";
import { verifyHttpSignature } from "../../src/assess/http-signature/verify.ts";
import { mandateCanonicalHash, parseAssessRequest } from "../../src/assess/request.ts";
import { percentile } from "./assess-report.ts";
import { optionsOrExit, runBench } from "./harness.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

const USAGE = `usage: node --import tsx scripts/bench/http-signature.ts [options]
  --runs N     timed runs (default 2000)
  --warmup N   untimed runs first, for the JIT (default 200)
  --alg A      the agent's key: EdDSA or ES256 (default EdDSA)
  --timeout S  stop after S seconds (default 120)`;

const SIGN = { EdDSA: { name: "Ed25519" }, ES256: { name: "ECDSA", hash: "SHA-256" } } as const;
const ALG = { EdDSA: "ed25519", ES256: "ecdsa-p256-sha256" } as const;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string", default: "2000" },
      warmup: { type: "string", default: "200" },
      alg: { type: "string", default: "EdDSA" },
      timeout: { type: "string", default: "120" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return null;
  if (values.alg !== "EdDSA" && values.alg !== "ES256") throw new Error("--alg EdDSA or ES256");
  return {
    runs: Number(values.runs),
    warmup: Number(values.warmup),
    alg: values.alg as keyof typeof SIGN,
    timeoutS: Number(values.timeout),
  };
}

const options = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);
const COVERED = {
  method: "GET",
  authority: "shop.example",
  path: "/checkout",
  headers: { "signature-agent": 'sig1="https://agent.example"' },
};

await runBench("bench:http-signature", options.timeoutS, async (run) => {
  const { publicKey, privateKey } = await generateKeyPair(options.alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const thumbprint = await calculateJwkThumbprint(jwk);
  const created = Math.floor(Date.now() / 1000);
  const mandate = {
    vct: "mandate.payment.open.1",
    constraints: [
      { type: "payment.amount_range", currency: "USD", max: 200000, min: 0 },
      { type: "payment.reference", conditional_transaction_id: "FzLoxbbtgQGYZxoSM2NJYJ" },
    ],
    cnf: {
      jwk: {
        kty: "EC",
        crv: "P-256",
        x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
      },
    },
    iat: created - 10,
    exp: created + 3600,
  };

  /** A body with its own signature (fresh nonce), signed outside the timed part. */
  const signedBody = async (i: number) => {
    const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    const params =
      `("@authority" "signature-agent");created=${created};expires=${created + 60};` +
      `keyid="${thumbprint}";alg="${ALG[options.alg]}";nonce="${nonce}";tag="web-bot-auth"`;
    const base = [
      `"@authority": ${COVERED.authority}`,
      `"signature-agent": ${COVERED.headers["signature-agent"]}`,
      `"@signature-params": ${params}`,
    ].join("\n");
    const sig = new Uint8Array(
      await crypto.subtle.sign(SIGN[options.alg], privateKey, new TextEncoder().encode(base)),
    );
    return {
      mandate,
      mandateType: "open_payment",
      idempotency_key: `bench-${i}`,
      http_signature: {
        signature: `sig1=:${btoa(String.fromCharCode(...sig))}:`,
        signature_input: `sig1=${params}`,
        signature_agent: COVERED.headers["signature-agent"],
        covered: COVERED,
      },
    };
  };
  const registered = {
    thumbprint,
    agent_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
    jwk,
    alg: options.alg,
    status: "active" as const,
    signs_card: false,
  };
  const now = created * 1000 + 2000;

  const without = (body: Record<string, unknown>) => {
    const { http_signature: _, ...plain } = body;
    const request = parseAssessRequest(plain, null);
    mandateCanonicalHash(request);
  };
  const verifyTimes: number[] = [];
  const withSignature = async (body: Record<string, unknown>) => {
    const request = parseAssessRequest(body, null);
    mandateCanonicalHash(request);
    const presented = request.httpSignature?.presented;
    if (!presented) throw new Error("no signature parsed");
    httpSignatureQuery(presented);
    const start = performance.now();
    const outcome = await verifyHttpSignature(presented, {
      registered,
      directory: null,
      nonceFresh: true,
      now,
      targets: { mandateKey: null, mandateAgent: registered.agent_id, cardAgent: null },
    });
    verifyTimes.push(performance.now() - start);
    if (!outcome.verified) throw new Error(`the benchmark signature fails: ${outcome.failure}`);
  };

  const total = options.warmup + options.runs;
  const bodies: Record<string, unknown>[] = [];
  for (let i = 0; i < total; i++) bodies.push(await signedBody(i));
  const plain: number[] = [];
  const signed: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < total && !run.signal.aborted; i++) {
    const body = bodies[i] as Record<string, unknown>;
    const a = performance.now();
    without(body);
    const b = performance.now();
    await withSignature(body);
    const c = performance.now();
    if (i >= options.warmup) {
      plain.push(b - a);
      signed.push(c - b);
    }
  }
  const cpu = process.cpuUsage(cpuBefore);
  const p50Plain = percentile(plain, 50);
  const p50Signed = percentile(signed, 50);
  say(`http_signature (${ALG[options.alg]}, registered key), ${signed.length} runs`);
  say(`parse+hash without: p50 ${p50Plain.toFixed(3)} ms`);
  say(
    `parse+hash+verify with: p50 ${p50Signed.toFixed(3)} ms, p99 ${percentile(signed, 99).toFixed(3)} ms`,
  );
  say(
    `of which verification (WebCrypto, times, binding): p50 ${percentile(verifyTimes.slice(options.warmup), 50).toFixed(3)} ms`,
  );
  say(`added per fresh assessment: p50 ${(p50Signed - p50Plain).toFixed(3)} ms (wall, one core)`);
  say(
    `CPU per run of both (mean): ${((cpu.user + cpu.system) / 1000 / signed.length).toFixed(3)} ms`,
  );
});
