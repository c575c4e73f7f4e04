import { z } from "@hono/zod-openapi";

const kid = z.string().openapi({ description: "RFC 7638 thumbprint; matches the JWS header" });

/** An Ed25519 key: verifies what the service signs EdDSA (the Risk Payload, webhooks, …). */
export const Ed25519Jwk = z.object({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().openapi({ description: "Public key, base64url" }),
  kid,
  alg: z.literal("EdDSA"),
  use: z.literal("sig"),
});

/** A P-256 key: verifies what the service signs ES256 (AP2 Mandate Receipts, …). */
export const P256Jwk = z.object({
  kty: z.literal("EC"),
  crv: z.literal("P-256"),
  x: z.string().openapi({ description: "Public key's x coordinate, base64url" }),
  y: z.string().openapi({ description: "Public key's y coordinate, base64url" }),
  kid,
  alg: z.literal("ES256"),
  use: z.literal("sig"),
});

/** A key of the service's key set; its `alg` says which signatures it verifies. */
export const PublishedJwk = z.discriminatedUnion("alg", [Ed25519Jwk, P256Jwk]).openapi({
  description:
    "`alg` EdDSA (Ed25519) verifies the Risk Payload, webhooks, trust lists and evidence; " +
    "`alg` ES256 (P-256) verifies AP2 Mandate Receipts (docs/credentials.md)",
});
