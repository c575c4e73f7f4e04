import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, ne, type SQL, sql } from "drizzle-orm";
import { agentKeys, agents } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { afterSignersRevoked, type CardCheck, verifyAgentCard } from "../identity/agent-card";
import { assertNotRevoked, lockAgent, toCardStatus } from "../identity/agents";
import { record } from "../ledger/ledger";
import { fetchJson, OutboundError, outboundPolicy } from "../net/outbound";
import { CardStatus, RowUuid, agentTags as tags } from "../schemas/agents";

/** Agent Cards are small documents; a bigger answer is not a card. */
const CARD_MAX_BYTES = 64 * 1024;
const CARD_FETCH_TIMEOUT_MS = 5_000;

const VerifyCard = z
  .object({
    agent_id: RowUuid,
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
  guarded(
    "agents:write",
    {
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
    },
    { liveOnly: true },
  ),
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

/** The agent columns a check writes. */
function cardColumns(check: CardCheck, sourceUrl: string | null) {
  return {
    cardStatus: check.status,
    cardReasons: check.reasons,
    cardSignatures: check.signatures,
    cardDigest: check.digest,
    cardVersion: check.protocol_version,
    cardName: check.name,
    cardUrl: check.url,
    cardSourceUrl: sourceUrl,
    cardCheckedAt: sql`now()`,
    cardVerifiedAt: check.status === "verified" ? sql`now()` : null,
    trustReason: `card_${check.status}`,
  };
}

const asJsonb = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/**
 * What a check writes, decided in SQL when it verified: the keys were read before the card was
 * fetched (up to 5 s earlier), so `verified` is written only if a key behind one of its valid
 * signatures is still active now, under the agent's row lock; otherwise the check stands as a
 * revocation would have left it.
 */
function checkWrite(agentId: string, check: CardCheck, sourceUrl: string | null) {
  const written = cardColumns(check, sourceUrl);
  if (check.status !== "verified") return written;
  const kids = check.signatures.filter((s) => s.status === "valid").map((s) => s.kid);
  const signerActive = sql`exists (select 1 from agent_keys k
    where k.agent_id = ${agentId} and k.status = 'active'
      and k.thumbprint in (select jsonb_array_elements_text(${asJsonb(kids)})))`;
  const fallback = afterSignersRevoked(check);
  const pick = (yes: SQL, no: SQL) => sql`case when ${signerActive} then ${yes} else ${no} end`;
  return {
    ...written,
    cardStatus: pick(sql`'verified'`, sql`'unverified'`),
    cardReasons: pick(asJsonb(check.reasons), asJsonb(fallback.reasons)),
    cardSignatures: pick(asJsonb(check.signatures), asJsonb(fallback.signatures)),
    cardVerifiedAt: pick(sql`now()`, sql`null`),
    trustReason: pick(sql`'card_verified'`, sql`'card_unverified'`),
  };
}

export function registerAgentsVerifyCard(app: OpenAPIHono<AppEnv>) {
  app.openapi(verify, async (c) => {
    const body = c.req.valid("json");
    const [found, keys] = await c.var.tenant.batch((db) => [
      db.select().from(agents).where(eq(agents.id, body.agent_id)),
      db.select().from(agentKeys).where(eq(agentKeys.agentId, body.agent_id)),
    ]);
    const agent = orNotFound(found[0]);
    assertNotRevoked(agent);
    const card = body.card_url ? await fetchCard(body.card_url, c.env) : body.card;
    const check = await verifyAgentCard(
      card,
      keys.map((k) => ({ kid: k.thumbprint, jwk: k.jwk, alg: k.alg, status: k.status })),
      body.protocol_version ? { version: body.protocol_version } : undefined,
    );
    // A trust change writes events: the batch sends their webhook deliveries.
    const [, rows, checked] = await c.var.tenant.batch(
      (db) => [
        lockAgent(db, agent.id),
        db
          .update(agents)
          .set(checkWrite(agent.id, check, body.card_url ?? null))
          .where(and(eq(agents.id, agent.id), ne(agents.status, "revoked")))
          .returning(),
        // To the microsecond (a Date keeps milliseconds): one check, one ledger entry.
        db
          .select({ at: sql<string>`${agents.cardCheckedAt}::text` })
          .from(agents)
          .where(eq(agents.id, agent.id)),
      ],
      { webhooks: true },
    );
    const row = rows[0];
    if (!row) throw new ApiError("agent_revoked");
    const result = toCardStatus(row);
    await record(c.env, await c.var.tenant.caller(), {
      type: "agent.card_checked",
      subject: { type: "agent", id: agent.id },
      payload: result,
      once: `agent.card_checked:${agent.id}:${checked[0]?.at}`,
    });
    return c.json(result, 200);
  });
}
