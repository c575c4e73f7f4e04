import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { readReviewSettings, updateReviewSettings } from "../reviews/settings";
import { ReviewSettings, reviewTags as tags, UpdateReviewSettingsBody } from "../schemas/reviews";

const read = createRoute(
  guarded("review:read", {
    method: "get",
    path: "/v1/review-settings",
    tags,
    summary: "The org's review settings: the SLA after which an open review expires as deny",
    responses: {
      200: json(ReviewSettings, "The settings (the defaults until set)"),
      ...errorResponses(401, 403, 503),
    },
  }),
);

const update = createRoute(
  guarded(
    "review:write",
    {
      method: "post",
      path: "/v1/review-settings",
      tags,
      summary: "Update the org's review settings",
      description:
        "`sla_seconds` from 60 to 2592000 (30 days). Items opened afterwards are due after the " +
        "new SLA; open items keep their `expires_at`.",
      request: { body: jsonBody(UpdateReviewSettingsBody) },
      responses: {
        200: json(ReviewSettings, "The updated settings"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerReviewSettings(app: OpenAPIHono<AppEnv>) {
  app.openapi(read, async (c) => c.json(await readReviewSettings(c.var.tenant), 200));

  app.openapi(update, async (c) => {
    const { sla_seconds } = c.req.valid("json");
    return c.json(await updateReviewSettings(c.var.tenant, sla_seconds), 200);
  });
}
