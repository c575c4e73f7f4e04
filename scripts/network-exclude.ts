/**
 * An operator excludes an org's mode from the network (docs/network.md, "Poisoning"), or lifts
 * the exclusion, as the database's owner:
 *
 *   DATABASE_OWNER_URL='postgresql://owner:…' npm run network:exclude -- --org <uuid> --mode live --reason "labels every rival's payees"
 *   DATABASE_OWNER_URL='postgresql://owner:…' npm run network:exclude -- --org <uuid> --mode live --undo
 *
 * Excluded, the org's contributions stop counting at once (every count reads only members not
 * excluded), nothing new of it is contributed, and it reads no counts, whatever its settings
 * say; its rows are kept, so lifting the exclusion restores them. An org that has not joined is
 * excluded all the same, before it can. The org sees `excluded: true` in its settings, never the
 * reason.
 */
import { pathToFileURL } from "node:url";
import pg from "pg";
import { redactDatabaseUrl } from "./database-url.ts";

export interface Exclusion {
  org: string;
  livemode: boolean;
  /** Why (kept with the exclusion; required to exclude). */
  reason: string | null;
  /** Lift the exclusion instead. */
  undo: boolean;
}

/** The member's state after the change; null when lifting finds no member. */
export interface MemberState {
  org_id: string;
  livemode: boolean;
  contribute: boolean;
  consume: boolean;
  excluded_at: string | null;
  excluded_reason: string | null;
}

/** Runs one statement: node-postgres in the CLI, whatever the caller has in a test. */
export type Query = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

export class UsageError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const USAGE =
  'usage: npm run network:exclude -- --org <uuid> --mode live|test (--reason "why" | --undo)';

/** The command line's options, or a UsageError that says what is wrong. */
export function parseExclusion(argv: readonly string[]): Exclusion {
  const options: Partial<Record<"org" | "mode" | "reason", string>> = {};
  let undo = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--undo") {
      undo = true;
      continue;
    }
    const name = flag?.startsWith("--") ? flag.slice(2) : "";
    if (name !== "org" && name !== "mode" && name !== "reason") {
      throw new UsageError(`unknown argument ${JSON.stringify(flag)}`);
    }
    const value = argv[++i];
    if (value === undefined || value.startsWith("--"))
      throw new UsageError(`--${name} needs a value`);
    options[name] = value;
  }
  if (!options.org || !UUID.test(options.org)) throw new UsageError("--org must be an org's uuid");
  if (options.mode !== "live" && options.mode !== "test") {
    throw new UsageError("--mode must be live or test");
  }
  const reason = options.reason?.trim() ?? "";
  if (!undo && reason === "") throw new UsageError("--reason is required to exclude");
  if (undo && reason !== "") throw new UsageError("--undo takes no --reason");
  return {
    org: options.org.toLowerCase(),
    livemode: options.mode === "live",
    reason: undo ? null : reason,
    undo,
  };
}

const COLUMNS = `org_id, livemode, contribute, consume,
  to_json(excluded_at) #>> '{}' as excluded_at, excluded_reason`;

/**
 * Excludes the org's mode (a member row is made if it has none: excluded before it joins), or
 * lifts the exclusion. Throws when the org does not exist.
 */
export async function applyExclusion(
  query: Query,
  exclusion: Exclusion,
): Promise<MemberState | null> {
  if (exclusion.undo) {
    const rows = await query(
      `update network_members set excluded_at = null, excluded_reason = null
       where org_id = $1 and livemode = $2 returning ${COLUMNS}`,
      [exclusion.org, exclusion.livemode],
    );
    return (rows[0] as unknown as MemberState | undefined) ?? null;
  }
  const [org] = await query("select id from organizations where id = $1", [exclusion.org]);
  if (!org) throw new Error(`no organization ${exclusion.org}`);
  const rows = await query(
    `insert into network_members as m (org_id, livemode, excluded_at, excluded_reason)
     values ($1, $2, now(), $3)
     on conflict (org_id, livemode) do update
       set excluded_at = coalesce(m.excluded_at, now()), excluded_reason = excluded.excluded_reason
     returning ${COLUMNS}`,
    [exclusion.org, exclusion.livemode, exclusion.reason],
  );
  return rows[0] as unknown as MemberState;
}

/** One line for the operator: what the member is now. */
export function describe(exclusion: Exclusion, state: MemberState | null): string {
  const mode = exclusion.livemode ? "live" : "test";
  if (state === null)
    return `org ${exclusion.org} (${mode}) is not a network member: nothing to lift`;
  const membership = `contribute ${state.contribute}, consume ${state.consume}`;
  return state.excluded_at === null
    ? `org ${exclusion.org} (${mode}) is no longer excluded (${membership})`
    : `org ${exclusion.org} (${mode}) excluded since ${state.excluded_at}: ${state.excluded_reason} (${membership})`;
}

async function main(): Promise<void> {
  let exclusion: Exclusion;
  try {
    exclusion = parseExclusion(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    process.exit(2);
  }
  const url = process.env.DATABASE_OWNER_URL;
  if (!url) {
    console.error("Set DATABASE_OWNER_URL to the owner's connection string (not the app role's).");
    process.exit(2);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const query: Query = async (text, params) => (await client.query(text, params)).rows;
    console.log(describe(exclusion, await applyExclusion(query, exclusion)));
  } catch (error) {
    console.error(`${redactDatabaseUrl(url)}: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
