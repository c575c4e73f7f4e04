import { calculateJwkThumbprint, type JWK } from "jose";
import type { Env } from "../../env";
import { logError } from "../../lib/log";
import { fetchJson, OutboundError, outboundPolicy } from "../../net/outbound";
import type { SignatureAgent } from "./presented";
import type { DirectoryKey, DirectoryKeys } from "./verify";

/**
 * A signer's key directory (draft-meunier-webbotauth-httpsig-directory: a JWKS at
 * `/.well-known/http-message-signatures-directory` of the `Signature-Agent`'s origin, or the
 * JWKS a `type=jwks_uri` entry names), fetched through the outbound guard beside the context
 * read (docs/architecture.md, ADR issue 42, point 4) and kept per isolate for TTL_MS, at most
 * MAX_ENTRIES directories; a failed fetch is remembered for FAILURE_TTL_MS so that a dead
 * directory does not cost every request a timeout.
 */
export const WELL_KNOWN_DIRECTORY = "/.well-known/http-message-signatures-directory";
const TTL_MS = 5 * 60_000;
const FAILURE_TTL_MS = 30_000;
const MAX_ENTRIES = 256;
const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 3000;
const MAX_KEYS = 64;

const cache = new Map<string, { at: number; keys: DirectoryKeys }>();

/** The URL a `Signature-Agent` entry's keys are read from; null when it is not an http(s) URL. */
export function directoryUrl(agent: SignatureAgent): string | null {
  let url: URL;
  try {
    url = new URL(agent.uri);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return agent.type === "jwks_uri" ? url.href : `${url.origin}${WELL_KNOWN_DIRECTORY}`;
}

/** The directory's keys, from this isolate's cache or fetched; never throws. */
export async function directoryKeys(env: Env, agent: SignatureAgent): Promise<DirectoryKeys> {
  const url = directoryUrl(agent);
  if (url === null) return { ok: false, reason: "not an http(s) URL" };
  const now = Date.now();
  const held = cache.get(url);
  if (held && now - held.at < (held.keys.ok ? TTL_MS : FAILURE_TTL_MS)) return held.keys;
  const keys = await fetchKeys(env, url);
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.delete(url);
  cache.set(url, { at: now, keys });
  return keys;
}

/** Forgets every directory this isolate holds (tests). */
export function forgetDirectories(): void {
  cache.clear();
}

async function fetchKeys(env: Env, url: string): Promise<DirectoryKeys> {
  try {
    const json = await fetchJson(url, outboundPolicy(env), {
      maxBytes: MAX_BYTES,
      timeoutMs: TIMEOUT_MS,
    });
    const keys = (json as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) return { ok: false, reason: "not a JWKS (no keys array)" };
    const usable: DirectoryKey[] = [];
    for (const jwk of keys.slice(0, MAX_KEYS)) {
      if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) continue;
      // Thumbprinted once per fetch, not once per request; a key jose cannot read is skipped.
      const thumbprint = await calculateJwkThumbprint(jwk as JWK).catch(() => null);
      if (thumbprint !== null) usable.push({ jwk: jwk as JWK, thumbprint });
    }
    return { ok: true, keys: usable };
  } catch (error) {
    const reason = error instanceof OutboundError ? error.code : "fetch failed";
    logError("signature directory fetch failed", { url, reason });
    return { ok: false, reason };
  }
}
