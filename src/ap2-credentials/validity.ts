/**
 * Time windows, checked on every hop's JWT claims and on every hop's mandate, with one skew:
 *
 * - `now > exp + skew`: `expired`;
 * - `iat > now + skew` or `nbf > now + skew`: `not_yet_valid`;
 * - `exp`, `iat` or `nbf` present but not a finite number: `delegation_broken` (the hop's window
 *   cannot be read, so the delegation it makes cannot be established).
 *
 * There is no maximum age: a key-binding hop's `iat` is its signing time, and a mandate's
 * lifetime is its `exp`.
 */
import { type Claims, finiteNumber, own } from "./claims";
import { refuse } from "./failures";

export const DEFAULT_SKEW_SECONDS = 300;

function window(claims: Claims, where: string, now: number, skew: number): void {
  const [exp, iat, nbf] = ["exp", "iat", "nbf"].map((name) => {
    const value = own(claims, name);
    if (value !== undefined && finiteNumber(value) === undefined) {
      refuse("delegation_broken", `${where}: ${name} is not a number`);
    }
    return value as number | undefined;
  });
  if (exp !== undefined && now > exp + skew) refuse("expired", `${where} expired at ${exp}`);
  if (iat !== undefined && iat > now + skew) {
    refuse("not_yet_valid", `${where} was issued in the future (iat ${iat})`);
  }
  if (nbf !== undefined && nbf > now + skew) {
    refuse("not_yet_valid", `${where} is not valid before ${nbf}`);
  }
}

/** Root first; within a hop, its JWT claims, then its mandate. */
export function checkValidity(
  hops: readonly { claims: Claims; mandate: Claims }[],
  now: number,
  skew: number,
): void {
  hops.forEach((hop, i) => {
    window(hop.claims, `hop ${i}`, now, skew);
    window(hop.mandate, `hop ${i}'s mandate`, now, skew);
  });
}

/**
 * The window every hop's claims and mandate leave, as `checkValidity` reads them: the latest
 * `iat` or `nbf` (null without one) and the earliest `exp` (null without one), unix seconds,
 * before any skew. For a chain whose windows could be read (`checkValidity` passed).
 */
export function validityWindow(hops: readonly { claims: Claims; mandate: Claims }[]): {
  notBefore: number | null;
  notAfter: number | null;
} {
  let notBefore: number | null = null;
  let notAfter: number | null = null;
  for (const claims of hops.flatMap((hop) => [hop.claims, hop.mandate])) {
    for (const name of ["iat", "nbf"]) {
      const at = finiteNumber(own(claims, name));
      if (at !== undefined) notBefore = Math.max(notBefore ?? at, at);
    }
    const exp = finiteNumber(own(claims, "exp"));
    if (exp !== undefined) notAfter = Math.min(notAfter ?? exp, exp);
  }
  return { notBefore, notAfter };
}
