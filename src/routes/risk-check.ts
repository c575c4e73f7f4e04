import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { artifactKey } from "../assess/rails/artifacts";
import { riskCheckDiscovery } from "../assess/rails/discovery";
import { riskPayloadTtlSeconds } from "../assess/risk-payload";
import { publicBaseUrl } from "../env";
import type { AppEnv } from "../http/context";
import { clientIp, enforceRateLimit } from "../http/rate-limit";
import { errorResponses, json } from "../http/schemas";
import { RiskCheckDiscovery } from "../schemas/rails";

const CACHE_CONTROL = "public, max-age=3600";

const route = createRoute({
  method: "get",
  path: "/.well-known/risk-check.json",
  tags: ["Public"],
  summary: "The x402 risk-check discovery document (docs/rails.md)",
  responses: {
    200: {
      ...json(RiskCheckDiscovery, "What an x402 facilitator needs to call and verify the service"),
      headers: z.object({ "cache-control": z.literal(CACHE_CONTROL) }),
    },
    ...errorResponses(429, 503),
  },
});

export function registerRiskCheck(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const key = await artifactKey(c.env);
    const ttl = riskPayloadTtlSeconds(c.env);
    // As the key set: served from the edge cache, whose key names the signing key (and the
    // TTL), so a rotated key is published at once.
    const version = `key=${key.kid}&ttl=${ttl}`;
    const cacheKey = new Request(new URL(`${c.req.path}?${version}`, c.req.url).toString());
    const hit = await caches.default.match(cacheKey);
    if (hit) return new Response(hit.body, hit) as unknown as ReturnType<typeof c.json<never, 200>>;
    await enforceRateLimit(
      c.env,
      "public",
      clientIp((name) => c.req.header(name)),
    );
    const body = riskCheckDiscovery(publicBaseUrl(c.env), key, ttl);
    const response = c.json(body, 200, { "cache-control": CACHE_CONTROL });
    c.executionCtx.waitUntil(caches.default.put(cacheKey, response.clone()));
    return response;
  });
}
