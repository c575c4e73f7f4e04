import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import { type Env, modeOf } from "../env";
import { ApiError } from "../errors";
import { unauthenticated } from "./unauthenticated";

export interface SessionIdentity {
  subject: string;
  email: string | null;
}

// Key sets per isolate: the remote one caches the provider's keys and refetches on an unknown
// `kid`, which is how a provider's key rotation reaches us without a deploy.
const keySets = new Map<string, JWTVerifyGetKey>();

function keySet(env: Env): JWTVerifyGetKey {
  const source = env.IDP_JWKS_URL ?? env.IDP_JWKS;
  if (!source || !env.IDP_ISSUER || !env.IDP_AUDIENCE) {
    throw new ApiError("identity_provider_unavailable");
  }
  let set = keySets.get(source);
  if (set) return set;
  if (env.IDP_JWKS_URL) {
    const url = new URL(env.IDP_JWKS_URL);
    if (url.protocol !== "https:" && modeOf(env) === "production") {
      throw new ApiError("identity_provider_unavailable");
    }
    set = createRemoteJWKSet(url, { timeoutDuration: 5000 });
  } else {
    try {
      set = createLocalJWKSet(JSON.parse(source) as JSONWebKeySet);
    } catch (cause) {
      throw new ApiError("identity_provider_unavailable", undefined, { cause });
    }
  }
  keySets.set(source, set);
  return set;
}

/** The `aud` values a session may carry: the API's audience and the console's client id. */
export function sessionAudiences(env: Env): string[] {
  const audiences = [env.IDP_AUDIENCE as string];
  if (env.IDP_CLIENT_ID && env.IDP_CLIENT_ID !== env.IDP_AUDIENCE)
    audiences.push(env.IDP_CLIENT_ID);
  return audiences;
}

/**
 * An issuer identifier as discovery compares it (oauth4webapi: `new URL(..).href`), or null if
 * it is no URL. So `https://t.example` and `https://t.example/` are one issuer here as they are
 * at discovery, and an IDP_ISSUER spelled either way accepts the provider's `iss`.
 */
export function issuerIdentifier(value: string): string | null {
  try {
    return new URL(value).href;
  } catch {
    return null;
  }
}

/**
 * Verifies a session JWT exactly as a production identity provider's token is verified:
 * signature against the provider's key set, issuer, audience and expiry.
 */
export async function verifySession(token: string, env: Env): Promise<SessionIdentity> {
  const keys = keySet(env);
  const issuer = issuerIdentifier(env.IDP_ISSUER as string);
  if (issuer === null) throw new ApiError("identity_provider_unavailable");
  try {
    const { payload } = await jwtVerify(token, keys, {
      // The console's ID tokens name its client id, which may differ from the API's audience.
      audience: sessionAudiences(env),
      algorithms: ["EdDSA", "ES256", "RS256"],
      requiredClaims: ["iss", "sub", "exp"],
    });
    // The issuer, compared as discovery compares it (jose would compare the raw strings).
    if (typeof payload.iss !== "string" || issuerIdentifier(payload.iss) !== issuer) {
      throw new Error("unexpected iss");
    }
    const email = typeof payload.email === "string" ? payload.email : null;
    return { subject: payload.sub as string, email };
  } catch (error) {
    if (error instanceof errors.JWKSTimeout) {
      throw new ApiError("identity_provider_unavailable", undefined, { cause: error });
    }
    if (error instanceof errors.JWTExpired) throw unauthenticated("expired_session", error);
    const malformed = error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid;
    throw unauthenticated(malformed ? "malformed_session" : "unknown_session", error);
  }
}
