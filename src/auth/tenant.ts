import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { type Database, database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { type DeliveryMessage, deliveriesMadeHere, send } from "../outbox/enqueue";
import { authStatements, type Caller, callerFromRows, settingOf } from "./caller";
import type { Credential } from "./credential";
import type { ScopeRequirement } from "./scopes";

export type Batch = readonly [BatchItem<"pg">, ...BatchItem<"pg">[]];
type AnyBatch = [BatchItem<"pg">, ...BatchItem<"pg">[]];

/** Hands work to the runtime to finish after the response (the Worker's `waitUntil`). */
export type Defer = (work: Promise<unknown>) => void;

export interface BatchOptions {
  /**
   * The batch writes events: the webhook deliveries they fan out to are read in the same round
   * trip and enqueued after the response, so delivery never sits on the request's path and no
   * writer can forget to send (the Cron sweep would otherwise send them only after the lease).
   */
  webhooks?: boolean;
}

function rowsOf(result: unknown): Record<string, unknown>[] {
  return (result as { rows: Record<string, unknown>[] }).rows;
}

export function setTenant(db: Database, orgId: string): BatchItem<"pg"> {
  return settingOf(db, { name: "app.org_id", value: orgId });
}

/**
 * Runs `prefix`, the built queries and (with webhooks) the outbox read as one transaction, and
 * answers the prefix's results and the queries' apart. The outbox's deliveries are sent later.
 */
async function transact<T extends Batch>(
  env: Env,
  prefix: (db: Database) => BatchItem<"pg">[],
  build: (db: Database) => T,
  webhooks: Defer | null,
): Promise<{ before: unknown[]; results: BatchResponse<T> }> {
  const db = database(env);
  const head = prefix(db);
  const queries = build(db);
  const tail = webhooks ? [deliveriesMadeHere(db)] : [];
  const all = await db.batch([...head, ...queries, ...tail] as unknown as AnyBatch);
  if (webhooks) sendLater(env, webhooks, all.at(-1) as { rows: unknown[] });
  return {
    before: all.slice(0, head.length),
    results: all.slice(head.length, head.length + queries.length) as BatchResponse<T>,
  };
}

function sendLater(env: Env, defer: Defer, made: { rows: unknown[] }): void {
  const messages = made.rows as DeliveryMessage[];
  if (messages.length === 0) return;
  defer(
    send(env, messages).catch((error) =>
      logError("webhook enqueue failed", { error: String(error) }),
    ),
  );
}

/**
 * The request's tenant: its credential, the scope its route needs, the org batch that checks
 * both in the first round trip, and the work deferred past the response. Built once per request
 * by `authorize` and handed to domain functions as a plain argument, so the domain never sees
 * the HTTP framework and can be called without a request.
 */
export class Tenant {
  #caller: Caller | undefined;

  constructor(
    readonly env: Env,
    readonly credential: Credential,
    private readonly scope: ScopeRequirement | null,
    private readonly defer: Defer,
  ) {}

  /** The mode, known before the database is asked: a key's prefix, a session's `x-mode`. */
  get livemode(): boolean {
    return this.credential.livemode;
  }

  /** The caller if a round trip has established it already; undefined before that. */
  get established(): Caller | undefined {
    return this.#caller;
  }

  /** The caller of this request, authenticating with one round trip if nothing has yet. */
  async caller(): Promise<Caller> {
    if (this.#caller) return this.#caller;
    const { before } = await transact(
      this.env,
      (db) => authStatements(db, this.credential, this.scope),
      () => [] as unknown as Batch,
      null,
    );
    this.#caller = callerFromRows(this.credential, this.scope, rowsOf(before.at(-1)));
    return this.#caller;
  }

  /** Org creation: the founder becomes the caller of the request that made the org. */
  adopt(caller: Caller): void {
    this.#caller = caller;
  }

  /**
   * Runs queries as one transaction in the caller's org: the one way request code reaches
   * org-scoped data. When the caller is not yet known, the credential check rides in the same
   * round trip and RLS keeps the queries from seeing or writing anything unless it passes.
   */
  async batch<T extends Batch>(
    build: (db: Database) => T,
    options: BatchOptions = {},
  ): Promise<BatchResponse<T>> {
    const webhooks = options.webhooks ? this.defer : null;
    const known = this.#caller;
    if (known) {
      const prefix = (db: Database) => [setTenant(db, known.orgId)];
      return (await transact(this.env, prefix, build, webhooks)).results;
    }
    const prefix = (db: Database) => authStatements(db, this.credential, this.scope);
    let ran: Awaited<ReturnType<typeof transact<T>>>;
    try {
      ran = await transact(this.env, prefix, build, webhooks);
    } catch (error) {
      // A write refused because the credential failed: answer with the credential's problem.
      await this.caller();
      throw error;
    }
    this.#caller = callerFromRows(this.credential, this.scope, rowsOf(ran.before.at(-1)));
    return ran.results;
  }

  /** Work that must not hold up the response (it still runs to completion). */
  later(work: Promise<unknown>): void {
    this.defer(work);
  }
}

/**
 * An org's committer (ledger/commit.ts) for work no tenant credential does: a provider's signed
 * webhook, the review SLA sweep. The actor is named; the deliveries of the events its batches
 * make are handed to `defer` (logged, not thrown, when the enqueue fails: the Cron sweep sends
 * them after their lease).
 */
export function orgActor(
  env: Env,
  orgId: string,
  actor: { type: string; id: string },
  defer: Defer | null,
) {
  return {
    env,
    caller: async () => ({ orgId, actor }),
    batch: async <T extends Batch>(build: (db: Database) => T, options: BatchOptions = {}) => {
      if (options.webhooks && !defer) throw new Error("a batch that makes events needs a defer");
      const webhooks = options.webhooks ? defer : null;
      return (await transact(env, (db) => [setTenant(db, orgId)], build, webhooks)).results;
    },
  };
}

/**
 * Runs queries as one transaction in a known org without a tenant credential: work outside a
 * request (queue consumers, the ledger object) and writes a verified provider signature
 * attributes to an org (the billing webhook). RLS applies as usual.
 */
export async function orgBatchOf<T extends Batch>(
  env: Env,
  orgId: string,
  build: (db: Database) => T,
): Promise<BatchResponse<T>> {
  return (await transact(env, (db) => [setTenant(db, orgId)], build, null)).results;
}

/**
 * Runs queries for a public (credential-free) route. Public lookups go by a value the caller
 * already holds (a log id, a leaf hash): each named setting enables exactly the RLS policy that
 * allows that one lookup, and nothing else of any org is visible.
 */
export async function publicBatch<T extends Batch>(
  env: Env,
  settings: Partial<
    Record<
      | "app.log_id"
      | "app.leaf_hash"
      | "app.checkout_session"
      | "app.artifact_digest"
      | "app.artifact_id",
      string
    >
  >,
  build: (db: Database) => T,
): Promise<BatchResponse<T>> {
  const sets = (db: Database) =>
    Object.entries(settings).map(([name, value]) => settingOf(db, { name, value }));
  return (await transact(env, sets, build, null)).results;
}
