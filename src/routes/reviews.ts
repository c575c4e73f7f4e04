import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { publicBaseUrl } from "../env";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { getReview, listReviews, resolveReview } from "../reviews/queue";
import { presentClosedReview, presentReviews } from "../reviews/records";
import { listOf } from "../schemas/common";
import {
  ListReviewsQuery,
  ResolveReviewBody,
  Review,
  reviewTags as tags,
} from "../schemas/reviews";

const list = createRoute(
  guarded("review:read", {
    method: "get",
    path: "/v1/reviews",
    tags,
    summary: "List review items of the caller's mode, oldest first",
    request: { query: ListReviewsQuery },
    responses: {
      200: json(listOf(Review, "ReviewList"), "A page of review items"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("review:read", {
    method: "get",
    path: "/v1/reviews/{id}",
    tags,
    summary: "Retrieve a review item",
    request: { params: IdParam },
    responses: { 200: json(Review, "The review item"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const resolve = createRoute(
  guarded("review:write", {
    method: "post",
    path: "/v1/reviews/{id}/resolve",
    tags,
    summary: "Resolve an open review as approve or deny, once; answers a new signed Risk Payload",
    description:
      "Records who resolved it (the session's person, or the key), appends `review.resolved` " +
      "to the ledger, emits `assessment.resolved`, and signs a new Risk Payload for the same " +
      "assessment (`review.risk_payload`); the original stays. 409 `review_already_resolved` " +
      "for a second resolve (one of concurrent resolves wins), `review_expired` past the SLA, " +
      "`review_recheck_failed` when approving a verified credential's assessment finds its " +
      "issuer, holder key, agent or time window no longer good (`details.reason`), " +
      "`review_spend_refused` when it fails its single use or budget (docs/reviews.md).",
    request: { params: IdParam, body: jsonBody(ResolveReviewBody) },
    responses: {
      200: json(Review, "The resolved review item, with its signed Risk Payload"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  }),
);

export function registerReviews(app: OpenAPIHono<AppEnv>) {
  const verifyUrl = (env: AppEnv["Bindings"]) => `${publicBaseUrl(env)}/.well-known/jwks.json`;

  app.openapi(list, async (c) => {
    const rows = await listReviews(c.var.tenant, c.req.valid("query"));
    const data = await presentReviews(c.var.tenant, rows.data, verifyUrl(c.env));
    return c.json({ ...rows, data }, 200);
  });

  app.openapi(get, async (c) => {
    const row = await getReview(c.var.tenant, rowId(c.req.valid("param").id));
    const [item] = await presentReviews(c.var.tenant, [row], verifyUrl(c.env));
    return c.json(item as Review, 200);
  });

  app.openapi(resolve, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await resolveReview(c.var.tenant, id, c.req.valid("json"));
    return c.json(await presentClosedReview(c.var.tenant, row, verifyUrl(c.env)), 200);
  });
}
