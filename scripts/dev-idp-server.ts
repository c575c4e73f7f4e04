/**
 * The local identity provider's HTTP side: a small OpenID Connect provider on loopback that the
 * console signs in through under `npm run dev`, exactly as it does against a real provider in
 * production (docs/console.md, "Locally"). The Worker tests start one too, to walk the flow.
 *
 *   GET  /.well-known/openid-configuration   discovery (the issuer is this server's origin)
 *   GET  /jwks.json                          the public key set (the Worker gets it inline too)
 *   GET  /authorize                          a page: "User name" and "Sign in"
 *   POST /authorize                          issues a one-time code, 303 to the redirect_uri
 *   POST /token                              code + PKCE verifier → ID token (EdDSA)
 *
 * One public client (no secret, PKCE S256 required), registered redirect URIs only. Codes are
 * single-use and live a minute. Anyone who can reach the port can sign in as anyone: it listens
 * on 127.0.0.1 and exists for development.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { importJWK, type JWK, SignJWT } from "jose";
import { LOCAL_USER_NAME_RULE, type LocalUserClaims, localUserClaims } from "./local-user.ts";

export interface LocalIdpServerOptions {
  host: string;
  /** The port to listen on; 0 for any free one. */
  port: number;
  /** When `port` is taken, listen on a free one instead of failing. */
  anyPortIfTaken?: boolean;
  /** The Ed25519 private JWK (with `kid`) that signs ID tokens, and the published key set. */
  privateJwk: JWK & { kid: string };
  jwks: { keys: JWK[] };
  /** The one client: the console (IDP_CLIENT_ID, by default IDP_AUDIENCE). */
  clientId: string;
  /** The exact redirect URIs the client registered. */
  redirectUris: string[];
}

export interface LocalIdpServer {
  /** The issuer: `http://<host>:<port>`. */
  url: string;
  close: () => Promise<void>;
}

/** How long a code may wait for its exchange. */
const CODE_TTL_MS = 60_000;
/** The ID token's lifetime: the console session's. */
const ID_TOKEN_TTL_S = 3600;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** The request parameters the form carries through to its POST. */
const CARRIED = [
  "client_id",
  "redirect_uri",
  "response_type",
  "scope",
  "state",
  "nonce",
  "code_challenge",
  "code_challenge_method",
] as const;

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | undefined;
  user: LocalUserClaims;
  expiresAt: number;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

async function readBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

function page(res: ServerResponse, status: number, body: string, formTarget?: string): void {
  // The form posts here and is then redirected to the console: form-action must allow both.
  const formAction = formTarget ? `'self' ${formTarget}` : "'self'";
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; form-action ${formAction}; base-uri 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  res.end(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Local identity provider</title></head>
<body>
<main>
${body}
</main>
</body>
</html>
`);
}

/** What is wrong with an authorization request, or null; checked on the GET and the POST. */
function authorizeProblem(params: URLSearchParams, options: LocalIdpServerOptions): string | null {
  if (params.get("client_id") !== options.clientId) return "unknown client_id";
  if (!options.redirectUris.includes(params.get("redirect_uri") ?? "")) {
    return "redirect_uri is not registered for this client";
  }
  if (params.get("response_type") !== "code") return "response_type must be code";
  if (!(params.get("scope") ?? "").split(" ").includes("openid"))
    return "scope must include openid";
  if (params.get("code_challenge_method") !== "S256") return "code_challenge_method must be S256";
  if (!CHALLENGE.test(params.get("code_challenge") ?? "")) {
    return "code_challenge must be a base64url SHA-256";
  }
  if (!params.get("state")) return "state is required";
  return null;
}

function signInForm(params: URLSearchParams, error?: string): string {
  const hidden = CARRIED.filter((name) => params.get(name) !== null)
    .map(
      (name) =>
        `<input type="hidden" name="${name}" value="${escapeHtml(params.get(name) ?? "")}">`,
    )
    .join("\n");
  return `<h1>Local identity provider</h1>
<p>Development only: type any user name to sign in as that user.</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/authorize">
${hidden}
<label for="username">User name</label>
<input id="username" name="username" type="text" required autofocus autocomplete="username" pattern="[A-Za-z0-9._\\-]{1,64}">
<button type="submit">Sign in</button>
</form>`;
}

function pkceMatches(verifier: string, challenge: string): boolean {
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

export async function startLocalIdpServer(options: LocalIdpServerOptions): Promise<LocalIdpServer> {
  const codes = new Map<string, PendingCode>();
  const key = await importJWK(options.privateJwk, "EdDSA");
  let issuer = "";

  async function authorize(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const params = req.method === "POST" ? await readBody(req) : url.searchParams;
    const problem = authorizeProblem(params, options);
    if (problem) {
      // Never redirect an unvalidated request: show the problem instead (RFC 6749, 4.1.2.1).
      page(res, 400, `<h1>Invalid sign-in request</h1>\n<p>${escapeHtml(problem)}</p>`);
      return;
    }
    const redirectUri = params.get("redirect_uri") as string;
    const target = new URL(redirectUri).origin;
    if (req.method !== "POST") {
      page(res, 200, signInForm(params), target);
      return;
    }
    const user = localUserClaims(params.get("username") ?? "");
    if (!user) {
      page(res, 400, signInForm(params, LOCAL_USER_NAME_RULE), target);
      return;
    }
    const now = Date.now();
    for (const [code, pending] of codes) if (pending.expiresAt < now) codes.delete(code);
    const code = randomBytes(32).toString("base64url");
    codes.set(code, {
      clientId: options.clientId,
      redirectUri,
      challenge: params.get("code_challenge") as string,
      nonce: params.get("nonce") ?? undefined,
      user,
      expiresAt: now + CODE_TTL_MS,
    });
    const back = new URL(redirectUri);
    back.searchParams.set("code", code);
    back.searchParams.set("state", params.get("state") as string);
    res.writeHead(303, { location: back.href, "cache-control": "no-store" }).end();
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body.get("grant_type") !== "authorization_code") {
      sendJson(res, 400, { error: "unsupported_grant_type" });
      return;
    }
    const code = body.get("code") ?? "";
    const pending = codes.get(code);
    codes.delete(code); // one use, whatever the outcome
    const refuse = (error: string, description: string) =>
      sendJson(res, 400, { error, error_description: description });
    if (!pending || pending.expiresAt < Date.now()) {
      return refuse("invalid_grant", "unknown, used or expired code");
    }
    if (body.get("client_id") !== pending.clientId) {
      return refuse("invalid_client", "client_id does not match the code's");
    }
    if (body.get("redirect_uri") !== pending.redirectUri) {
      return refuse("invalid_grant", "redirect_uri does not match the authorization request's");
    }
    if (!pkceMatches(body.get("code_verifier") ?? "", pending.challenge)) {
      return refuse("invalid_grant", "code_verifier does not match the code_challenge");
    }
    const now = Math.floor(Date.now() / 1000);
    // The same claims as `npm run token` mints for the name (scripts/local-user.ts).
    const { sub, ...claims } = pending.user;
    const idToken = await new SignJWT({
      ...claims,
      auth_time: now,
      ...(pending.nonce ? { nonce: pending.nonce } : {}),
    })
      .setProtectedHeader({ alg: "EdDSA", kid: options.privateJwk.kid, typ: "JWT" })
      .setIssuer(issuer)
      .setAudience(pending.clientId)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + ID_TOKEN_TTL_S)
      .sign(key);
    sendJson(res, 200, {
      access_token: randomBytes(32).toString("base64url"),
      token_type: "Bearer",
      expires_in: ID_TOKEN_TTL_S,
      scope: "openid email",
      id_token: idToken,
    });
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    try {
      if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
        sendJson(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks.json`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["EdDSA"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
          scopes_supported: ["openid", "email"],
          claims_supported: ["sub", "email", "email_verified", "nonce", "auth_time"],
        });
      } else if (req.method === "GET" && url.pathname === "/jwks.json") {
        sendJson(res, 200, options.jwks);
      } else if (url.pathname === "/authorize" && (req.method === "GET" || req.method === "POST")) {
        await authorize(req, res, url);
      } else if (url.pathname === "/token" && req.method === "POST") {
        await token(req, res);
      } else {
        sendJson(res, 404, { error: "not_found" });
      }
    } catch (error) {
      if (!res.headersSent) {
        sendJson(res, 400, {
          error: "invalid_request",
          error_description: error instanceof Error ? error.message : String(error),
        });
      }
    }
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: options.host, port, exclusive: true }, () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await listen(options.port);
  } catch (error) {
    const taken = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
    if (!taken || !options.anyPortIfTaken) throw error;
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  issuer = `http://${options.host}:${port}`;
  return {
    url: issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
