/**
 * `npm run bench:credential [-- --runs 2000 --warmup 200 --timeout 120]`
 *
 * Parse and verify of an AP2 v0.2 credential, as `POST /v1/assess` will run it (pure compute,
 * src/credentials): a three-hop ES256 chain made with jose at start (issuer → agent, an open
 * payment mandate with five constraints and disclosed payees; agent → agent 2, an open mandate;
 * agent 2 → the closed payment mandate), timed over N runs in one Node process. Each run does
 * everything a request does: split, decode, three signature verifications (key imports
 * included), disclosures, bindings, constraints. The assess path's budget for pure compute is
 * p50 ≤ 2 ms with verification included.
 */
import { parseArgs } from "node:util";
import { parseChain } from "../../src/ap2-credentials/chain.ts";
import { forgetVerifiedSignatures } from "../../src/ap2-credentials/keys.ts";
import { type ChainVerdict, verifyChain } from "../../src/ap2-credentials/verify.ts";
import {
  AUD,
  buildChain,
  CHECKOUT_JWT,
  closedPayment,
  element,
  INSTRUMENT,
  MERCHANT,
  NONCE,
  NOW,
  newSigner,
  OTHER_MERCHANT,
  openPayment,
  RANGE,
} from "../../test/support/ap2-chains.ts";
import { percentile } from "./assess-report.ts";
import { optionsOrExit, runBench } from "./harness.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

const USAGE = `usage: npm run bench:credential [-- options]
  --runs N     timed parse+verify runs (default 2000)
  --warmup N   untimed runs first, for the JIT (default 200)
  --timeout S  stop after S seconds (default 120)`;

const BUDGET_P50_MS = 2;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string", default: "2000" },
      warmup: { type: "string", default: "200" },
      timeout: { type: "string", default: "120" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return null;
  const options = {
    runs: Number(values.runs),
    warmup: Number(values.warmup),
    timeoutS: Number(values.timeout),
  };
  if (!Number.isInteger(options.runs) || options.runs < 1) throw new Error("--runs must be ≥ 1");
  if (!Number.isInteger(options.warmup) || options.warmup < 0) throw new Error("--warmup ≥ 0");
  if (!Number.isInteger(options.timeoutS) || options.timeoutS < 1) throw new Error("--timeout ≥ 1");
  return options;
}

async function threeHopChain() {
  const [issuer, agent, agent2] = await Promise.all([
    newSigner("ES256", "issuer"),
    newSigner("ES256", "agent"),
    newSigner("ES256", "agent-2"),
  ]);
  const payees = [MERCHANT, OTHER_MERCHANT, { id: "m-3", name: "Third" }].map(element);
  const constraints = [
    RANGE,
    { type: "payment.budget", max: 500, currency: "CAD" },
    { type: "payment.agent_recurrence", frequency: "ON_DEMAND", max_occurrences: 12 },
    { type: "payment.allowed_payees", allowed: payees.map((p) => p.ref) },
    { type: "payment.allowed_payment_instruments", allowed: [INSTRUMENT] },
  ];
  const credential = await buildChain([
    {
      signer: issuer,
      mandate: openPayment(agent, constraints),
      nested: payees.map((p) => p.disclosure),
    },
    { signer: agent, mandate: openPayment(agent2, [RANGE]) },
    { signer: agent2, mandate: closedPayment(4200) },
  ]);
  return { credential, anchors: { keys: [{ issuerId: "issuer", jwk: issuer.jwk }] } };
}

const options = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);

await runBench("bench:credential", options.timeoutS, async (run) => {
  const { credential, anchors } = await threeHopChain();
  // Every run pays for its three verifications: the Worker keeps a delegating hop's verified
  // signature, which would turn runs of one chain into cache hits (src/ap2-credentials/keys.ts).
  const once = async (): Promise<ChainVerdict> => {
    forgetVerifiedSignatures();
    return await verifyChain(parseChain(credential), {
      anchors,
      presentation: { aud: AUD, nonce: NONCE, checkout_jwt: CHECKOUT_JWT },
      now: NOW,
    });
  };
  const first = await once();
  if (!first.verified) throw new Error(`the benchmark chain does not verify: ${first.failure}`);

  for (let i = 0; i < options.warmup; i++) await once();
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < options.runs && !run.signal.aborted; i++) {
    const start = performance.now();
    await once();
    times.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const p50 = percentile(times, 50);
  say(`credential: ${credential.length} chars, ${first.hops} hops (ES256), ${times.length} runs`);
  say(`parse+verify p50 ${p50.toFixed(3)} ms, p99 ${percentile(times, 99).toFixed(3)} ms (wall)`);
  // On a shared machine the wall clock includes waiting for a core; CPU time does not.
  const cpuMs = (cpu.user + cpu.system) / 1000 / times.length;
  say(`CPU time per parse+verify (mean, this process): ${cpuMs.toFixed(3)} ms`);
  say(
    `budget: pure compute p50 ≤ ${BUDGET_P50_MS} ms with verification included — ` +
      `${p50 <= BUDGET_P50_MS ? "met" : "NOT met"} by verification alone`,
  );
});
