import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { publicBaseUrl, SERVICE_NAME } from "../env";
import type { AppEnv } from "../http/context";

/**
 * `GET /`: where a person or a client starts. The asset layer has no file for `/` (public/ has
 * no index.html), so the Worker answers it: a browser gets a small page, anything else JSON.
 */
const ServiceIndex = z
  .object({
    service: z.string().openapi({ example: SERVICE_NAME }),
    docs: z
      .url()
      .openapi({ description: "The API reference", example: "https://risk.example.com/docs" }),
    console: z.url().openapi({
      description: "The console, for people",
      example: "https://risk.example.com/console/",
    }),
    openapi: z.url().openapi({
      description: "The OpenAPI document",
      example: "https://risk.example.com/openapi.json",
    }),
    health: z.url().openapi({
      description: "The liveness probe",
      example: "https://risk.example.com/health",
    }),
  })
  .openapi("ServiceIndex");

const ServiceIndexPage = z
  .string()
  .openapi("ServiceIndexPage", { description: "A page linking to the reference and the console" });

const route = createRoute({
  method: "get",
  path: "/",
  tags: ["Public"],
  summary: "Where to start",
  description:
    "Links to the API reference, the console, the OpenAPI document and the liveness probe: " +
    "JSON, or a small HTML page for a browser (`Accept: text/html`).",
  responses: {
    200: {
      description: "Where to go next",
      content: {
        "application/json": { schema: ServiceIndex },
        "text/html": { schema: ServiceIndexPage },
      },
    },
  },
});

/** Nothing to run, nothing to style: the page may load its icon and nothing else. */
const PAGE_CSP =
  "default-src 'none'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function page(links: z.infer<typeof ServiceIndex>): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Action Risk Assessment</title>
<link rel="icon" href="/docs/favicon.svg" type="image/svg+xml"></head>
<body>
<main>
<h1>Agent Action Risk Assessment</h1>
<p>Scores agent-initiated actions and signs the verdict.</p>
<ul>
<li><a href="${links.docs}">API reference</a></li>
<li><a href="${links.console}">Console</a></li>
<li><a href="${links.openapi}">OpenAPI document</a></li>
</ul>
</main>
</body>
</html>
`;
}

export function registerRoot(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => {
    const base = publicBaseUrl(c.env);
    const links = {
      service: SERVICE_NAME,
      docs: `${base}/docs`,
      console: `${base}/console/`,
      openapi: `${base}/openapi.json`,
      health: `${base}/health`,
    };
    // One URL, two representations: caches must key on Accept.
    c.header("vary", "accept");
    if (!(c.req.header("accept") ?? "").includes("text/html")) return c.json(links, 200);
    c.header("content-security-policy", PAGE_CSP);
    c.header("x-content-type-options", "nosniff");
    c.header("referrer-policy", "no-referrer");
    return c.html(page(links), 200);
  });
}
