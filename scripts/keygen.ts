/**
 * Prints a new Ed25519 signing key for production: the private JWK (for `wrangler secret put
 * SIGNING_KEY`) on stdout, and its public JWK with the RFC 7638 kid on stderr (keep it: after a
 * rotation it goes into SIGNING_KEYS_RETIRED).
 */
import { createHash } from "node:crypto";
import { ed25519Jwk } from "./local-keys.ts";

const { privateJwk, publicJwk } = ed25519Jwk();
const thumbprint = createHash("sha256")
  .update(JSON.stringify({ crv: publicJwk.crv, kty: publicJwk.kty, x: publicJwk.x }))
  .digest("base64url");
console.error(`public key (kid ${thumbprint}): ${JSON.stringify(publicJwk)}`);
console.log(JSON.stringify(privateJwk));
