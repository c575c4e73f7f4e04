/**
 * Selective disclosure (RFC 9901 §7.1) as AP2 hops use it: a hop's signed payload plus its
 * disclosures resolve into the payload the holder chose to reveal.
 *
 * Written here rather than taken from @sd-jwt/decode and @sd-jwt/utils (0.19), which fit
 * neither half of the job: their `unpack`/`getClaims` ignore unreferenced disclosures, let a
 * disclosed name overwrite a plain claim, resolve a digest that appears twice twice, and assign
 * names by plain assignment (`__proto__`); their `Disclosure.fromEncode` decodes through
 * js-base64, which drops characters outside the alphabet and turns invalid UTF-8 into U+FFFD.
 * RFC 9901 requires rejecting each of those. Hashing reuses the service's synchronous SHA-256.
 *
 * Fail-closed rules (each `disclosure_invalid`): a disclosure that is not base64url of a UTF-8
 * JSON array `[salt, value]` or `[salt, name, value]`; the same disclosure twice; a digest that
 * appears twice in the payload (directly or through disclosures); a disclosure no digest
 * references; an object-property disclosure used as an array element or the reverse; a disclosed
 * name that is `_sd`, `...` or already a claim of its object; `_sd_alg` other than `sha-256`;
 * nesting deeper than MAX_DEPTH. A digest without a disclosure is a withheld claim or a decoy:
 * it is omitted.
 */
import { sha256 } from "#audit/digest";
import { base64url, utf8 } from "#audit/encoding";
import { type Claims, has, isClaims, jsonOfBase64url, own, put } from "./claims";
import { refuse } from "./failures";

/** Deeper than any mandate (about 6 levels); bounds the recursion of every later reader too. */
export const MAX_DEPTH = 32;

const SD = "_sd";
const ARRAY_DIGEST = "...";

interface Disclosure {
  index: number;
  name: string | undefined;
  value: unknown;
  used: boolean;
}

/**
 * base64url(SHA-256(ASCII of `text` as received)): a disclosure's digest, the `sd_hash` and
 * `issuer_jwt_hash` bindings, and the chain's references alike.
 */
export function textDigest(text: string): string {
  return base64url(sha256(utf8(text)));
}

function invalid(message: string): never {
  refuse("disclosure_invalid", message);
}

function decode(text: string, index: number): Disclosure {
  let array: unknown;
  try {
    array = jsonOfBase64url(text);
  } catch {
    invalid(`disclosure ${index} is not base64url of UTF-8 JSON`);
  }
  if (!Array.isArray(array) || (array.length !== 2 && array.length !== 3)) {
    invalid(`disclosure ${index} is not a JSON array of 2 or 3 elements`);
  }
  if (typeof array[0] !== "string") invalid(`disclosure ${index} has no string salt`);
  if (array.length === 2) return { index, name: undefined, value: array[1], used: false };
  const name: unknown = array[1];
  if (typeof name !== "string" || name === SD || name === ARRAY_DIGEST) {
    invalid(`disclosure ${index} has no usable claim name`);
  }
  return { index, name, value: array[2], used: false };
}

/**
 * The payload with every referenced disclosure in place, `_sd` digests and `_sd_alg` removed,
 * and the indexes of the disclosures nothing referenced (which the caller must refuse, once it
 * has read what it can). Never mutates `payload`. Throws a `disclosure_invalid` Refusal.
 */
export function resolveDisclosures(
  payload: Claims,
  texts: readonly string[],
): { claims: Claims; unreferenced: number[] } {
  const alg = own(payload, "_sd_alg");
  if (alg !== undefined && alg !== "sha-256") invalid("_sd_alg must be sha-256");

  const byDigest = new Map<string, Disclosure>();
  texts.forEach((text, index) => {
    const digest = textDigest(text);
    if (byDigest.has(digest)) invalid(`disclosure ${index} is sent twice`);
    byDigest.set(digest, decode(text, index));
  });
  const seen = new Set<string>();
  const take = (digest: unknown, asElement: boolean): Disclosure | undefined => {
    if (typeof digest !== "string") invalid("a digest is not a string");
    if (seen.has(digest)) invalid("a digest appears twice in the payload");
    seen.add(digest);
    const found = byDigest.get(digest);
    if (found && (found.name === undefined) !== asElement) {
      invalid(`disclosure ${found.index} is used as the wrong kind (element or property)`);
    }
    if (found) found.used = true;
    return found;
  };

  const walk = (value: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) invalid(`claims are nested deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const element of value) {
        if (isClaims(element) && has(element, ARRAY_DIGEST)) {
          if (Object.keys(element).length !== 1)
            invalid('a {"...": digest} element has other keys');
          const found = take(element[ARRAY_DIGEST], true);
          if (found) out.push(walk(found.value, depth + 1));
        } else {
          out.push(walk(element, depth + 1));
        }
      }
      return out;
    }
    if (!isClaims(value)) return value;
    const out: Claims = {};
    for (const key of Object.keys(value)) {
      if (key !== SD) put(out, key, walk(value[key], depth + 1));
    }
    const digests = own(value, SD);
    if (digests === undefined) return out;
    if (!Array.isArray(digests)) invalid("_sd is not an array");
    for (const digest of digests) {
      const found = take(digest, false);
      if (!found) continue;
      const name = found.name as string;
      if (has(out, name)) invalid(`disclosed claim "${name}" collides with another claim`);
      put(out, name, walk(found.value, depth + 1));
    }
    return out;
  };

  const claims = walk(payload, 0) as Claims;
  delete claims._sd_alg;
  const unreferenced = [...byDigest.values()].filter((d) => !d.used).map((d) => d.index);
  return { claims, unreferenced };
}
