/**
 * The benchmark-only Worker of `npm run bench:ledger` (never deployed, never part of
 * workers/main.ts): ledger.ts bundles it into `.bench/` and runs it in Miniflare next to
 * the real Worker, with a Durable Object binding to the real OrgLedger class (`scriptName`).
 * It performs the appends inside workerd, as the API Worker does in production, so no
 * Node<->workerd proxy hop is in the measured path.
 *
 *   POST /append {orgIds, perOrg, concurrency, budgetMs} -> PoolOutcome
 *   POST /anchor {orgIds}                                 -> {anchored}
 */
import { benchInput, interleavedJobs, runPool } from "./pool.ts";

/** The two RPC methods used here (local types: scripts are typechecked without workers types). */
interface LedgerStub {
  append(orgId: string, inputs: ReturnType<typeof benchInput>[]): Promise<unknown[]>;
  anchor(orgId: string): Promise<unknown>;
}

interface LedgerNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): LedgerStub;
}

interface DriverEnv {
  ORG_LEDGER: LedgerNamespace;
}

interface AppendRequest {
  orgIds: string[];
  perOrg: number;
  concurrency: number;
  budgetMs: number;
}

// A stub per call, as src/ledger/ledger.ts `ledgerOf` does for every request in production.
function ledger(env: DriverEnv, orgId: string): LedgerStub {
  return env.ORG_LEDGER.get(env.ORG_LEDGER.idFromName(orgId));
}

async function handle(request: Request, env: DriverEnv): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (request.method !== "POST") return new Response("POST only", { status: 405 });
  if (path === "/append") {
    const { orgIds, perOrg, concurrency, budgetMs } = (await request.json()) as AppendRequest;
    const jobs = interleavedJobs(orgIds, perOrg);
    const outcome = await runPool(jobs, concurrency, budgetMs, (orgId, index) =>
      ledger(env, orgId).append(orgId, [benchInput(index)]),
    );
    return Response.json(outcome);
  }
  if (path === "/anchor") {
    const { orgIds } = (await request.json()) as { orgIds: string[] };
    await Promise.all(orgIds.map((orgId) => ledger(env, orgId).anchor(orgId)));
    return Response.json({ anchored: orgIds.length });
  }
  return new Response("not found", { status: 404 });
}

export default {
  async fetch(request: Request, env: DriverEnv): Promise<Response> {
    try {
      return await handle(request, env);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      return new Response(message, { status: 500 });
    }
  },
};
