/**
 * What "strict" means for the pages' Content-Security-Policy (public/_headers; docs/reference.md),
 * checked the same way by the Worker tests (the header) and the browser tests (what Chromium got).
 */

/** The policy's directives, by name, each with its source list. */
export function parseCsp(header: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of header.split(";")) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), sources);
  }
  return directives;
}

/** Sources a directive may name: this origin, or nothing. */
const OWN_ORIGIN = new Set(["'self'", "'none'"]);

/**
 * Every way `header` is weaker than "this origin only": an empty list is a strict policy. Inline
 * styles are the one allowance (Scalar injects its stylesheet at run time); scripts must come
 * from this origin alone: no inline, no eval, no other host, no data: or blob: URLs.
 */
export function cspWeaknesses(header: string | null): string[] {
  if (!header) return ["no Content-Security-Policy header"];
  const policy = parseCsp(header);
  const weaknesses: string[] = [];
  for (const [name, sources] of policy) {
    for (const source of sources) {
      const allowed =
        OWN_ORIGIN.has(source) || (name === "style-src" && source === "'unsafe-inline'");
      if (!allowed) weaknesses.push(`${name} allows ${source}`);
    }
  }
  const defaultSrc = policy.get("default-src");
  if (!defaultSrc) weaknesses.push("no default-src: every unnamed fetch is unrestricted");
  // script-src, else default-src: 'self', or 'none' for a page that runs no script at all.
  const scripts = (policy.get("script-src") ?? defaultSrc)?.join(" ");
  if (scripts !== "'self'" && scripts !== "'none'") {
    weaknesses.push("scripts are not limited to 'self'");
  }
  for (const name of ["base-uri", "frame-ancestors", "form-action"]) {
    // Not covered by default-src: each must be named.
    if (!policy.has(name)) weaknesses.push(`no ${name}`);
  }
  return weaknesses;
}
