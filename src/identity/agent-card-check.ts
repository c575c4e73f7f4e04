import { and, eq, ne, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { agentKeys, agents } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { fetchJson, OutboundError, outboundPolicy } from "../net/outbound";
import { afterSignersRevoked, type CardCheck, verifyAgentCard } from "./agent-card";
import type { CardVersion } from "./agent-card-shape";
import { type AgentRow, assertNotRevoked, lockAgent, toCardStatus } from "./agents";

/** Agent Cards are small documents; a bigger answer is not a card. */
const CARD_MAX_BYTES = 64 * 1024;
const CARD_FETCH_TIMEOUT_MS = 5_000;

async function fetchCard(url: string, env: Env): Promise<unknown> {
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

/** The agent columns a check writes, checked at `at`. */
function cardColumns(check: CardCheck, sourceUrl: string | null, at: Date) {
  return {
    cardStatus: check.status,
    cardReasons: check.reasons,
    cardSignatures: check.signatures,
    cardDigest: check.digest,
    cardVersion: check.protocol_version,
    cardName: check.name,
    cardUrl: check.url,
    cardSourceUrl: sourceUrl,
    cardCheckedAt: at,
    cardVerifiedAt: check.status === "verified" ? at : null,
    trustReason: `card_${check.status}`,
  };
}

/**
 * The condition a check's write holds under: a verified check, whose keys were read before the
 * card was fetched (up to 5 s earlier), is written only if a key behind one of its valid
 * signatures is still active now, under the agent's row lock.
 */
function signerStillActive(agentId: string, check: CardCheck): SQL | undefined {
  if (check.status !== "verified") return undefined;
  const kids = check.signatures.filter((s) => s.status === "valid").map((s) => s.kid);
  return sql`exists (select 1 from agent_keys k
    where k.agent_id = ${agentId} and k.status = 'active'
      and k.thumbprint in (select jsonb_array_elements_text(${JSON.stringify(kids)}::jsonb)))`;
}

/**
 * Verifies an agent's card (given, or fetched from `card_url`) against the agent's keys, and
 * commits the check with `agent.card_checked` in one transaction. A verified check whose
 * signing keys were all revoked meanwhile is not written; the check is then committed as that
 * revocation left it (`unverified`, its valid signatures `revoked_key`), and the entry of the
 * first attempt stays as its trace.
 */
export async function checkAgentCard(
  tenant: Tenant,
  body: {
    agent_id: string;
    card?: unknown;
    card_url?: string | undefined;
    protocol_version?: CardVersion | undefined;
  },
) {
  const [found, keys] = await tenant.batch((db) => [
    db.select().from(agents).where(eq(agents.id, body.agent_id)),
    db.select().from(agentKeys).where(eq(agentKeys.agentId, body.agent_id)),
  ]);
  const agent = orNotFound(found[0]);
  assertNotRevoked(agent);
  const card = body.card_url ? await fetchCard(body.card_url, tenant.env) : body.card;
  const check = await verifyAgentCard(
    card,
    keys.map((k) => ({ kid: k.thumbprint, jwk: k.jwk, alg: k.alg, status: k.status })),
    body.protocol_version ? { version: body.protocol_version } : undefined,
  );
  const sourceUrl = body.card_url ?? null;
  const row =
    (await writeCheck(tenant, agent, check, sourceUrl)) ??
    (await writeCheck(tenant, agent, afterSignersRevoked(check), sourceUrl));
  if (!row) throw new ApiError("internal_error");
  return toCardStatus(row);
}

/**
 * Commits one check of the agent's card with its entry: the written row, or null when the
 * write's condition (signerStillActive) failed. A revoked agent is 409.
 */
async function writeCheck(
  tenant: Tenant,
  agent: AgentRow,
  check: CardCheck,
  sourceUrl: string | null,
): Promise<AgentRow | null> {
  const set = cardColumns(check, sourceUrl, new Date());
  // A trust change writes events: the batch sends their webhook deliveries.
  const { results } = await commit(
    tenant,
    {
      type: "agent.card_checked",
      subject: { type: "agent", id: agent.id },
      payload: toCardStatus({ ...agent, ...set }),
    },
    (db) => [
      lockAgent(db, agent.id),
      db
        .update(agents)
        .set(set)
        .where(
          and(
            eq(agents.id, agent.id),
            ne(agents.status, "revoked"),
            signerStillActive(agent.id, check),
          ),
        )
        .returning(),
      db.select({ status: agents.status }).from(agents).where(eq(agents.id, agent.id)),
    ],
    { webhooks: true },
  );
  const [, rows, now] = results;
  if (rows[0]) return rows[0];
  if (now[0]?.status === "revoked" || check.status !== "verified")
    throw new ApiError("agent_revoked");
  return null;
}
