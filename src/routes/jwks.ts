import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { clientIp, enforceRateLimit } from "../http/rate-limit";
import { errorResponses, json } from "../http/schemas";
import { PublishedJwk } from "../schemas/key-set";
import { signer } from "../signing/signer";

const KeySet = z.object({ keys: z.array(PublishedJwk) }).openapi("KeySet");

const route = createRoute({
  method: "get",
  path: "/.well-known/jwks.json",
  tags: ["Public"],
  summary: "The public key set that verifies every signature the service makes",
  responses: {
    200: {
      ...json(
        KeySet,
        "The current Ed25519 key first, then the current ES256 key, then retired keys of " +
          "either kind still needed for old payloads",
      ),
      headers: z.object({ "cache-control": z.literal("public, max-age=3600") }),
    },
    ...errorResponses(429, 503),
  },
});

const CACHE_CONTROL = "public, max-age=3600";

export function registerJwks(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { published: keys } = await signer(c.env);
    // Served from the edge cache: verifiers everywhere fetch this. The cache key names the keys
    // it holds, so a rotated secret is published at once instead of after the cached hour.
    const version = keys.map((k) => k.kid).join(".");
    const cacheKey = new Request(new URL(`${c.req.path}?keys=${version}`, c.req.url).toString());
    const hit = await caches.default.match(cacheKey);
    if (hit) return new Response(hit.body, hit) as unknown as ReturnType<typeof c.json<never, 200>>;
    // Only a miss costs the Worker work (a signature check of the configuration, a cache put).
    await enforceRateLimit(
      c.env,
      "public",
      clientIp((name) => c.req.header(name)),
    );
    const response = c.json({ keys }, 200, { "cache-control": CACHE_CONTROL });
    c.executionCtx.waitUntil(caches.default.put(cacheKey, response.clone()));
    return response;
  });
}
