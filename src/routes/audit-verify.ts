import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { verifyLedger } from "../ledger/audit-check";
import { VerifyReport } from "../schemas/audit";

const tags = ["Audit"];

const verify = createRoute(
  guarded(
    "audit:read",
    {
      method: "get",
      path: "/v1/audit/verify",
      tags,
      summary: "Recompute every hash, link and checkpoint of the org's ledger",
      description:
        "Deterministic: the same stored rows give the same report. The algorithm is in " +
        "docs/ledger.md; `npm run verify-audit` runs it offline on an export.",
      responses: { 200: json(VerifyReport, "The report"), ...errorResponses(401, 403, 503) },
    },
    { rateLimit: "expensive" },
  ),
);

export function registerAuditVerify(app: OpenAPIHono<AppEnv>) {
  app.openapi(verify, async (c) => c.json(await verifyLedger(c.var.tenant), 200));
}
