/**
 * The local identity provider: stands in for the console's real IdP in development. Its private
 * key stays in `.data/local-idp.json` (mode 0600), read only by `npm run token`; the Worker gets
 * the issuer, audience and public key set through `.dev.vars`, exactly as it would in production.
 */
import { existsSync, readFileSync } from "node:fs";
import type { JWK } from "jose";
import { writePrivateFile } from "./dev-files.ts";
import { localIdentityProvider } from "./local-keys.ts";

export interface LocalIdp {
  issuer: string;
  audience: string;
  /** Ed25519 private JWK with `kid` and `alg`. */
  privateJwk: JWK & { kid: string; d: string; x: string };
  jwks: { keys: JWK[] };
}

function isLocalIdp(value: unknown): value is LocalIdp {
  const idp = value as Partial<LocalIdp> | null;
  const key = idp?.privateJwk;
  return (
    typeof idp?.issuer === "string" &&
    typeof idp.audience === "string" &&
    key?.kty === "OKP" &&
    key.crv === "Ed25519" &&
    typeof key.d === "string" &&
    typeof key.kid === "string" &&
    Array.isArray(idp.jwks?.keys) &&
    // The published set must hold the public half, or its tokens would never verify.
    idp.jwks.keys.some((k) => k.x === key.x && k.kid === key.kid)
  );
}

/** The local IdP, or undefined when `npm run dev` has not created it (or it is unusable). */
export function readLocalIdp(path: string): LocalIdp | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const idp: unknown = JSON.parse(readFileSync(path, "utf8"));
    return isLocalIdp(idp) ? idp : undefined;
  } catch {
    return undefined;
  }
}

/** Reuses the local IdP (same key, so sessions minted earlier stay valid) or creates one. */
export function ensureLocalIdp(path: string, origin: string): { idp: LocalIdp; created: boolean } {
  const existing = readLocalIdp(path);
  if (existing) return { idp: existing, created: false };
  const idp = localIdentityProvider(origin) as LocalIdp;
  writePrivateFile(path, `${JSON.stringify(idp, null, 2)}\n`);
  return { idp, created: true };
}
