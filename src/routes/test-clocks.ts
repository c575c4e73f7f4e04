import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { PageQuery } from "../schemas/common";
import {
  AdvanceTestClock,
  CreateTestClock,
  DeletedTestClock,
  TestClock,
  TestClockList,
} from "../schemas/test-clocks";
import {
  advanceTestClock,
  createTestClock,
  deleteTestClock,
  getTestClock,
  listTestClocks,
} from "../test-clocks/clocks";

const tags = ["Test clocks"];
const TEST_ONLY = { testOnly: true } as const;

const create = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/test-clocks",
      tags,
      summary: "Create a test clock: a frozen time assessments and labels can be made at",
      description:
        'Stripe\'s convention (docs/history.md, "Test clocks"): the clock stays at ' +
        "`frozen_time` until it is advanced.",
      request: { body: jsonBody(CreateTestClock) },
      responses: { 201: json(TestClock, "The clock"), ...errorResponses(400, 401, 403, 503) },
    },
    TEST_ONLY,
  ),
);

const list = createRoute(
  guarded(
    "assess:read",
    {
      method: "get",
      path: "/v1/test-clocks",
      tags,
      summary: "List the org's test clocks, newest first",
      request: { query: PageQuery },
      responses: {
        200: json(TestClockList, "A page of clocks"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    TEST_ONLY,
  ),
);

const get = createRoute(
  guarded(
    "assess:read",
    {
      method: "get",
      path: "/v1/test-clocks/{id}",
      tags,
      summary: "Retrieve a test clock",
      request: { params: IdParam },
      responses: {
        200: json(TestClock, "The clock"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    TEST_ONLY,
  ),
);

const advance = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/test-clocks/{id}/advance",
      tags,
      summary: "Move a test clock forward",
      description:
        "Forward only: a `frozen_time` earlier than the clock's is a 400 naming `frozen_time`; " +
        "the same time is a no-op answered 200.",
      request: { params: IdParam, body: jsonBody(AdvanceTestClock) },
      responses: {
        200: json(TestClock, "The clock at its new time"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    TEST_ONLY,
  ),
);

const remove = createRoute(
  guarded(
    "assess:write",
    {
      method: "delete",
      path: "/v1/test-clocks/{id}",
      tags,
      summary: "Delete a test clock (what was made under it stays, dated as it was)",
      request: { params: IdParam },
      responses: {
        200: json(DeletedTestClock, "Deleted"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    TEST_ONLY,
  ),
);

export function registerTestClocks(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    return c.json(await createTestClock(c.var.tenant, c.req.valid("json")), 201);
  });

  app.openapi(list, async (c) => {
    return c.json(await listTestClocks(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getTestClock(c.var.tenant, id), 200);
  });

  app.openapi(advance, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await advanceTestClock(c.var.tenant, id, c.req.valid("json")), 200);
  });

  app.openapi(remove, async (c) => {
    const id = rowId(c.req.valid("param").id);
    await deleteTestClock(c.var.tenant, id);
    return c.json({ id, object: "test_clock" as const, deleted: true as const }, 200);
  });
}
