import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  getAssessedMandate,
  listAssessedMandates,
  type MandateRow,
} from "../assess/assessed-mandates";
import { mapPage } from "../db/pagination";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { listOf, PageQuery } from "../schemas/common";
import { ACTION_KINDS } from "../schemas/vocabulary";

const Mandate = z
  .object({
    object: z.literal("mandate"),
    id: z.string(),
    assessment_id: z.string(),
    kind: z.enum(ACTION_KINDS),
    mandate_type: z.string().nullable(),
    vct: z.string().nullable(),
    content_hash: z.string().openapi({ description: "The idempotency hash of the request" }),
    mandate_hash: z.string().openapi({
      description: "`sha256:<hex>` of the RFC 8785 mandate, as bound by the Risk Payload",
    }),
    mandate: z.record(z.string(), z.unknown()).openapi({
      description:
        "As submitted; once the agent's principal is erased, each member named in " +
        "`erased_fields` reads null",
    }),
    livemode: z.boolean(),
    created: z.string(),
    erased_at: z.string().nullable().openapi({
      description: "When the principal's personal data was erased from this mandate, or null",
    }),
    erased_fields: z.array(z.string()).openapi({
      description: "The members of `mandate` erased then (empty when none were)",
    }),
  })
  .openapi("Mandate");

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

function toMandate(row: MandateRow): z.infer<typeof Mandate> {
  return {
    object: "mandate",
    id: row.id,
    assessment_id: row.assessmentId,
    kind: row.kind as z.infer<typeof Mandate>["kind"],
    mandate_type: row.mandateType,
    vct: row.vct,
    content_hash: row.contentHash,
    mandate_hash: row.mandateHash,
    mandate: row.mandate as Record<string, unknown>,
    livemode: row.livemode,
    created: row.createdAt.toISOString(),
    erased_at: row.erasedAt?.toISOString() ?? null,
    erased_fields: row.erasedFields ?? [],
  };
}

export function registerMandates(app: OpenAPIHono<AppEnv>) {
  app.openapi(listMandates, async (c) => {
    const list = await listAssessedMandates(c.var.tenant, c.req.valid("query"));
    return c.json(mapPage(list, toMandate), 200);
  });

  app.openapi(getMandate, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(toMandate(await getAssessedMandate(c.var.tenant, id)), 200);
  });
}
