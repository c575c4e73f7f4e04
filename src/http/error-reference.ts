import { configuredOrigin, type Env } from "../env";
import {
  type ApiError,
  type ErrorBody,
  type ErrorCode,
  errorMessages,
  errorStatus,
} from "../errors";

/**
 * The errors as the served reference (`/docs`) shows them: a section of the OpenAPI document's
 * `info.description` with one heading per code, which Scalar renders with an anchor each
 * (`#description/<slug of the heading>`; the heading is the bare code, whose slug is itself).
 * Every error body's `doc_url` points at its code's heading; test/browser/docs.test.ts opens
 * one and finds its target on the page.
 */
const ANCHOR_PREFIX = "description/";

/** More than the message says, for the codes that carry a closed set of reasons. */
const notes: Partial<Record<ErrorCode, string>> = {
  unauthenticated: [
    "`details.reason` says what was wrong with the credential:",
    "",
    "- `missing`: no credential was sent;",
    "- `malformed`: an API key not in the key format (`aar_live_` or `aar_test_` and 43",
    "  characters), an `Authorization` header that is not `Bearer`, or a token that is no JWT;",
    "- `unknown`: a well-formed API key this service does not accept (revoked and never-issued",
    "  keys answer alike), or a session token it did not issue or cannot verify;",
    "- `expired`: a session token past its `exp`.",
  ].join("\n"),
  method_not_allowed:
    "The path exists with other methods: the `Allow` header lists them, and so does " +
    "`details.allowed`. HEAD is allowed wherever GET is.",
  rate_limited:
    "`details` is `{limit, period_seconds, retry_after_seconds}`; the `Retry-After` header " +
    "says the same. `limit: failed_auth`: the client (or the key) had too many credentials " +
    "refused, and is refused before its credential is looked up until the window ends.",
};

/** The markdown of the reference's "Errors" section. */
export function errorReference(): string {
  const entries = (Object.keys(errorStatus) as ErrorCode[]).map((code) => {
    const note = notes[code];
    return [`### ${code}`, "", `\`${errorStatus[code]}\` ${errorMessages[code]}`]
      .concat(note ? ["", note] : [])
      .join("\n");
  });
  return [
    "## Errors",
    "",
    "Every error is one JSON envelope: `error`, the machine-readable code (one of those below); " +
      "`message`, one sentence for a person; `details`, when there is more to say (the failing " +
      "fields, a reason); and `doc_url`, the code's entry on this page. Match on `error`: a " +
      "`message` may be worded better one day. Every answer carries `x-request-id`, which the " +
      "service's logs are searched by.",
    "",
    ...entries.flatMap((entry) => [entry, ""]),
  ].join("\n");
}

/**
 * The reference's entry for `code`, under PUBLIC_BASE_URL; null when that setting is missing
 * or invalid (the body then goes without it rather than failing again).
 */
export function errorDocUrl(env: Env, code: ErrorCode): string | null {
  const origin = configuredOrigin(env);
  return origin === null ? null : `${origin}/docs#${ANCHOR_PREFIX}${code}`;
}

/** The envelope of `error` as the service answers it: its body and its reference's address. */
export function errorBody(env: Env, error: ApiError): ErrorBody {
  const docUrl = errorDocUrl(env, error.code);
  return docUrl === null ? error.body : { ...error.body, doc_url: docUrl };
}
