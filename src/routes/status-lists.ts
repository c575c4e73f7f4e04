import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { STATUS_LIST_EXAMPLE } from "../http/openapi-examples/status-lists";
import { errorResponses } from "../http/schemas";
import { publishedList, STATUS_LIST_TTL_SECONDS } from "../status-lists/published";
import { STATUS_LIST_MEDIA_TYPE } from "../status-lists/token";

const CACHE_CONTROL = `public, max-age=${STATUS_LIST_TTL_SECONDS}`;

const route = createRoute({
  method: "get",
  path: "/v1/status-lists/{id}",
  tags: ["Public"],
  summary: "One of the service's Token Status Lists (draft-ietf-oauth-status-list), signed",
  description:
    "Public, no credential. The `status.status_list.uri` of a Risk Payload or an action " +
    "grant, and the `status_list.uri` of an agent, agent key or action decision's grant record, " +
    "names it. The body is a `statuslist+jwt` (§5.1) signed with a key of " +
    "`/.well-known/jwks.json`: `sub` is this URI, `ttl` how long it may be kept, `status_list` " +
    "the ZLIB-compressed list (`bits` 2: 0 VALID, 1 INVALID, 2 SUSPENDED). docs/status-lists.md.",
  request: {
    params: z.object({
      id: z
        .string()
        .max(64)
        .openapi({
          param: { name: "id", in: "path" },
          example: "3f9c2a7be41d08c65a1f7e2d9b0c4a18.0",
        }),
    }),
  },
  responses: {
    200: {
      description: "The Status List Token",
      content: {
        [STATUS_LIST_MEDIA_TYPE]: {
          schema: z.string().openapi("StatusListToken", {
            description: "A compact JWS, `typ` `statuslist+jwt`, ES256",
            example: STATUS_LIST_EXAMPLE,
          }),
        },
      },
      headers: z.object({ "cache-control": z.literal(CACHE_CONTROL) }),
    },
    ...errorResponses(404, 429, 503),
  },
});

export function registerStatusLists(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const jws = await publishedList(c.env, id, Date.now());
    if (jws === null) throw new ApiError("not_found");
    return c.body(jws, 200, {
      "content-type": STATUS_LIST_MEDIA_TYPE,
      "cache-control": CACHE_CONTROL,
      "access-control-allow-origin": "*",
    });
  });
}
