import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { publicBaseUrl } from "../env";
import {
  notedKeys,
  TRANSPARENCY_LINKS,
  TRUST_LIST_LIFETIME_MS,
  TRUST_LIST_TYP,
  trustedKeys,
} from "../evidence/trust-list";
import type { AppEnv } from "../http/context";
import { errorResponses, json } from "../http/schemas";
import { PublishedJwk } from "../schemas/key-set";
import { signer } from "../signing/signer";

const TrustList = z
  .object({
    object: z.literal("trust_list"),
    issuer: z.string().openapi({
      description:
        "The service's configured public origin (PUBLIC_BASE_URL, never the request's host): " +
        "the base of every path below",
      example: "https://api.example.com",
    }),
    issued_at: z.string(),
    expires_at: z.string().openapi({
      description: "`issued_at` + 24 h: a relying party refuses the list after this time",
    }),
    keys: z.array(
      z.object({
        kid: z.string(),
        jwk: PublishedJwk,
        status: z.enum(["current", "retired"]),
        valid_from: z.string().nullable(),
        valid_until: z.string().nullable(),
        purposes: z.array(z.string()).openapi({ description: "The JWS `typ` values it signs" }),
      }),
    ),
    transparency: z
      .object({
        key_set: z.string(),
        logs: z.string(),
        checkpoints: z.string(),
        consistency: z.string(),
        proofs: z.string(),
        verify_artifact: z.string(),
      })
      .openapi({ description: "Paths relative to `issuer`; `{…}` are templates" }),
    jws: z.string().openapi({
      description:
        "Compact JWS (EdDSA, `typ` trust-list+jwt) whose payload is this object without `jws`",
    }),
  })
  .openapi("TrustList");

const CACHE_CONTROL = "public, max-age=300";

const route = createRoute({
  method: "get",
  path: "/v1/trust-list",
  tags: ["Public"],
  summary: "The service's signing keys with their validity windows, and where to verify, signed",
  responses: {
    200: {
      ...json(TrustList, "The signed trust list"),
      headers: z.object({ "cache-control": z.literal(CACHE_CONTROL) }),
    },
    ...errorResponses(429, 503),
  },
});

export function registerTrustList(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const issuer = publicBaseUrl(c.env);
    const key = await signer(c.env);
    // signing_keys has no org: the application role may read it, and only the sweep writes it.
    const noted = await notedKeys(c.env);
    const issued = new Date();
    const list = {
      object: "trust_list" as const,
      issuer,
      issued_at: issued.toISOString(),
      expires_at: new Date(issued.getTime() + TRUST_LIST_LIFETIME_MS).toISOString(),
      keys: trustedKeys(key, noted),
      transparency: { ...TRANSPARENCY_LINKS },
    };
    const jws = await key.signClaims(list, TRUST_LIST_TYP);
    return c.json({ ...list, jws }, 200, { "cache-control": CACHE_CONTROL });
  });
}
