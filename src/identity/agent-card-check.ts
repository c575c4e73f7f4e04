import { and, eq, ne, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { agentKeys, agents } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import { record } from "../ledger/ledger";
import { fetchJson, OutboundError, outboundPolicy } from "../net/outbound";
import { afterSignersRevoked, type CardCheck, verifyAgentCard } from "./agent-card";
import type { CardVersion } from "./agent-card-shape";
import { assertNotRevoked, lockAgent, toCardStatus } from "./agents";

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

/**
 * Verifies an agent's card (given, or fetched from `card_url`) against the agent's keys, stores
 * the check, and records `agent.card_checked` once per check.
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
  // A trust change writes events: the batch sends their webhook deliveries.
  const [, rows, checked] = await tenant.batch(
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
  await record(tenant.env, await tenant.caller(), {
    type: "agent.card_checked",
    subject: { type: "agent", id: agent.id },
    payload: result,
    once: `agent.card_checked:${agent.id}:${checked[0]?.at}`,
  });
  return result;
}
