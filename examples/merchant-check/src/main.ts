/**
 * What a merchant runs at checkout, before charging: assess the agent's mandate, verify the
 * Risk Payload offline, stop unless `approve`.
 *
 *   RISK_URL=http://127.0.0.1:8787 RISK_API_KEY=aar_test_... MERCHANT_ID=m-1 \
 *     npm start -s -- [mandate.json]
 *
 * Exit 0: approved, go ahead. 1: not approved (review or deny). 2: could not check: do not
 * charge either.
 */
import { readFile } from "node:fs/promises";
import { ApiError, createClient } from "@agent-risk/client";
import { checkMandate } from "./check.ts";

function demoMandate(merchantId: string) {
  return {
    vct: "mandate.payment.1",
    transaction_id: `tx-${crypto.randomUUID()}`,
    payee: { id: merchantId, name: "Demo Merchant" },
    payment_amount: { amount: 1999, currency: "USD" },
    payment_instrument: { id: "pi-1", type: "card" },
  };
}

async function main(): Promise<number> {
  const riskUrl = process.env.RISK_URL ?? "http://127.0.0.1:8787";
  const apiKey = process.env.RISK_API_KEY;
  if (!apiKey) {
    console.error("set RISK_API_KEY to an API key with assess:write");
    return 2;
  }
  const merchantId = process.env.MERCHANT_ID ?? "m-1";
  const [path] = process.argv.slice(2);
  // A file holds what the agent presented: `{credential, presentation}` or a decoded mandate.
  const file = path ? JSON.parse(await readFile(path, "utf8")) : null;
  const presented =
    file === null
      ? { mandate: demoMandate(merchantId) }
      : typeof file.credential === "string"
        ? { credential: file.credential, presentation: file.presentation }
        : { mandate: file };
  const verdict = await checkMandate({
    client: createClient({ baseUrl: riskUrl, apiKey }),
    keys: { jwksUrl: new URL("/.well-known/jwks.json", riskUrl).href },
    // The Worker's PUBLIC_BASE_URL; `npm run dev` sets it to its own address.
    issuer: process.env.RISK_ISSUER ?? riskUrl,
    merchantId,
    presented,
    // A test key's verdicts are test-mode (livemode false); a live checkout refuses them.
    allowTestMode: apiKey.startsWith("aar_test_"),
  });
  const { claims } = verdict;
  console.log(
    `assessment ${claims.assessment_id}: ${claims.decision} (score ${claims.risk_score})`,
  );
  if (!verdict.proceed) {
    console.log(`STOP: ${verdict.reason}`);
    return 1;
  }
  console.log("APPROVED: verified offline; go ahead and charge");
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  const what = error instanceof ApiError ? `${error.status} ${error.error}` : String(error);
  console.error(`STOP: could not check the mandate (${what})`);
  process.exitCode = 2;
}
