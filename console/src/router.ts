/**
 * Hash routing: `/console/#/assessments/<id>`. The server serves one page for the whole
 * console, so a reload or a shared link needs no fallback route, and the path never reaches
 * the server's logs.
 */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A page: the values of its pattern's `:name` segments, in order. */
export type Page = ComponentType<{ params: string[] }>;

/** The route path of the current URL, without `#/` and trailing slashes: "" is the Overview. */
export function currentPath(): string {
  return location.hash.replace(/^#\/?/, "").replace(/\/+$/, "");
}

/** The current route path, re-rendering on every hash change. */
export function useRoutePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onChange = () => setPath(currentPath());
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return path;
}

/** The link to a route path, e.g. `href("assessments/" + id)`. */
export function href(path: string): string {
  return `#/${path}`;
}

export function navigate(path: string): void {
  location.hash = `/${path}`;
}

/** A path segment URL-decoded, or undefined for a malformed `%` escape (which would throw). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The first pattern of `routes` that matches `path`, with its parameters (URL-decoded). A
 * parameter with a malformed escape (`#/assessments/%E0%A4`) matches nothing, so the page shown
 * is "not found" rather than a render that throws and blanks the console.
 */
export function match(
  routes: Record<string, Page>,
  path: string,
): { page: Page; params: string[] } | undefined {
  const segments = path === "" ? [] : path.split("/");
  for (const [pattern, page] of Object.entries(routes)) {
    const parts = pattern === "" ? [] : pattern.split("/");
    if (parts.length !== segments.length) continue;
    const params: string[] = [];
    const matches = parts.every((part, i) => {
      const segment = segments[i] ?? "";
      if (part.startsWith(":")) {
        const param = decodeSegment(segment);
        if (param === undefined) return false;
        params.push(param);
        return segment !== "";
      }
      return part === segment;
    });
    if (matches) return { page, params };
  }
  return undefined;
}
