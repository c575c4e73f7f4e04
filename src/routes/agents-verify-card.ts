import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { checkAgentCard } from "../identity/agent-card-check";
import { CardStatus, RowUuid, agentTags as tags } from "../schemas/agents";

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

export function registerAgentsVerifyCard(app: OpenAPIHono<AppEnv>) {
  app.openapi(verify, async (c) =>
    c.json(await checkAgentCard(c.var.tenant, c.req.valid("json")), 200),
  );
}
