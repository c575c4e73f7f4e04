import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { agentKeys, agents } from "../db/schema";
import { caller, orgBatch } from "../db/tenant";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody } from "../http/schemas";
import { type CardCheck, verifyAgentCard } from "../identity/agent-card";
import { record } from "../ledger/ledger";
import { fetchJson, OutboundError, outboundPolicy } from "../net/outbound";
import {
  assertNotRevoked,
  CardStatus,
  findAgent,
  agentTags as tags,
  toCardStatus,
} from "./agent-schemas";

/** Agent Cards are small documents; a bigger answer is not a card. */
const CARD_MAX_BYTES = 64 * 1024;
const CARD_FETCH_TIMEOUT_MS = 5_000;

const VerifyCard = z
  .object({
    agent_id: z.uuid(),
    card: z.record(z.string(), z.unknown()).optional().openapi({
      description: "The Agent Card itself (give this or `card_url`)",
    }),
    card_url: z.url().max(2048).optional().openapi({
      description:
        "Where to fetch the card, e.g. https://agent.example.com/.well-known/agent-card.json",
    }),
    protocol_version: z.enum(["0.3", "1.0"]).optional().openapi({
      description: "The A2A version to check against; detected from the card when omitted",
    }),
  })
  .strict()
  .refine((body) => (body.card === undefined) !== (body.card_url === undefined), {
    message: "give exactly one of `card` and `card_url`",
    path: ["card"],
  })
  .openapi("VerifyAgentCardRequest");

const verify = createRoute(
  guarded("agents:write", {
    method: "post",
    path: "/v1/agents/verify-card",
    tags,
    summary: "Verify an A2A Agent Card and bind it to an agent",
    description:
      "Checks the card's required fields for its A2A version and its `signatures[]` (JWS with " +
      "detached payload over the RFC 8785 canonical card) against the agent's active keys. " +
      "The answer is the check's result, whatever it is; the latest check is the agent's card " +
      "status, and a verified card raises the agent's trust. A `card_url` is fetched over " +
      "https only, never from private, loopback or link-local addresses, at most 64 KiB " +
      "within 5 s, without following redirects.",
    request: { body: jsonBody(VerifyCard) },
    responses: {
      200: json(CardStatus, "The verification result, now the agent's card status"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  }),
);

const status = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents/{id}/card-status",
    tags,
    summary: "The agent's A2A Agent Card verification status",
    request: { params: IdParam },
    responses: {
      200: json(CardStatus, "`verified`, `unverified` or `invalid`, with reasons"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

async function fetchCard(url: string, env: AppEnv["Bindings"]): Promise<unknown> {
  try {
    return await fetchJson(url, outboundPolicy(env), {
      maxBytes: CARD_MAX_BYTES,
      timeoutMs: CARD_FETCH_TIMEOUT_MS,
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    const details = [{ path: "card_url", message: error.message }];
    throw new ApiError(
      error.code === "url_not_allowed" ? "url_not_allowed" : "card_unreachable",
      details,
    );
  }
}

function trustReason(check: CardCheck): string {
  return `card_${check.status}`;
}

export function registerAgentCards(app: OpenAPIHono<AppEnv>) {
  app.openapi(verify, async (c) => {
    const body = c.req.valid("json");
    const [found, keys] = await orgBatch(c, (db) => [
      db.select().from(agents).where(eq(agents.id, body.agent_id)),
      db.select().from(agentKeys).where(eq(agentKeys.agentId, body.agent_id)),
    ]);
    const agent = found[0];
    if (!agent) throw new ApiError("not_found");
    assertNotRevoked(agent);
    const card = body.card_url ? await fetchCard(body.card_url, c.env) : body.card;
    const check = await verifyAgentCard(
      card,
      keys.map((k) => ({ kid: k.thumbprint, jwk: k.jwk, status: k.status })),
      body.protocol_version ? { version: body.protocol_version } : undefined,
    );
    const verified = check.status === "verified";
    const [rows] = await orgBatch(c, (db) => [
      db
        .update(agents)
        .set({
          cardStatus: check.status,
          cardReasons: check.reasons,
          cardSignatures: check.signatures,
          cardDigest: check.digest,
          cardVersion: check.protocol_version,
          cardName: check.name,
          cardUrl: check.url,
          cardSourceUrl: body.card_url ?? null,
          cardCheckedAt: sql`now()`,
          cardVerifiedAt: verified ? sql`now()` : null,
          trustReason: trustReason(check),
        })
        .where(and(eq(agents.id, agent.id), ne(agents.status, "revoked")))
        .returning(),
    ]);
    const row = rows[0];
    if (!row) throw new ApiError("agent_revoked");
    const result = toCardStatus(row);
    await record(c.env, await caller(c), {
      type: "agent.card_checked",
      subject: { type: "agent", id: agent.id },
      payload: result,
    });
    return c.json(result, 200);
  });

  app.openapi(status, async (c) => {
    return c.json(toCardStatus(await findAgent(c, c.req.valid("param").id)), 200);
  });
}
