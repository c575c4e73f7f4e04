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
 * Verifies a session JWT exactly as a production identity provider's token is verified:
 * signature against the provider's key set, issuer, audience and expiry.
 */
export async function verifySession(token: string, env: Env): Promise<SessionIdentity> {
  const keys = keySet(env);
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: env.IDP_ISSUER,
      // The console's ID tokens name its client id, which may differ from the API's audience.
      audience: sessionAudiences(env),
      algorithms: ["EdDSA", "ES256", "RS256"],
      requiredClaims: ["sub", "exp"],
    });
    const email = typeof payload.email === "string" ? payload.email : null;
    return { subject: payload.sub as string, email };
  } catch (error) {
    if (error instanceof errors.JWKSTimeout) {
      throw new ApiError("identity_provider_unavailable", undefined, { cause: error });
    }
    throw new ApiError("unauthenticated", undefined, { cause: error });
  }
}
