/**
 * Where `npm run dev` and `npm run token` keep local state. Everything lives under one root so
 * a second copy (the dev test, a throwaway experiment) can run beside the developer's own state
 * by setting DEV_STATE_DIR, without touching the repo's `.dev.vars` or `.data/`.
 */
import { resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "..");

export interface DevPaths {
  /** The state root: DEV_STATE_DIR, or the repository itself. */
  root: string;
  /** The Worker's local secrets and vars (dotenv format), passed to wrangler as --env-file. */
  devVars: string;
  /** Git-ignored data: the database, wrangler's persisted state, the local IdP key. */
  data: string;
  pglite: string;
  /** Durable Objects, cache, KV... (`wrangler dev --persist-to`). */
  wranglerState: string;
  /** The local identity provider with its private key: only `npm run token` reads it. */
  localIdp: string;
  /** Holds the pid of the running `npm run dev`: one server per state root. */
  lock: string;
}

export function devPaths(env: NodeJS.ProcessEnv = process.env): DevPaths {
  const root = env.DEV_STATE_DIR ? resolve(env.DEV_STATE_DIR) : REPO_ROOT;
  const data = resolve(root, ".data");
  return {
    root,
    devVars: resolve(root, ".dev.vars"),
    data,
    pglite: resolve(data, "pglite"),
    wranglerState: resolve(data, "wrangler"),
    localIdp: resolve(data, "local-idp.json"),
    lock: resolve(data, "dev.pid"),
  };
}
