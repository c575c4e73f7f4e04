/**
 * `.dev.vars`: the Worker's local secrets and vars, in the dotenv format wrangler reads.
 *
 * The file is "ensured", never regenerated: a key is created once and then kept, so the signing
 * key's kid (and every payload it signed) survives restarts; a variable added by a later change
 * is appended on the next `npm run dev` without disturbing the others or the developer's edits.
 */
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { writePrivateFile } from "./dev-files.ts";
import type { LocalIdp } from "./dev-idp.ts";
import { stripeDevDefaults } from "./dev-stripe.ts";
import { ed25519Jwk, networkKey, p256Jwk, principalMasterKey } from "./local-keys.ts";

export interface DevVarRules {
  /** Created when absent (keys get generated only then), left alone afterwards. */
  defaults?: Record<string, () => string>;
  /** Kept equal to a value whose source of truth is elsewhere (the local IdP file). */
  managed?: Record<string, string>;
}

export interface DevVarsChange {
  created: boolean;
  added: string[];
  updated: string[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([\w.-]+)\s*=\s*(.*)$/;
const HEADER = [
  "# Local development only: created by `npm run dev` (scripts/dev-vars.ts). Git-ignored; never",
  "# commit it. Entries are generated once and kept; delete one to have it regenerated.",
  "# DATABASE_URL is not here: `npm run dev` passes it on each start (the SQL endpoint's port),",
  "# and PUBLIC_BASE_URL too (its own address), unless you set PUBLIC_BASE_URL here yourself.",
];

/** A dotenv value: quotes removed; for an unquoted value, a ` #` comment removed. */
function unquote(raw: string): string {
  const value = raw.trim();
  const quote = value[0];
  if ((quote === "'" || quote === '"' || quote === "`") && value.lastIndexOf(quote) > 0) {
    return value.slice(1, value.lastIndexOf(quote));
  }
  return value.replace(/\s+#.*$/, "");
}

/** Single quotes: dotenv then takes the JSON verbatim (no `\n` expansion, no `#` comments). */
function formatLine(key: string, value: string): string {
  if (/^[\w.:/@+-]*$/.test(value)) return `${key}=${value}`;
  if (value.includes("'") || /[\r\n]/.test(value)) {
    throw new Error(`${key}: value cannot be written to .dev.vars (quote or newline)`);
  }
  return `${key}='${value}'`;
}

/** The assignments of a dotenv file; the last one of a key wins, as in dotenv. */
export function parseDevVars(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const match = ASSIGNMENT.exec(line);
    if (match?.[1] !== undefined) vars.set(match[1], unquote(match[2] ?? ""));
  }
  return vars;
}

export function readDevVars(path: string): Map<string, string> | undefined {
  return existsSync(path) ? parseDevVars(readFileSync(path, "utf8")) : undefined;
}

/** Adds missing defaults and corrects managed values; writes (mode 0600) only on a change. */
export function ensureDevVars(path: string, rules: DevVarRules): DevVarsChange {
  const created = !existsSync(path);
  const lines = created ? [...HEADER] : readFileSync(path, "utf8").replace(/\n$/, "").split("\n");
  const current = parseDevVars(lines.join("\n"));
  const change: DevVarsChange = { created, added: [], updated: [] };

  for (const [key, value] of Object.entries(rules.managed ?? {})) {
    if (!current.has(key)) continue; // appended below, with the defaults
    if (current.get(key) === value) continue;
    // Rewrite the first assignment, drop later ones (they would win and keep the stale value).
    const at = lines.findIndex((line) => ASSIGNMENT.exec(line)?.[1] === key);
    lines[at] = formatLine(key, value);
    for (let i = lines.length - 1; i > at; i--) {
      if (ASSIGNMENT.exec(lines[i] ?? "")?.[1] === key) lines.splice(i, 1);
    }
    change.updated.push(key);
  }
  const missing: [string, () => string][] = [
    ...Object.entries(rules.defaults ?? {}),
    ...Object.entries(rules.managed ?? {}).map(([k, v]): [string, () => string] => [k, () => v]),
  ].filter(([key]) => !current.has(key));
  for (const [key, generate] of missing) {
    lines.push(formatLine(key, generate()));
    change.added.push(key);
  }

  if (created || change.added.length > 0 || change.updated.length > 0) {
    writePrivateFile(path, `${lines.join("\n")}\n`);
  } else if ((statSync(path).mode & 0o077) !== 0) {
    chmodSync(path, 0o600); // it holds the signing key
  }
  return change;
}

/** The Worker's local configuration (vitest.config.ts has the same set, minus TEST_*). */
export function ensureLocalDevVars(path: string, idp: LocalIdp): DevVarsChange {
  return ensureDevVars(path, {
    defaults: {
      ENVIRONMENT: () => "development",
      LOCAL_SQL_ENDPOINT: () => "true",
      SIGNING_KEY: () => JSON.stringify(ed25519Jwk().privateJwk),
      SIGNING_KEY_ES256: () => JSON.stringify(p256Jwk().privateJwk),
      PRINCIPAL_MASTER_KEY: () => JSON.stringify(principalMasterKey()),
      NETWORK_KEYS: () => JSON.stringify([networkKey()]),
      // Accepted by the local Stripe stand-in only; STRIPE_API_BASE is passed per start.
      ...stripeDevDefaults,
    },
    // The IdP's private key lives in .data/local-idp.json (the Worker must never hold it);
    // these three follow that file, so tokens from `npm run token` always verify.
    managed: {
      IDP_ISSUER: idp.issuer,
      IDP_AUDIENCE: idp.audience,
      IDP_JWKS: JSON.stringify(idp.jwks),
    },
  });
}
