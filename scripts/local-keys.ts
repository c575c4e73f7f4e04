import { createHash, generateKeyPairSync, type JsonWebKey, randomBytes } from "node:crypto";

/** A fresh Ed25519 key pair as JWKs (private and public). */
export function ed25519Jwk(): { privateJwk: JsonWebKey; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateJwk: privateKey.export({ format: "jwk" }),
    publicJwk: publicKey.export({ format: "jwk" }),
  };
}

/** A fresh P-256 key pair as JWKs (private and public): SIGNING_KEY_ES256, which signs ES256. */
export function p256Jwk(): { privateJwk: JsonWebKey; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    privateJwk: privateKey.export({ format: "jwk" }),
    publicJwk: publicKey.export({ format: "jwk" }),
  };
}

/**
 * The local identity provider: its issuer (the origin its server listens on, see
 * dev-idp-server.ts), audience (also the console's client id), signing key and key set.
 */
export function localIdentityProvider(issuer: string) {
  const { privateJwk, publicJwk } = ed25519Jwk();
  const kid = "local-idp";
  return {
    issuer,
    audience: "agent-risk-console",
    privateJwk: { ...privateJwk, kid, alg: "EdDSA" },
    jwks: { keys: [{ ...publicJwk, kid, alg: "EdDSA", use: "sig" }] },
  };
}

/**
 * The Worker's connection string for the local SQL endpoint: the role it runs as (app_user),
 * and the endpoint's own host and port, which the driver is pointed at in development.
 */
export function localDatabaseUrl(endpointUrl: string, user = "app_user"): string {
  const { host } = new URL(endpointUrl);
  return `postgresql://${user}:local@${host}/agent_risk`;
}

/**
 * A fresh master key for principals' personal data: 256 random bits as an oct JWK. Its kid is
 * derived from the key, so one key always has one kid and two keys never share one.
 */
export function principalMasterKey(): Record<string, string> {
  const k = randomBytes(32).toString("base64url");
  const kid = `pmk_${createHash("sha256").update(k).digest("base64url").slice(0, 16)}`;
  return { kty: "oct", k, kid };
}

/**
 * A fresh network key (NETWORK_KEYS holds a JSON array of these; src/network/keys.ts): 256
 * random bits as an oct JWK, its kid derived from the key.
 */
export function networkKey(): Record<string, string> {
  const k = randomBytes(32).toString("base64url");
  const kid = `nk_${createHash("sha256").update(k).digest("base64url").slice(0, 16)}`;
  return { kty: "oct", k, kid };
}
