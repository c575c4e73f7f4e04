import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { getAssessedMandate, listAssessedMandates } from "../assess/assessed-mandates";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { listOf, PageQuery } from "../schemas/common";
import { Mandate } from "../schemas/mandates";
import { ACTION_KINDS } from "../schemas/vocabulary";

/** Mandates are read beside the assessments that judged them. */
const tags = ["Assessments"];

const ListMandatesQuery = PageQuery.extend({ kind: z.enum(ACTION_KINDS).optional() });

const listMandates = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/mandates",
    tags,
    summary: "List assessed mandates, newest first",
    request: { query: ListMandatesQuery },
    responses: {
      200: json(listOf(Mandate, "MandateList"), "A page of mandates"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const getMandate = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/mandates/{id}",
    tags,
    summary: "Retrieve an assessed mandate",
    request: { params: IdParam },
    responses: { 200: json(Mandate, "The mandate"), ...errorResponses(401, 403, 404, 503) },
  }),
);

export function registerMandates(app: OpenAPIHono<AppEnv>) {
  app.openapi(listMandates, async (c) => {
    const list = await listAssessedMandates(c.var.tenant, c.req.valid("query"));
    return c.json(list, 200);
  });

  app.openapi(getMandate, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getAssessedMandate(c.var.tenant, id), 200);
  });
}
