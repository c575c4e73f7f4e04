import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { AP2_VERSION, SERVICE_NAME } from "../env";
import type { AppEnv } from "../http/context";
import { json } from "../http/schemas";

const Health = z
  .object({
    status: z.literal("ok"),
    service: z.string().openapi({ example: SERVICE_NAME }),
    ap2: z.string().openapi({ description: "AP2 protocol version", example: AP2_VERSION }),
  })
  .openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
  tags: ["Public"],
  summary: "Liveness probe",
  responses: { 200: json(Health, "The service is up") },
});

export function registerHealth(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) =>
    c.json({ status: "ok" as const, service: SERVICE_NAME, ap2: AP2_VERSION }, 200),
  );
}
