import { LRUCache } from "lru-cache";
import { logError } from "../lib/log";
import { type NormalizedRules, normalizeRules, PolicyRules } from "./policy";

// Parsed policies, kept across requests in the isolate. A policy's rules never change under
// its id (there is no update route; a change is a new policy), and an activation gives it a
// new org-wide version, so (id, version) names one parse forever: nothing needs invalidating.
// Bounded, because one isolate serves many orgs; the bound is a few hundred policies of a few
// kilobytes each once compiled.

/** A policy as read from the database: its stored rules are JSON of unknown shape. */
export interface StoredPolicy {
  id: string;
  /** Null for a draft that was never activated (backtests and evaluations read drafts). */
  version: number | null;
  rules: unknown;
}

/** The rules, or "unreadable" when the stored JSON no longer parses or does not compile. */
export type ParsedPolicy = NormalizedRules | "unreadable";

/** How many policies one isolate keeps parsed. */
export const POLICY_CACHE_SIZE = 256;

const cache = new LRUCache<string, { parsed: ParsedPolicy }>({ max: POLICY_CACHE_SIZE });

/** Parses done since the isolate started: a test reads it to see the cache reused a parse. */
let parses = 0;

function keyOf(policy: StoredPolicy): string {
  return `${policy.id}:${policy.version ?? "draft"}`;
}

/**
 * The policy's rules, parsed and compiled once per (id, version) in this isolate. Every reader
 * of a stored policy (the assess path, a shadow policy beside it) goes through here, so a
 * second reader of the same version costs nothing. "unreadable" is cached too: a stored rule
 * list an older grammar wrote stays unreadable until a new version replaces it.
 */
export function parsedPolicy(policy: StoredPolicy): ParsedPolicy {
  const key = keyOf(policy);
  const hit = cache.get(key);
  if (hit !== undefined) return hit.parsed;
  parses += 1;
  const parsed = parse(policy.rules);
  cache.set(key, { parsed });
  return parsed;
}

function parse(rules: unknown): ParsedPolicy {
  const checked = PolicyRules.safeParse(rules);
  if (!checked.success) return "unreadable";
  try {
    return normalizeRules(checked.data);
  } catch (error) {
    logError("policy rules do not compile", { error: String(error) });
    return "unreadable";
  }
}

/** Parses done and policies held, for tests and the benchmark. */
export function policyCacheStats(): { parses: number; size: number } {
  return { parses, size: cache.size };
}
