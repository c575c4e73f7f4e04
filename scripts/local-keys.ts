import { generateKeyPairSync, type JsonWebKey } from "node:crypto";

/** A fresh Ed25519 key pair as JWKs (private and public). */
export function ed25519Jwk(): { privateJwk: JsonWebKey; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateJwk: privateKey.export({ format: "jwk" }),
    publicJwk: publicKey.export({ format: "jwk" }),
  };
}

/** The local identity provider: its issuer, audience, signing key and published key set. */
export function localIdentityProvider(origin: string) {
  const { privateJwk, publicJwk } = ed25519Jwk();
  const kid = "local-idp";
  return {
    issuer: `${origin}/local-idp`,
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
