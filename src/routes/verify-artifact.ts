import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import { verifyDigest, verifyReceipt } from "../evidence/artifact-verification";
import type { AppEnv } from "../http/context";
import { errorResponses, json } from "../http/schemas";
import { ArtifactVerification, VerifyArtifactQuery } from "../schemas/artifacts";

// Public, credential-free. Answers what a holder can check about what it already holds: a
// receipt (and the digest it computed), or a digest alone (proof of existence). Never an org,
// an artifact's name or metadata.

const route = createRoute({
  method: "get",
  path: "/v1/verify/artifact",
  tags: ["Public"],
  summary: "Verify an artifact receipt, or whether a digest is registered, with its anchor",
  description:
    "Always 200 with a verdict for well-formed input; 400 when neither `receipt` nor `digest` " +
    "is given, one is malformed, or another parameter is given. With a digest alone `valid` " +
    "is null and the answer is `digest.registered`. See docs/artifacts.md for the checks, in order.",
  request: { query: VerifyArtifactQuery },
  responses: {
    200: json(ArtifactVerification, "The verdict"),
    ...errorResponses(400, 429, 503),
  },
});

export function registerVerifyArtifact(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { receipt, digest } = c.req.valid("query");
    if (receipt !== undefined) return c.json(await verifyReceipt(c.env, receipt, digest), 200);
    if (digest !== undefined) return c.json(await verifyDigest(c.env, digest), 200);
    throw new ApiError("invalid_request", [
      { path: "receipt", message: "give a receipt, a digest, or both" },
    ]);
  });
}
