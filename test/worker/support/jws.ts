import { fromBase64url } from "#audit/encoding";

/** Verifies a compact JWS with WebCrypto's Ed25519 against a key set; returns the payload. */
export async function verifyJws(jws: string, keys: { kid: string; x: string }[]) {
  const [h, p, s] = jws.split(".") as [string, string, string];
  const header = JSON.parse(new TextDecoder().decode(fromBase64url(h)));
  const jwk = keys.find((k) => k.kid === header.kid);
  if (!jwk) return { valid: false, header, payload: "" };
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x },
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const valid = await crypto.subtle.verify(
    { name: "Ed25519" },
    key,
    fromBase64url(s),
    new TextEncoder().encode(`${h}.${p}`),
  );
  return { valid, header, payload: new TextDecoder().decode(fromBase64url(p)) };
}
