/**
 * The console's OpenID Connect client: authorization code flow with PKCE (S256) against
 * IDP_ISSUER, through `oauth4webapi` (discovery, the authorization request's parameters, the
 * callback's validation, the code exchange and the ID token's claims: iss, aud, exp, iat,
 * nonce). The ID token's signature is then verified against the provider's key set by the
 * same code that verifies every session (src/auth/session.ts), so the cookie holds nothing the
 * API would not accept as a Bearer token.
 *
 * The client is public (no secret: `token_endpoint_auth_method` none); PKCE binds the code to
 * the browser that started the sign-in. Nothing here logs a code, a verifier or a token.
 */
import * as oauth from "oauth4webapi";
import { type Env, misconfigured, modeOf, publicBaseUrl } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

/** Where the provider sends the browser back: registered with the provider (docs/deploy.md). */
export const CALLBACK_PATH = "/console/auth/callback";
/** What the console asks for: an ID token with the user's email. */
const SCOPE = "openid email";
/** Each call to the provider: a provider that does not answer in time is unavailable (503). */
const PROVIDER_TIMEOUT_MS = 5_000;
/** Provider metadata is kept this long per isolate: a changed endpoint arrives without a deploy. */
const DISCOVERY_TTL_MS = 10 * 60_000;

export interface Provider {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  redirectUri: string;
  /** Plain http to the provider: development and tests only (a loopback IdP). */
  insecure: boolean;
}

export interface LoginState {
  state: string;
  nonce: string;
  verifier: string;
}

const discovered = new Map<string, { at: number; as: oauth.AuthorizationServer }>();

function issuerOf(env: Env): URL {
  let issuer: URL;
  try {
    issuer = new URL(env.IDP_ISSUER ?? "");
  } catch {
    throw misconfigured("IDP_ISSUER");
  }
  const production = modeOf(env) === "production";
  if (issuer.protocol !== "https:" && (production || issuer.protocol !== "http:")) {
    throw misconfigured("IDP_ISSUER");
  }
  return issuer;
}

function requestOptions(insecure: boolean) {
  return {
    [oauth.allowInsecureRequests]: insecure,
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
  };
}

/** The provider could not be reached or answered nonsense: logged by kind, answered 503. */
function unavailable(step: string, cause: unknown): ApiError {
  logError("identity provider unavailable", {
    step,
    error: cause instanceof Error ? cause.message : String(cause),
  });
  return new ApiError("identity_provider_unavailable", undefined, { cause });
}

/** An https URL (or http, like the issuer, for a loopback provider in development). */
function isEndpoint(value: string | undefined, insecure: boolean): boolean {
  let protocol: string;
  try {
    protocol = new URL(value ?? "").protocol;
  } catch {
    return false;
  }
  return protocol === "https:" || (insecure && protocol === "http:");
}

async function discover(issuer: URL, insecure: boolean): Promise<oauth.AuthorizationServer> {
  const cached = discovered.get(issuer.href);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.as;
  try {
    const response = await oauth.discoveryRequest(issuer, {
      algorithm: "oidc",
      ...requestOptions(insecure),
    });
    const as = await oauth.processDiscoveryResponse(issuer, response);
    // Checked here, once: an endpoint that is no URL would otherwise be a TypeError (a 500)
    // when the sign-in builds its redirect or the code exchange its request.
    for (const endpoint of [as.authorization_endpoint, as.token_endpoint]) {
      if (!isEndpoint(endpoint, insecure)) {
        throw new Error("the discovery document has no usable authorization or token endpoint");
      }
    }
    discovered.set(issuer.href, { at: Date.now(), as });
    return as;
  } catch (cause) {
    throw unavailable("discovery", cause);
  }
}

/** The configured provider, discovered (and cached); 503 when it cannot be. */
export async function provider(env: Env): Promise<Provider> {
  const issuer = issuerOf(env);
  const clientId = env.IDP_CLIENT_ID || env.IDP_AUDIENCE;
  if (!clientId) throw misconfigured("IDP_CLIENT_ID");
  const insecure = issuer.protocol === "http:";
  const as = await discover(issuer, insecure);
  return {
    as,
    client: { client_id: clientId, token_endpoint_auth_method: "none" },
    redirectUri: `${publicBaseUrl(env)}${CALLBACK_PATH}`,
    insecure,
  };
}

/** A fresh sign-in: its secrets (to seal in the login cookie) and the provider's URL to visit. */
export async function beginSignIn(p: Provider): Promise<{ login: LoginState; url: URL }> {
  const login: LoginState = {
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    verifier: oauth.generateRandomCodeVerifier(),
  };
  const url = new URL(p.as.authorization_endpoint as string);
  url.searchParams.set("client_id", p.client.client_id);
  url.searchParams.set("redirect_uri", p.redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", SCOPE);
  url.searchParams.set("state", login.state);
  url.searchParams.set("nonce", login.nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(login.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  return { login, url };
}

/** Why a sign-in was refused: the reason's code, and a sentence for the person. */
export class SignInError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    readonly providerError?: string,
  ) {
    super(message);
  }
}

/**
 * The callback: checks the provider's answer against the sign-in's state, exchanges the code
 * with the PKCE verifier, and checks the ID token's claims (nonce included). Returns the ID token
 * and its expiry. A refused sign-in is a SignInError (400); an unreachable provider a 503.
 */
export async function completeSignIn(
  p: Provider,
  callback: URL,
  login: LoginState,
): Promise<{ idToken: string; expiresAt: number }> {
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(p.as, p.client, callback, login.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new SignInError(
        "provider_error",
        error.error_description ?? "the identity provider refused the sign-in",
        error.error,
      );
    }
    throw new SignInError("state_mismatch", "the answer does not belong to this sign-in");
  }

  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(
      p.as,
      p.client,
      oauth.None(),
      parameters,
      p.redirectUri,
      login.verifier,
      requestOptions(p.insecure),
    );
  } catch (cause) {
    throw unavailable("token", cause);
  }
  try {
    const result = await oauth.processAuthorizationCodeResponse(p.as, p.client, response, {
      expectedNonce: login.nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (!result.id_token || !claims) throw new Error("no ID token");
    return { idToken: result.id_token, expiresAt: claims.exp };
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      if (error.status >= 500) throw unavailable("token", error);
      throw new SignInError(
        "exchange_failed",
        error.error_description ?? "the identity provider refused the code",
        error.error,
      );
    }
    const cause = error instanceof oauth.OperationProcessingError ? error.cause : undefined;
    if (cause instanceof Response && cause.status >= 500) throw unavailable("token", error);
    // oauth4webapi's messages name the failed check (a claim, a status); never a token.
    throw new SignInError("exchange_failed", error instanceof Error ? error.message : "failed");
  }
}
