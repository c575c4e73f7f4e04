import { type SQL, sql } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { authStatements, type Caller, callerFromRows } from "../auth/caller";
import type { Env } from "../env";
import { ApiError } from "../errors";
import type { AppContext, AuthState } from "../http/context";
import { type Database, database } from "./client";

type Batch = readonly [BatchItem<"pg">, ...BatchItem<"pg">[]];
type AnyBatch = [BatchItem<"pg">, ...BatchItem<"pg">[]];

function authState(c: AppContext): AuthState {
  const auth = c.get("auth");
  // A route that reaches the database without `authorize` is a programming error, never a
  // reason to run unscoped.
  if (!auth) throw new ApiError("internal_error");
  return auth;
}

function rowsOf(result: unknown): Record<string, unknown>[] {
  return (result as { rows: Record<string, unknown>[] }).rows;
}

export function setTenant(orgId: string): SQL {
  return sql`select set_config('app.org_id', ${orgId}, true)`;
}

/** The caller of this request, authenticating with one round trip if nothing has yet. */
export async function caller(c: AppContext): Promise<Caller> {
  const auth = authState(c);
  if (auth.caller) return auth.caller;
  const db = database(c.env);
  const statements = authStatements(auth.credential, auth.scope).map((s) => db.execute(s));
  const results = await db.batch(statements as unknown as AnyBatch);
  auth.caller = callerFromRows(auth.credential, auth.scope, rowsOf(results.at(-1)));
  return auth.caller;
}

/**
 * Runs queries as one transaction in the caller's org: the one way route code reaches
 * org-scoped data. When the caller is not yet known, the credential check rides in the same
 * round trip and RLS keeps the queries from seeing or writing anything unless it passes.
 */
export async function orgBatch<T extends Batch>(
  c: AppContext,
  build: (db: Database) => T,
): Promise<BatchResponse<T>> {
  const auth = authState(c);
  const db = database(c.env);
  const queries = build(db);
  if (auth.caller) {
    const results = await db.batch([db.execute(setTenant(auth.caller.orgId)), ...queries]);
    return results.slice(1) as BatchResponse<T>;
  }
  const prefix = authStatements(auth.credential, auth.scope).map((s) => db.execute(s));
  let results: unknown[];
  try {
    results = await db.batch([...prefix, ...queries] as unknown as AnyBatch);
  } catch (error) {
    // A write refused because the credential failed: answer with the credential's problem.
    await caller(c);
    throw error;
  }
  auth.caller = callerFromRows(auth.credential, auth.scope, rowsOf(results[prefix.length - 1]));
  return results.slice(prefix.length) as BatchResponse<T>;
}

/**
 * Runs queries for a public (credential-free) route. Public lookups go by a value the caller
 * already holds (a log id, a leaf hash): each named setting enables exactly the RLS policy that
 * allows that one lookup, and nothing else of any org is visible.
 */
export async function publicBatch<T extends Batch>(
  c: AppContext,
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
  const db = database(c.env);
  const sets = Object.entries(settings).map(([name, value]) =>
    db.execute(sql`select set_config(${name}, ${value}, true)`),
  );
  const results = await db.batch([...sets, ...build(db)] as unknown as AnyBatch);
  return results.slice(sets.length) as BatchResponse<T>;
}

/**
 * Runs queries as one transaction in a known org without a tenant credential: for writes a
 * verified provider signature attributes to an org (the billing webhook). RLS applies as usual.
 */
export async function orgBatchOf<T extends Batch>(
  env: Env,
  orgId: string,
  build: (db: Database) => T,
): Promise<BatchResponse<T>> {
  const db = database(env);
  const results = await db.batch([db.execute(setTenant(orgId)), ...build(db)]);
  return results.slice(1) as BatchResponse<T>;
}
