/**
 * Prints a new production key on stdout, ready for `wrangler secret put`:
 *
 * - `npm run -s keygen` (or `keygen signing`): an Ed25519 signing key, the private JWK for
 *   SIGNING_KEY; its public JWK with the RFC 7638 kid goes to stderr (keep it: after a rotation
 *   it goes into SIGNING_KEYS_RETIRED).
 * - `npm run -s keygen signing-es256`: a P-256 signing key, the private JWK for
 *   SIGNING_KEY_ES256 (it signs ES256: AP2 Mandate Receipts); its public JWK with the RFC 7638
 *   kid goes to stderr (after a rotation it goes into SIGNING_KEYS_RETIRED too).
 * - `npm run -s keygen master`: a 256-bit master key for PRINCIPAL_MASTER_KEY, which wraps each
 *   principal's data key.
 * - `npm run -s keygen network`: a 256-bit network key, to put into the NETWORK_KEYS array
 *   (docs/network.md, "Rotating the network key").
 */
import { createHash } from "node:crypto";
import { ed25519Jwk, networkKey, p256Jwk, principalMasterKey } from "./local-keys.ts";

const kind = process.argv[2] ?? "signing";
if (kind === "master") {
  const key = principalMasterKey();
  console.error(`master key (kid ${key.kid})`);
  console.log(JSON.stringify(key));
} else if (kind === "signing") {
  const { privateJwk, publicJwk } = ed25519Jwk();
  const thumbprint = createHash("sha256")
    .update(JSON.stringify({ crv: publicJwk.crv, kty: publicJwk.kty, x: publicJwk.x }))
    .digest("base64url");
  console.error(`public key (kid ${thumbprint}): ${JSON.stringify(publicJwk)}`);
  console.log(JSON.stringify(privateJwk));
} else if (kind === "signing-es256") {
  const { privateJwk, publicJwk } = p256Jwk();
  const thumbprint = createHash("sha256")
    .update(
      JSON.stringify({ crv: publicJwk.crv, kty: publicJwk.kty, x: publicJwk.x, y: publicJwk.y }),
    )
    .digest("base64url");
  console.error(`public key (kid ${thumbprint}): ${JSON.stringify(publicJwk)}`);
  console.log(JSON.stringify(privateJwk));
} else if (kind === "network") {
  const key = networkKey();
  console.error(`network key (kid ${key.kid}): add it to the NETWORK_KEYS array`);
  console.log(JSON.stringify(key));
} else {
  console.error("usage: keygen [signing|signing-es256|master|network]");
  process.exit(2);
}
