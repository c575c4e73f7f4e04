import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { appendEvents, createSession } from "../agent-sessions/ingest";
import { getSession, listSessions, sessionEventsPage } from "../agent-sessions/reads";
import { toSession } from "../agent-sessions/records";
import { verifyStored } from "../agent-sessions/verify-stored";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { ErrorSchema, errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { listOf } from "../schemas/common";
import {
  AppendSessionEvents,
  CreateSession,
  ListEventsQuery,
  ListSessionsQuery,
  Session,
  SessionDetail,
  SessionEvent,
  SessionVerification,
  sessionTags as tags,
} from "../schemas/sessions";

// The spec lets any of the three evidence-writing scopes ingest sessions.
const INGEST = ["session:write", "assess:write", "artifact:write"] as const;

/** A 422 here is never a schema problem (those are 400): it is a break in the chain. */
const brokenChain = {
  422: json(ErrorSchema, "`session_chain_broken`: the first break, `{sequence, index, reason}`"),
};

const create = createRoute(
  guarded(INGEST, {
    method: "post",
    path: "/v1/sessions",
    tags,
    summary: "Start an agent session, with its first events (a verified hash chain)",
    description:
      "The same (agent, external_id) again answers 200 with the stored session when it is a " +
      "retry (same require_signatures, metadata and events), else 409 `session_exists`. A " +
      "broken chain is refused whole: 422 `session_chain_broken` names the first break.",
    request: { body: jsonBody(CreateSession) },
    responses: {
      200: json(Session, "The session already existed: this was a retry of its creation"),
      201: json(Session, "The session"),
      ...errorResponses(400, 401, 403, 409, 503),
      ...brokenChain,
    },
  }),
);

const append = createRoute(
  guarded(INGEST, {
    method: "post",
    path: "/v1/sessions/{id}/events",
    tags,
    summary: "Append a batch of events that continues the session's head",
    description:
      "The first event must have sequence head + 1 and prev_hash the head's hash. A batch " +
      "already stored (same hashes at the same positions) answers 200 unchanged; one that " +
      "does not continue the head (a lost race, a stale client) answers 409 `session_conflict` " +
      "with the head. A broken batch is refused whole (422 `session_chain_broken`).",
    request: { params: IdParam, body: jsonBody(AppendSessionEvents) },
    responses: {
      200: json(Session, "The batch was already stored: nothing changed"),
      201: json(Session, "The session with its new head"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
      ...brokenChain,
    },
  }),
);

const list = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/sessions",
    tags,
    summary: "List sessions, newest first",
    request: { query: ListSessionsQuery },
    responses: {
      200: json(listOf(Session, "SessionList"), "A page of sessions"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/sessions/{id}",
    tags,
    summary: "Retrieve a session, its verification and the assessments its events link",
    request: { params: IdParam },
    responses: {
      200: json(SessionDetail, "The session"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

const events = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/sessions/{id}/events",
    tags,
    summary: "A session's events in chain order (ascending sequence)",
    request: { params: IdParam, query: ListEventsQuery },
    responses: {
      200: json(listOf(SessionEvent, "SessionEventList"), "A page of events"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

const verify = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/sessions/{id}/verify",
    tags,
    summary: "Re-verify a stored session from its rows: chain, signatures, head and ledger",
    request: { params: IdParam },
    responses: {
      200: json(SessionVerification, "The verification; `ok` false names the first break"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerSessions(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { session, created } = await createSession(c.var.tenant, c.req.valid("json"));
    return created ? c.json(toSession(session), 201) : c.json(toSession(session), 200);
  });

  app.openapi(append, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const body = c.req.valid("json");
    const [first, ...rest] = body.events;
    if (!first) throw new ApiError("invalid_request");
    const { session, created } = await appendEvents(c.var.tenant, id, { events: [first, ...rest] });
    return created ? c.json(toSession(session), 201) : c.json(toSession(session), 200);
  });

  app.openapi(list, async (c) =>
    c.json(await listSessions(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getSession(c.var.tenant, id), 200);
  });

  app.openapi(events, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await sessionEventsPage(c.var.tenant, id, c.req.valid("query")), 200);
  });

  app.openapi(verify, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await verifyStored(c.var.tenant, id), 200);
  });
}
