import createOpenApiClient, {
  type Client,
  type FetchResponse,
  type MaybeOptionalInit,
} from "openapi-fetch";
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from "openapi-typescript-helpers";
import { ApiError } from "./api-error.js";
import type { paths } from "./generated/openapi.js";
import { type RetryOptions, retryingFetch } from "./retry.js";

export interface ClientOptions {
  /** The service's origin, e.g. `https://risk.example.com`. */
  baseUrl: string;
  /**
   * An API key (`x-api-key`). Optional: a browser signed in to the console authenticates with
   * its session cookie and the `headers` below instead.
   */
  apiKey?: string;
  /**
   * Headers added to every request, read again for each one (a CSRF token from a cookie, a mode
   * switch the user flips): an object, or a function returning one. A header the call sets
   * itself wins.
   */
  headers?: HeadersProvider;
  /** The Fetch `credentials` mode, e.g. `"same-origin"` to send the console's session cookie. */
  credentials?: "omit" | "same-origin" | "include";
  /** A `fetch` to send with: a Worker's service binding, a test double. Default: global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of 429/503 for requests safe to repeat (see `isSafeToRepeat`). */
  retry?: RetryOptions;
}

/** Extra request headers, fixed or computed per request. */
export type HeadersProvider =
  | Record<string, string>
  | (() => Record<string, string> | Promise<Record<string, string>>);

type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/** A successful call: the typed body, and the response for its headers. */
export interface Success<Data> {
  data: Data;
  response: Response;
}

/** The operation at a path and method, in the shape openapi-fetch's response types take. */
type Operation<Path extends keyof paths, M extends HttpMethod> = paths[Path][M &
  keyof paths[Path]] extends infer O extends Record<string | number, unknown>
  ? O
  : never;

/** openapi-fetch's own method signature, resolving to the success body instead of a result. */
type Method<M extends HttpMethod> = <
  Path extends PathsWithMethod<paths, M>,
  Init extends MaybeOptionalInit<paths[Path], M>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<
  Success<Exclude<FetchResponse<Operation<Path, M>, Init, "application/json">["data"], undefined>>
>;

/** Typed calls for every operation of the service; each throws ApiError on a non-2xx answer. */
export interface AgentRiskClient {
  GET: Method<"get">;
  POST: Method<"post">;
  PUT: Method<"put">;
  PATCH: Method<"patch">;
  DELETE: Method<"delete">;
  /** The underlying openapi-fetch client, for its result-type style (`{data, error}`). */
  raw: Client<paths>;
}

/**
 * A client for the service. Every path, parameter, body and answer is typed from its OpenAPI
 * document; a non-2xx answer throws ApiError (`status`, `error`, `details`), and a 429 or 503
 * to a request safe to repeat is retried first, honouring `Retry-After`.
 */
export function createClient(options: ClientOptions): AgentRiskClient {
  const send = withHeaders(
    options.fetch ?? ((request: Request) => fetch(request)),
    options.headers,
  );
  const raw = createOpenApiClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: options.apiKey === undefined ? {} : { "x-api-key": options.apiKey },
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    fetch: retryingFetch(send, options.retry),
  });
  const call =
    (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE") =>
    async (url: string, init?: Record<string, unknown>) => {
      // The typed signatures above are the contract; here the call is forwarded as is.
      const result = await (raw[method] as (u: string, i?: unknown) => Promise<RawResult>)(
        url,
        init,
      );
      if (!result.response.ok) throw ApiError.of(result.response, result.error);
      return { data: result.data, response: result.response };
    };
  return {
    GET: call("GET") as Method<"get">,
    POST: call("POST") as Method<"post">,
    PUT: call("PUT") as Method<"put">,
    PATCH: call("PATCH") as Method<"patch">,
    DELETE: call("DELETE") as Method<"delete">,
    raw,
  };
}

/**
 * Wraps `send` so each attempt carries the provider's headers, read at that moment (a retry
 * after a token refresh sends the new one); headers already on the request are kept.
 */
function withHeaders(
  send: (request: Request) => Promise<Response>,
  provider: HeadersProvider | undefined,
): (request: Request) => Promise<Response> {
  if (provider === undefined) return send;
  return async (request) => {
    const extra = typeof provider === "function" ? await provider() : provider;
    const headers = new Headers(request.headers);
    for (const [name, value] of Object.entries(extra)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    return send(new Request(request, { headers }));
  };
}

interface RawResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}
