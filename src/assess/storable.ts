// What a mandate may hold to be hashed and stored faithfully, checked by one walk over it.
import { hasLoneSurrogate } from "../schemas/common";

/** One problem with a request, at a JSON path: an entry of a 400's `details`. */
export interface IssueDetail {
  path: string;
  message: string;
}

/** Deeper than any real mandate; bounds the recursion of every walk over it. */
const MAX_DEPTH = 32;

/**
 * The first place a mandate holds what cannot be hashed or stored faithfully: JSON text may
 * carry NUL and lone surrogates (Postgres `jsonb` refuses both) and numbers too large for a
 * double (they parse as Infinity, which has no JSON form).
 */
export function unstorableAt(value: unknown, path: string, depth: number): IssueDetail | null {
  const found = firstUnstorable(value, depth);
  return found && { path: [path, ...found.keys].join("."), message: found.message };
}

// The walk names no path until it finds something: every request's mandate is walked whole, and
// building a path string per value showed in the assess profile.
function firstUnstorable(
  value: unknown,
  depth: number,
): { keys: string[]; message: string } | null {
  if (depth > MAX_DEPTH) return { keys: [], message: `nested deeper than ${MAX_DEPTH} levels` };
  if (typeof value === "string") {
    return isStorableText(value) ? null : { keys: [], message: "contains NUL or a lone surrogate" };
  }
  if (typeof value === "number") {
    return Number.isFinite(value) ? null : { keys: [], message: "number out of range" };
  }
  if (typeof value !== "object" || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstUnstorable(value[i], depth + 1);
      if (found) return { ...found, keys: [String(i), ...found.keys] };
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (!isStorableText(key))
      return { keys: [], message: "a key contains NUL or a lone surrogate" };
    const found = firstUnstorable((value as Record<string, unknown>)[key], depth + 1);
    if (found) return { ...found, keys: [key, ...found.keys] };
  }
  return null;
}

function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && !hasLoneSurrogate(text);
}
