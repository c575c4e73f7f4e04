/**
 * `npm run bench:history [-- --records 100000 --batch 10000 --agents 50 --url http://127.0.0.1:8787]`
 *
 * How fast `POST /v1/history/transactions` loads an org's history (docs/history.md), against a
 * running `npm run dev` (same DEV_STATE_DIR: the session is signed by the local identity
 * provider it set up). A fresh user and org, a key with `policy:write`, `--agents` agents of
 * one principal, then `--records` records in calls of `--batch` (10,000 at most), one call at a
 * time, as an org's upload script would send them: 180 days of payments to 2,000 payees, one in
 * 50 labeled (fraud, chargeback, legitimate or refund) a week after it happened (once that week
 * is over). Prints each call's time and the whole load's records per second; then the same
 * calls again, which store nothing (every record unchanged), to time the idempotent replay.
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { importJWK, SignJWT } from "jose";
import { readLocalIdp } from "../dev-idp.ts";
import { devPaths } from "../dev-state.ts";
import { localUserClaims } from "../local-user.ts";
import { Client } from "./assess-http.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

const USAGE = `usage: npm run bench:history [-- options]
  --records N  records to import (default 100000)
  --batch N    records per call, at most 10000 (default 10000)
  --agents N   agents the records are spread over (default 50)
  --url URL    the running npm run dev (default http://127.0.0.1:8787)`;

function options() {
  const { values } = parseArgs({
    options: {
      records: { type: "string", default: "100000" },
      batch: { type: "string", default: "10000" },
      agents: { type: "string", default: "50" },
      url: { type: "string", default: "http://127.0.0.1:8787" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    say(USAGE);
    process.exit(0);
  }
  const numbers = {
    records: Number(values.records),
    batch: Number(values.batch),
    agents: Number(values.agents),
  };
  if (
    !Object.values(numbers).every((n) => Number.isInteger(n) && n >= 1) ||
    numbers.batch > 10_000
  ) {
    process.stderr.write(
      `--records, --agents and --batch (≤ 10000) are positive integers\n${USAGE}\n`,
    );
    process.exit(2);
  }
  return { ...numbers, url: values.url };
}

/** A session of a fresh local user, as `npm run token` signs it. */
async function sessionToken(): Promise<string> {
  const idp = readLocalIdp(devPaths().localIdp);
  if (!idp) throw new Error("no local identity provider: start `npm run dev` first");
  const user = localUserClaims(`bench-history-${randomUUID().slice(0, 8)}`);
  if (!user) throw new Error("the generated user name is refused");
  const { sub, ...claims } = user;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", kid: idp.privateJwk.kid, typ: "JWT" })
    .setIssuer(idp.issuer)
    .setAudience(idp.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(await importJWK(idp.privateJwk, "EdDSA"));
}

const LABELS = ["fraud", "chargeback", "legitimate", "refund"] as const;
const DAY = 86_400_000;

/** The records, deterministic: record i of `total`, spread over the 180 days before now. */
function recordAt(i: number, total: number, agents: readonly string[], now: number) {
  const occurred = now - 180 * DAY + Math.floor(((i + 0.5) / total) * 179 * DAY);
  const label = LABELS[((i / 50) % LABELS.length) | 0];
  return {
    id: `txn_${String(i).padStart(7, "0")}`,
    occurred_at: new Date(occurred).toISOString(),
    agent_id: agents[(i * 7919) % agents.length],
    payee: { id: `merchant_${(i * 104_729) % 2_000}`, name: "Bench Merchant" },
    amount: { amount: 100 + ((i * 37) % 50_000), currency: "USD" },
    ...(i % 50 === 0 && occurred + 7 * DAY < now
      ? { label: { label, labeled_at: new Date(occurred + 7 * DAY).toISOString() } }
      : {}),
  };
}

async function main() {
  const { records, batch, agents: agentCount, url } = options();
  const client = new Client(url, 4);
  const token = await sessionToken();
  const call = async (path: string, body: unknown, auth: Record<string, string>) => {
    const reply = await client.send(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: auth,
    });
    if (reply.status >= 300)
      throw new Error(`${path}: ${reply.status} ${reply.text.slice(0, 500)}`);
    return JSON.parse(reply.text) as Record<string, unknown>;
  };
  const session = { authorization: `Bearer ${token}` };
  await call("/v1/orgs", { name: "history bench" }, session);
  const principal = await call("/v1/principals", { name: "Bench principal" }, session);
  const agents: string[] = [];
  for (let i = 0; i < agentCount; i++) {
    const agent = await call(
      "/v1/agents",
      { principal_id: principal.id, name: `agent ${i}` },
      session,
    );
    agents.push(agent.id as string);
  }
  const created = await call(
    "/v1/api-keys",
    { name: "history bench", scopes: ["policy:write", "policy:read"] },
    session,
  );
  const key = { "x-api-key": created.key as string };

  const now = Date.now();
  const calls: unknown[][] = [];
  for (let start = 0; start < records; start += batch) {
    const end = Math.min(records, start + batch);
    calls.push(
      Array.from({ length: end - start }, (_, j) => recordAt(start + j, records, agents, now)),
    );
  }
  say(
    `history import: ${records} records in ${calls.length} calls of up to ${batch}, ${agentCount} agents, ${url}`,
  );
  for (const pass of ["load", "replay"] as const) {
    const started = performance.now();
    for (const [n, chunk] of calls.entries()) {
      const t = performance.now();
      const answer = await call("/v1/history/transactions", { records: chunk }, key);
      const expected = pass === "load" ? chunk.length : 0;
      if (answer.inserted !== expected) {
        throw new Error(`call ${n + 1}: inserted ${answer.inserted}, expected ${expected}`);
      }
      say(
        `  ${pass} call ${n + 1}: ${chunk.length} records in ${((performance.now() - t) / 1000).toFixed(2)} s`,
      );
    }
    const seconds = (performance.now() - started) / 1000;
    say(
      `${pass}: ${records} records in ${seconds.toFixed(1)} s, ${Math.round(records / seconds)} records/s`,
    );
  }
}

await main();
