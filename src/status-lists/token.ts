/**
 * A Status List Token in JWT format (draft-ietf-oauth-status-list §5.1), read and verified as a
 * Relying Party does (§8.3 steps 3 and 4): `typ` `statuslist+jwt`, the required claims, `sub`
 * equal to the referenced `uri`, an unexpired `exp`, a signature under a trusted key.
 */
import { type Claims, isClaims, jsonOfBase64url, own } from "../ap2-credentials/claims";
import {
  isPinned,
  type PinnedKey,
  pinKey,
  thumbprint,
  verifiesUnder,
} from "../ap2-credentials/keys";
import { isStatusBits, type StatusBits } from "./encoding";

export const STATUS_LIST_TYP = "statuslist+jwt";
export const STATUS_LIST_MEDIA_TYPE = "application/statuslist+jwt";

/** A token whose claims were read, not yet trusted. */
export interface StatusListToken {
  jws: string;
  header: Claims;
  sub: string;
  /** Unix seconds. */
  iat: number;
  exp: number | null;
  /** Seconds; null when the token has none. */
  ttl: number | null;
  bits: StatusBits;
  lst: string;
}

export class StatusListRefused extends Error {
  override name = "StatusListRefused";
}

function refused(message: string): never {
  throw new StatusListRefused(message);
}

const number = (value: unknown) => typeof value === "number" && Number.isFinite(value);

/** RFC 7515 §4.1.9: `typ` may drop the `application/` prefix; media types ignore case. */
function isStatusListTyp(typ: unknown): boolean {
  if (typeof typ !== "string") return false;
  const lower = typ.toLowerCase();
  return lower === STATUS_LIST_TYP || lower === STATUS_LIST_MEDIA_TYPE;
}

/** The token's header and claims (§5.1), or StatusListRefused for any missing or ill-typed one. */
export function readStatusListToken(jws: string): StatusListToken {
  const parts = jws.trim().split(".");
  if (parts.length !== 3) refused("not a compact JWS");
  let header: unknown;
  let claims: unknown;
  try {
    header = jsonOfBase64url(parts[0] as string);
    claims = jsonOfBase64url(parts[1] as string);
  } catch {
    refused("the header or payload is not base64url JSON");
  }
  if (!isClaims(header) || !isClaims(claims)) refused("the header or payload is not an object");
  if (!isStatusListTyp(own(header, "typ"))) refused(`typ is not ${STATUS_LIST_TYP}`);
  const sub = own(claims, "sub");
  const iat = own(claims, "iat");
  const exp = own(claims, "exp");
  const ttl = own(claims, "ttl");
  const list = own(claims, "status_list");
  if (typeof sub !== "string") refused("sub is missing");
  if (!number(iat)) refused("iat is missing");
  if (exp !== undefined && !number(exp)) refused("exp is not a number");
  if (ttl !== undefined && !(number(ttl) && (ttl as number) > 0)) {
    refused("ttl is not a positive number");
  }
  if (!isClaims(list)) refused("status_list is missing");
  const bits = own(list, "bits");
  const lst = own(list, "lst");
  if (!isStatusBits(bits)) refused("status_list.bits is not 1, 2, 4 or 8");
  if (typeof lst !== "string") refused("status_list.lst is missing");
  return {
    jws: parts.join("."),
    header,
    sub,
    iat: iat as number,
    exp: (exp as number | undefined) ?? null,
    ttl: (ttl as number | undefined) ?? null,
    bits,
    lst,
  };
}

/**
 * The trusted key that verifies the token, or null. A header `kid` names the keys whose JWK
 * `kid` equals it (or, without one, whose RFC 7638 thumbprint does), as a credential's root is
 * matched (§11.3: the Status Issuer is the credential's issuer); without `kid` every key is tried.
 * The algorithm is the key's, never the header's choice alone.
 */
export async function verifyingKey(
  token: StatusListToken,
  keys: readonly { kid?: string; jwk: unknown }[],
): Promise<PinnedKey | null> {
  const kid = own(token.header, "kid");
  for (const candidate of keys) {
    const key = pinKey(candidate.jwk);
    if (!isPinned(key)) continue;
    const named =
      kid === undefined ||
      candidate.kid === kid ||
      (candidate.kid === undefined && thumbprint(key) === kid);
    if (named && (await verifiesUnder(token.jws, token.header, key))) return key;
  }
  return null;
}
