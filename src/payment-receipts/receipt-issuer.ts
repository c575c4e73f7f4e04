// Pure, with no Worker types: the Worker and the Node tests both read it.
/**
 * Whether an issuer is the one a receipt's `iss` names: its id, its name, or the origin or host
 * of its JWKS URL (where a PSP that publishes its keys serves them: `iss`
 * `https://psp.example` or `psp.example`, as AP2's samples set a PISP's `domain_name`).
 */
export function namesIssuer(
  row: { id: string; name: string; jwksUrl: string | null },
  iss: string,
) {
  if (iss === row.id || iss === row.name) return true;
  if (row.jwksUrl === null) return false;
  const url = new URL(row.jwksUrl);
  return iss === url.origin || iss === url.host;
}
