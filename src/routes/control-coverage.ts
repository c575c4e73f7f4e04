import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { coverageOf, type Period, readCoverage } from "../control-coverage/coverage";
import { getEffect, listEffects } from "../control-coverage/effect-reads";
import { reportEffect, toEffect } from "../control-coverage/effects";
import { issueReport } from "../control-coverage/report";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { EARLIEST_TIME_MS, LATEST_TIME_MS, listOf } from "../schemas/common";
import {
  ControlEffect,
  ControlEffectWithMatch,
  Coverage,
  CreateControlEffect,
  ListEffectsQuery,
  PeriodQuery,
  SignedReport,
  coverageTags as tags,
} from "../schemas/control-coverage";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest period one computation covers. */
export const MAX_PERIOD_DAYS = 92;

const report = createRoute(
  guarded("assess:write", {
    method: "post",
    path: "/v1/control-coverage/effects",
    tags,
    summary: "Report a side effect that happened (an executor's or observer's signal)",
    description:
      "Idempotent per mode, `observer` and `reference`: a repeat answers 200 with the first record.",
    request: { body: jsonBody(CreateControlEffect) },
    responses: {
      201: json(ControlEffect, "The recorded effect"),
      200: json(ControlEffect, "The effect as first reported (a repeat)"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const list = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/control-coverage/effects",
    tags,
    summary: "Reported effects of the caller's mode, newest report first",
    request: { query: ListEffectsQuery },
    responses: {
      200: json(listOf(ControlEffect, "ControlEffectList"), "A page of effects"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/control-coverage/effects/{id}",
    tags,
    summary: "A reported effect, with how it matches its gate now",
    request: { params: IdParam },
    responses: {
      200: json(ControlEffectWithMatch, "The effect and its match"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

const coverage = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/control-coverage",
    tags,
    summary: "Control coverage of a period: effects matched to gate proof, and the gaps",
    request: { query: PeriodQuery },
    responses: {
      200: json(Coverage, "The coverage"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const signedReport = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/control-coverage/report",
    tags,
    summary: "Signed control coverage evidence with explicit disclosures",
    description: "Each report is recorded in the org's ledger (`control_coverage.report_issued`).",
    request: { query: PeriodQuery },
    responses: {
      200: json(SignedReport, "The signed report"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

function invalid(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message }]);
}

/**
 * `[from, to)`: by default the 24 hours up to now; at most MAX_PERIOD_DAYS long, and within
 * the years 0001–9999 (a default `from` computed before year 1 is a 400, not a 500).
 */
export function periodOf(query: { from?: string; to?: string }, now: Date): Period {
  const to = query.to === undefined ? now : new Date(query.to);
  const from = query.from === undefined ? new Date(to.getTime() - DAY_MS) : new Date(query.from);
  for (const [path, at] of [
    ["from", from],
    ["to", to],
  ] as const) {
    const time = at.getTime();
    if (!(time >= EARLIEST_TIME_MS && time <= LATEST_TIME_MS)) {
      throw invalid(path, "must be between years 1 and 9999 (UTC)");
    }
  }
  if (from.getTime() >= to.getTime()) throw invalid("from", "must be before to");
  if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * DAY_MS) {
    throw invalid("from", `the period may span at most ${MAX_PERIOD_DAYS} days`);
  }
  return { from, to };
}

export function registerControlCoverage(app: OpenAPIHono<AppEnv>) {
  app.openapi(report, async (c) => {
    const { row, created } = await reportEffect(c.var.tenant, c.req.valid("json"));
    return created ? c.json(toEffect(row), 201) : c.json(toEffect(row), 200);
  });

  app.openapi(list, async (c) => {
    return c.json(await listEffects(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getEffect(c.var.tenant, id), 200);
  });

  app.openapi(coverage, async (c) => {
    const now = new Date();
    const period = periodOf(c.req.valid("query"), now);
    return c.json(coverageOf(await readCoverage(c.var.tenant, period, now), period), 200);
  });

  app.openapi(signedReport, async (c) => {
    const period = periodOf(c.req.valid("query"), new Date());
    return c.json(await issueReport(c.var.tenant, period), 200);
  });
}
