/**
 * The reference's introduction (the OpenAPI document's `info.description`, shown first on
 * `/docs`): the README's path from nothing to a verified verdict, in short. The README is the
 * long form, and test/node/readme-walkthrough.test.ts runs it; this keeps to its steps.
 */
export function gettingStarted(): string {
  return [
    "Agents about to pay or act ask this service first. It answers `approve`, `review` or " +
      "`deny` with a 0–100 score and a **Risk Payload**: a compact JWS (EdDSA) that anyone " +
      "can verify offline against `/.well-known/jwks.json`.",
    "",
    "## Getting started",
    "",
    "**1. Start the service.** Node 20 or later, nothing else (the database is embedded):",
    "",
    "```sh",
    "npm ci && npm run dev     # http://127.0.0.1:8787, this reference at /docs",
    "```",
    "",
    "**2. Get an API key.** Sign in to the console (`/console/`; the first sign-in creates " +
      "your organization) and create a **test** key under *API keys* with `assess:write` and " +
      "`assess:read`. Its plaintext (`aar_test_…`) is shown once. From a shell, the same with " +
      "a session token of the local identity provider:",
    "",
    "```sh",
    "TOKEN=$(npm run -s token -- --sub alice)",
    'curl -s -X POST http://127.0.0.1:8787/v1/orgs -H "authorization: Bearer $TOKEN"',
    'curl -s -X POST http://127.0.0.1:8787/v1/api-keys -H "authorization: Bearer $TOKEN" \\',
    "  -H 'content-type: application/json' \\",
    `  -d '{"name":"my agent","scopes":["assess:write","assess:read"],"mode":"test"}'`,
    '# → {"key": "aar_test_…", …}: KEY=<that key>',
    "```",
    "",
    "**3. Assess a payment** (an AP2 v0.2 payment mandate) with `POST /v1/assess`:",
    "",
    "```sh",
    'curl -s -X POST http://127.0.0.1:8787/v1/assess -H "x-api-key: $KEY" \\',
    '  -H \'content-type: application/json\' -d \'{"mandate":{"vct":"mandate.payment.1",',
    '  "transaction_id":"tx-1","payee":{"id":"m-1","name":"Demo Merchant"},',
    '  "payment_amount":{"amount":19900,"currency":"USD"},',
    '  "payment_instrument":{"id":"pi-1","type":"card"}}}\'',
    "```",
    "",
    "The answer holds `decision`, `score`, the reasons, and `riskPayloadJws`. Amounts are " +
      "integer minor units of their currency (`19900` USD is $199.00).",
    "",
    "**4. Verify the payload offline** before acting on it, with the typed client " +
      "(`@agent-risk/client`, in the service's repository):",
    "",
    "```ts",
    'import { verifyRiskPayload } from "@agent-risk/client";',
    "const claims = await verifyRiskPayload(data.riskPayloadJws, {",
    '  jwksUrl: "http://127.0.0.1:8787/.well-known/jwks.json",',
    '  issuer: "http://127.0.0.1:8787",',
    "  allowTestMode: true, // a test key's payload; a live checkout never passes this",
    "});",
    'if (claims.decision !== "approve") throw new Error("stop: " + claims.decision);',
    "```",
    "",
    "A test key sees test data only and is never billed; live keys (`aar_live_…`) and " +
      "sessions also change what both modes share (agents, policies, issuers). Every " +
      "operation below says the scope it needs.",
  ].join("\n");
}
