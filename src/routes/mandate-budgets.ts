import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  attestMandateBudget,
  MANDATE_BUDGET_LIFETIME_S,
  MANDATE_BUDGET_TYP,
} from "../ap2-credentials/budget-attestation";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { CAP_PERIODS } from "../schemas/vocabulary";

const ReferenceParam = z.object({
  reference: z.string().openapi({
    param: { name: "reference", in: "path" },
    description:
      "The open mandate's consent: base64url (unpadded) SHA-256 of its root's `header.payload`",
    example: "qj2Yb3Tn0d1uVX8h1cW8cQ2cO2v9mJ4l3i9bq1Yt2kE",
  }),
});

const MandateBudgetPeriod = z
  .object({
    period: z.enum(CAP_PERIODS),
    start: z.string().openapi({ description: "The UTC calendar period's start" }),
    end: z.string().openapi({ description: "Its end (exclusive)" }),
    max_total: z.number().int(),
    spent: z.number().int(),
    remaining: z.number().int(),
  })
  .openapi("MandateBudgetPeriod");

export const MandateBudget = z
  .object({
    object: z.literal("mandate_budget"),
    reference: z.string(),
    livemode: z.boolean(),
    currency: z.string(),
    max_amount: z.number().int().nullable().openapi({
      description: "The smallest `payment.budget` of the terms, minor units; null without one",
    }),
    spent: z.number().int().openapi({ description: "Approved under the mandate, minor units" }),
    remaining: z.number().int().nullable(),
    uses: z.number().int(),
    max_uses: z.number().int().nullable(),
    periods: z.array(MandateBudgetPeriod).openapi({
      description: "Each `payment.cumulative` cap's period holding `issued_at`",
    }),
    issued_at: z.string(),
    expires_at: z.string(),
    jws: z.string().openapi({
      description: `The same statement as a compact JWS (ES256, \`typ\` \`${MANDATE_BUDGET_TYP}\`), verifiable offline with \`/.well-known/jwks.json\``,
    }),
  })
  .openapi("MandateBudget");

const route = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/mandate-budgets/{reference}",
    tags: ["Assessments"],
    summary: "A signed statement of what remains of an open mandate's budget (AP2 #207)",
    description:
      "What this org approved under an AP2 open mandate in this mode, and what remains of its " +
      "`payment.budget` and of each `payment.cumulative` period, as JSON and as a compact JWS " +
      `(ES256, \`typ\` \`${MANDATE_BUDGET_TYP}\`, valid ${MANDATE_BUDGET_LIFETIME_S} seconds) ` +
      "that another merchant verifies offline with `/.well-known/jwks.json`. 404 when the org " +
      "approved nothing under the mandate in this mode (docs/credentials.md).",
    request: { params: ReferenceParam },
    responses: {
      200: json(MandateBudget, "The attestation"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerMandateBudgets(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { claims, jws } = await attestMandateBudget(c.var.tenant, c.req.valid("param").reference);
    const { iss: _iss, iat, exp, sub: _sub, ...statement } = claims;
    return c.json(
      {
        object: "mandate_budget" as const,
        ...statement,
        issued_at: new Date(iat * 1000).toISOString(),
        expires_at: new Date(exp * 1000).toISOString(),
        jws,
      },
      200,
    );
  });
}
