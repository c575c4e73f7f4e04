/**
 * What the sign-in routes answer besides redirects: the console's security headers on every
 * response, and a refused sign-in as a small HTML page for a browser (it arrives by navigation)
 * or the usual `{error, details}` for anything else. The page has no script and no style, so
 * the console's Content-Security-Policy holds for it as it is.
 */
import type { Context } from "hono";
import type { ApiError } from "../errors";
import type { AppEnv } from "./context";
import { errorBody } from "./error-reference";

/** The console's policy (docs/console.md): this origin only, no inline code, no framing. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function setConsoleHeaders(headers: Headers): void {
  headers.set("content-security-policy", CONSOLE_CSP);
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "no-referrer");
  // Cookies and sign-in answers are for this browser, this once.
  headers.set("cache-control", "no-store");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function wantsHtml(c: Context): boolean {
  return (c.req.header("accept") ?? "").includes("text/html");
}

/** A refused sign-in or sign-out, as a page or as JSON. */
export function failure(c: Context<AppEnv>, error: ApiError): Response {
  if (!wantsHtml(c)) return c.json(errorBody(c.env, error), error.status);
  const details = error.details as { message?: string } | undefined;
  const message = details?.message ?? "The console could not sign you in.";
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in failed · Agent Risk console</title></head>
<body>
<main>
<h1>Sign-in failed</h1>
<p>${escapeHtml(message)}</p>
<p>Error: <code>${escapeHtml(error.code)}</code></p>
<p><a href="/console/auth/login">Sign in again</a></p>
</main>
</body>
</html>
`;
  return c.html(html, error.status);
}
