import { env, SELF } from "cloudflare:test";
import { importJWK, type JWK, SignJWT } from "jose";
import { keyScopes, type Scope } from "../../../src/auth/scope-names";
import type {
  CallOptions,
  Documented,
  ErrorBody,
  Method,
  RouteOf,
  SuccessBody,
} from "./routes-typed";

export type { RequestBody } from "./routes-typed";

export const BASE = "https://risk.test";

/** What every call may carry besides its route: the credential and extra headers. */
export interface Call {
  method?: string;
  body?: unknown;
  key?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** An answer as the tests read it: `json` is the route's 2xx body, `error` the error envelope. */
export interface Reply<Body> {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, typed as the route's success body (read it after the status). */
  json: Body;
  /** The same parsed body, typed as the error envelope every 4xx and 5xx carries. */
  error: ErrorBody;
  text: string;
}

/**
 * One HTTP call into the Worker, typed by the route the OpenAPI document declares for this path
 * and method (test/worker/support/routes-typed.ts): the body must match the request schema,
 * `json` is the 2xx body, `error` the error envelope. A path or method the document does not
 * describe fails to compile: use `callRaw`. A test that sends a body the schema would refuse
 * says so with `raw: true`.
 */
export function call<P extends string, M extends Method = "GET">(
  path: Documented<P, M>,
  options?: CallOptions<RouteOf<P, M>, M>,
): Promise<Reply<SuccessBody<RouteOf<P, M>, M>>> {
  return send(path as string, (options ?? {}) as Call);
}

/**
 * A call the OpenAPI document does not describe (an undocumented route or method, or a path
 * only known at run time): the body goes as given and `json` is untyped.
 */
export function callRaw(path: string, options: Call = {}): Promise<Reply<any>> {
  return send(path, options);
}

async function send(
  path: string,
  { method = "GET", body, key, token, headers = {} }: Call,
): Promise<Reply<any>> {
  const init: RequestInit = { method, headers: { ...headers } };
  const h = init.headers as Record<string, string>;
  if (key) h["x-api-key"] = key;
  if (token) h.authorization = `Bearer ${token}`;
  if (body !== undefined) {
    h["content-type"] ??= "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await SELF.fetch(`${BASE}${path}`, init);
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, error: json, text };
}

let userCounter = 0;

/** A session token from the local identity provider, as the console would hold. */
export async function sessionToken(
  claims: { sub?: string; email?: string } = {},
  options: { expiresIn?: string; issuer?: string; audience?: string; privateJwk?: JWK } = {},
): Promise<string> {
  const jwk = options.privateJwk ?? (JSON.parse(env.TEST_IDP_PRIVATE_JWK) as JWK);
  const key = await importJWK(jwk, "EdDSA");
  const sub = claims.sub ?? `user-${crypto.randomUUID()}-${++userCounter}`;
  return new SignJWT({ ...(claims.email ? { email: claims.email } : {}) })
    .setProtectedHeader({ alg: "EdDSA", kid: jwk.kid })
    .setSubject(sub)
    .setIssuer(options.issuer ?? (env.IDP_ISSUER as string))
    .setAudience(options.audience ?? (env.IDP_AUDIENCE as string))
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "10m")
    .sign(key);
}

/** Every scope an API key may hold (the session-only `keys:*` are not among them). */
export const ALL_KEY_SCOPES: Scope[] = keyScopes("live");

export interface TestOrg {
  id: string;
  token: string;
  subject: string;
  /** Creates an API key in this org with the given scopes. */
  key(scopes?: Scope[], mode?: "live" | "test"): Promise<{ id: string; key: string }>;
}

/** Signs a new user up: a session, an org, and a way to mint keys. */
export async function newOrg(): Promise<TestOrg> {
  const subject = `user-${crypto.randomUUID()}`;
  const token = await sessionToken({ sub: subject, email: `${subject}@example.com` });
  const org = await call("/v1/orgs", { method: "POST", token });
  if (org.status !== 201) throw new Error(`org creation failed: ${org.status} ${org.text}`);
  return {
    id: org.json.id,
    token,
    subject,
    async key(scopes = ALL_KEY_SCOPES, mode = "live") {
      const created = await call("/v1/api-keys", {
        method: "POST",
        token,
        body: { name: "test", scopes, mode },
      });
      if (created.status !== 201) throw new Error(`key creation failed: ${created.text}`);
      return { id: created.json.id, key: created.json.key };
    },
  };
}
