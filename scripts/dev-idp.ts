/**
 * The local identity provider: stands in for the console's real IdP in development. Its private
 * key stays in `.data/local-idp.json` (mode 0600), read by its server (dev-idp-server.ts, started
 * by `npm run dev`) and by `npm run token`; the Worker gets the issuer, audience and public key
 * set through `.dev.vars`, exactly as it would in production.
 *
 * The issuer is the server's origin, `http://127.0.0.1:<port>`. The port is chosen once (a free
 * one) and kept in the file, so sessions minted by one run still verify in the next; when it is
 * taken by then, the server moves to a free port and the issuer follows (earlier sessions then
 * stop verifying, as they would after a real provider changed its issuer).
 */
import { existsSync, readFileSync } from "node:fs";
import type { JWK } from "jose";
import { writePrivateFile } from "./dev-files.ts";
import { type LocalIdpServer, startLocalIdpServer } from "./dev-idp-server.ts";
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

/** The port an issuer of ours names (`http://<host>:<port>`, nothing else), or 0. */
function portOf(issuer: string, host: string): number {
  try {
    const url = new URL(issuer);
    const originOnly = url.protocol === "http:" && url.hostname === host && url.pathname === "/";
    return originOnly && issuer === url.origin ? Number(url.port) : 0;
  } catch {
    return 0;
  }
}

export interface StartedLocalIdp {
  idp: LocalIdp;
  server: LocalIdpServer;
  created: boolean;
  /** The issuer changed (a new port): sessions minted before no longer verify. */
  moved: boolean;
}

/**
 * Starts the local IdP's server with the key of `path` (created on the first run), on its port
 * from the last run when it is free, and keeps the file's issuer equal to the server's origin.
 */
export async function startLocalIdp(
  path: string,
  options: { host: string; avoidPort: number; redirectUris: string[] },
): Promise<StartedLocalIdp> {
  const existing = readLocalIdp(path);
  const idp = existing ?? (localIdentityProvider("") as LocalIdp);
  const kept = portOf(idp.issuer, options.host);
  const server = await startLocalIdpServer({
    host: options.host,
    port: kept === options.avoidPort ? 0 : kept,
    anyPortIfTaken: true,
    privateJwk: idp.privateJwk,
    jwks: idp.jwks,
    clientId: idp.audience,
    redirectUris: options.redirectUris,
  });
  const moved = existing !== undefined && existing.issuer !== server.url;
  if (!existing || moved) {
    idp.issuer = server.url;
    writePrivateFile(path, `${JSON.stringify(idp, null, 2)}\n`);
  }
  return { idp, server, created: !existing, moved };
}
