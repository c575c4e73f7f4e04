import type { z } from "@hono/zod-openapi";
import { and, desc, eq, lt, ne, sql } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { decodeSequenceCursor, listById, mapPage, page } from "../db/pagination";
import { agents, agentTrustHistory, principals } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { CreateAgent, ListAgentsQuery, UpdateAgent } from "../schemas/agents";
import { placeColumns, settleAgentPlaces } from "../status-lists/places";
import { type AgentRow, agentFacts, assertNotRevoked, findAgent, toAgent } from "./agents";

/** The status move a PATCH asks for, as the columns it sets and the trust reason it records. */
function statusChange(row: AgentRow, next: AgentRow["status"] | undefined, at: Date) {
  if (next === undefined || next === row.status) return null;
  switch (next) {
    case "suspended":
      return {
        reason: "suspended",
        set: { status: next, suspensions: sql`${agents.suspensions} + 1`, suspendedAt: sql`now()` },
      };
    case "active":
      return { reason: "reactivated", set: { status: next, suspendedAt: null } };
    case "revoked":
      return { reason: "revoked", set: { status: next, revokedAt: at } };
  }
}

const MAX_METADATA_KEYS = 50;

function tooManyKeys(): ApiError {
  return new ApiError("invalid_request", [
    { path: "metadata", message: `at most ${MAX_METADATA_KEYS} keys` },
  ]);
}

/** A metadata patch as SQL merging it into the stored value, or null when it changes nothing. */
function metadataEdit(current: Record<string, string>, patch: Record<string, string>) {
  const entries = Object.entries(patch);
  const removed = entries.filter(([, value]) => value === "").map(([key]) => key);
  const set = Object.fromEntries(entries.filter(([, value]) => value !== ""));
  const mergeInto = (stored: Record<string, string>) => {
    const merged = { ...stored, ...set };
    for (const key of removed) delete merged[key];
    return merged;
  };
  const merged = mergeInto(current);
  // Checked here on the value read, to answer at once; the write checks again on its own.
  if (Object.keys(merged).length > MAX_METADATA_KEYS) throw tooManyKeys();
  const unchanged =
    Object.keys(merged).length === Object.keys(current).length &&
    Object.entries(merged).every(([key, value]) => current[key] === value);
  if (unchanged) return null;
  // Merged in the statement, onto the row as it is then: a concurrent PATCH of other keys is
  // kept, not overwritten by this one's stale read.
  const removedKeys = sql`(select coalesce(array_agg(k), '{}')
    from jsonb_array_elements_text(${JSON.stringify(removed)}::jsonb) k)`;
  const value = sql`((${agents.metadata} || ${JSON.stringify(set)}::jsonb) - ${removedKeys})`;
  const fits = sql`(select count(*) from jsonb_object_keys(${value})) <= ${MAX_METADATA_KEYS}`;
  return { value, fits, mergeInto };
}

type UpdateBody = z.infer<typeof UpdateAgent>;

/** The columns a PATCH changes, compared with the row read: nothing for values already held. */
function fieldEdits(current: AgentRow, body: UpdateBody) {
  const metadata = body.metadata ? metadataEdit(current.metadata, body.metadata) : null;
  const set = {
    ...(body.name === undefined || body.name === current.name ? {} : { name: body.name }),
    ...(body.description === undefined || body.description === current.description
      ? {}
      : { description: body.description }),
    ...(metadata ? { metadata: metadata.value } : {}),
  };
  return { set, metadata, changed: Object.keys(set).sort() };
}

/**
 * The ledger change of a PATCH, known before its write: the agent, the fields it changes with
 * the values asked for (a metadata patch as sent: the merge is the statement's, onto the row
 * as it is then) and the status it moves from and to. A status move is recorded under a `once`
 * key that names that very move (so a racing twin records one), and a revocation voids the
 * agent's grants in the ledger object's sequencing step: no grant of the agent redeems once
 * this answers (docs/action-authority.md). Field edits alone record `agent.updated`.
 */
function ledgerChange(current: AgentRow, body: UpdateBody, changed: string[], at: Date) {
  const to = body.status ?? current.status;
  const moved = to !== current.status;
  const patch = Object.fromEntries(
    changed.filter((field) => field !== "status").map((field) => [field, body[field as "name"]]),
  );
  const payload = {
    agent_id: current.id,
    changed,
    patch,
    status: { from: current.status, to },
    ...(to === "revoked" && moved ? { revoked_at: at.toISOString() } : {}),
  };
  const subject = { type: "agent", id: current.id };
  if (!moved) return { type: "agent.updated", subject, payload };
  const once = {
    suspended: `agent.suspended:${current.id}:${current.suspensions + 1}`,
    revoked: `agent.revoked:${current.id}`,
    // An active agent suspended n times has been reactivated n times.
    active: `agent.reactivated:${current.id}:${current.suspensions}`,
  }[to];
  return {
    type: to === "active" ? "agent.reactivated" : `agent.${to}`,
    subject,
    payload,
    once: [once],
    ...(to === "revoked" ? { voids: { key: `agent:${current.id}`, at: at.toISOString() } } : {}),
  };
}

/** Why a conditional PATCH wrote nothing, read from the agent as it is now. */
async function refused(
  tenant: Tenant,
  before: AgentRow,
  metadata: ReturnType<typeof metadataEdit>,
): Promise<never> {
  const now = await findAgent(tenant, before.id);
  assertNotRevoked(now);
  if (metadata && Object.keys(metadata.mergeInto(now.metadata)).length > MAX_METADATA_KEYS) {
    throw tooManyKeys();
  }
  throw new ApiError("agent_status_changed", [
    { path: "status", message: "the agent's status changed meanwhile; read it and retry" },
  ]);
}

/**
 * Registers an agent for an active principal of the org, committing `agent.created` in the
 * transaction that inserts it.
 */
export async function createAgent(tenant: Tenant, body: z.infer<typeof CreateAgent>) {
  // The principal is checked first (nothing is recorded for a missing or erased one); the
  // trust a new agent starts with is the database's one trust function's, read in the same
  // round trip, so the entry's payload is the row the insert makes.
  const [principal, trust] = await tenant.batch((db) => [
    principalStatus(db, body.principal_id),
    db.execute(sql`select score, agent_risk_tier(score) as tier from
      (select agent_trust_score('active', 'unverified', 0, 0, 0, 0, 0, 0) as score) fresh`),
  ]);
  assertPrincipalActive(principal[0]?.status);
  const fresh = trust.rows[0] as { score: number | string; tier: AgentRow["riskTier"] };
  const orgId = (await tenant.caller()).orgId;
  const now = new Date();
  const row = newAgentRow({
    id: newId(now.getTime()),
    orgId,
    principalId: body.principal_id,
    name: body.name,
    description: body.description ?? null,
    metadata: body.metadata ?? {},
    trustScore: Number(fresh.score),
    riskTier: fresh.tier,
    createdAt: now,
  });
  // Inserted only if the principal is still an active one of this org (RLS hides the others):
  // `for share` holds it against a concurrent erasure until this commits (an erasure that came
  // first makes the re-checked row erased, and nothing is inserted). Its status-list place is
  // its entry's (docs/status-lists.md, "Issued"), so the payload, hashed before, has none.
  const { results } = await commit(
    tenant,
    { type: "agent.created", subject: { type: "agent", id: row.id }, payload: agentFacts(row) },
    (db, { entry }) => {
      const place = placeColumns(tenant.env, orgId, entry.sequence);
      return [
        db.execute(sql`
      insert into agents (id, principal_id, name, description, metadata, trust_reason,
        created_at, updated_at, status_list, status_idx)
      select ${row.id}, p.id, ${row.name}, ${row.description},
             ${JSON.stringify(row.metadata)}::jsonb, ${row.trustReason},
             ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz,
             ${place.statusList}, ${place.statusIdx}
      from principals p where p.id = ${body.principal_id} and p.status = 'active'
      for share of p`),
        db.select().from(agents).where(eq(agents.id, row.id)),
        principalStatus(db, body.principal_id),
      ];
    },
  );
  const [, created, after] = results;
  if (!created[0]) {
    // The principal was erased between the read and the insert: answered as the read would.
    assertPrincipalActive(after[0]?.status);
    throw new ApiError("internal_error");
  }
  return toAgent(created[0], tenant.env);
}

/** A new agent's row as the insert makes it: the table's defaults, and what is given. */
function newAgentRow(
  given: Pick<
    AgentRow,
    | "id"
    | "orgId"
    | "principalId"
    | "name"
    | "description"
    | "metadata"
    | "trustScore"
    | "riskTier"
    | "createdAt"
  >,
): AgentRow {
  return {
    ...given,
    status: "active",
    trustReason: "registered",
    activeKeys: 0,
    approvals: 0,
    reviews: 0,
    denials: 0,
    suspensions: 0,
    confirmedFrauds: 0,
    confirmedLegitimate: 0,
    cardStatus: "unverified",
    cardReasons: [],
    cardSignatures: [],
    cardDigest: null,
    cardVersion: null,
    cardName: null,
    cardUrl: null,
    cardSourceUrl: null,
    cardCheckedAt: null,
    cardVerifiedAt: null,
    updatedAt: given.createdAt,
    suspendedAt: null,
    revokedAt: null,
    statusList: null,
    statusIdx: null,
  };
}

function principalStatus(db: Database, id: string) {
  return db.select({ status: principals.status }).from(principals).where(eq(principals.id, id));
}

/** An agent may be registered only for an active principal of the org (400 or 409). */
function assertPrincipalActive(status: string | undefined): void {
  if (status === "active") return;
  if (status === "erased") {
    throw new ApiError("principal_erased", [
      { path: "principal_id", message: "the principal is erased" },
    ]);
  }
  throw new ApiError("invalid_request", [{ path: "principal_id", message: "no such principal" }]);
}

/** A page of the org's agents, newest first, by status, tier and principal if asked. */
export async function listAgents(tenant: Tenant, query: z.infer<typeof ListAgentsQuery>) {
  const { limit, cursor, status, risk_tier, principal_id } = query;
  const list = await listById(
    tenant,
    agents,
    { limit, cursor },
    status ? eq(agents.status, status) : undefined,
    risk_tier ? eq(agents.riskTier, risk_tier) : undefined,
    principal_id ? eq(agents.principalId, principal_id) : undefined,
  );
  return mapPage(list, (row) => toAgent(row, tenant.env));
}

/**
 * Applies a PATCH (fields, metadata merge, status move) conditional on the status read, and
 * commits what changed with its entry; a PATCH that changes nothing records nothing.
 */
export async function updateAgent(tenant: Tenant, id: string, body: UpdateBody) {
  const current = await findAgent(tenant, id);
  if (body.status !== "revoked") assertNotRevoked(current);
  const edits = fieldEdits(current, body);
  // A revoked agent changes no more; asking for the revocation again is a harmless retry.
  if (edits.changed.length > 0) assertNotRevoked(current);
  const at = new Date();
  const change = statusChange(current, body.status, at);
  if (!change && edits.changed.length === 0) return toAgent(current, tenant.env);
  const changed = [...edits.changed, ...(change ? ["status"] : [])].sort();
  // Conditional on the status read above: a concurrent status change wins, and this answers
  // 409 (its entry stays as the trace of the attempt). A revocation is not: its sequencing
  // voided the agent's grants, so it lands over any status but revoked. The metadata limit
  // holds for the merged value as it is written. A status or trust change writes events: the
  // batch sends their webhook deliveries. A status move settles the places of the agent, its
  // keys and its grants from the states as written (docs/status-lists.md, "Issued").
  const revoking = body.status === "revoked" && current.status !== "revoked";
  const proposed = ledgerChange(current, body, changed, at);
  const { results } = await commit(
    tenant,
    proposed,
    (db, { terms, replayed }) => {
      // A racing twin of this status move was recorded first: only that very change is
      // finished here (at its time); another answers 409, to be read and retried.
      if (replayed && !sameMove(terms, proposed.payload)) {
        throw new ApiError("agent_status_changed", [
          { path: "status", message: "the agent's status changed meanwhile; read it and retry" },
        ]);
      }
      const set = {
        ...edits.set,
        ...change?.set,
        ...(revoking && terms.revoked_at ? { revokedAt: new Date(terms.revoked_at) } : {}),
      };
      return [
        db
          .update(agents)
          .set({ ...set, trustReason: change?.reason ?? "updated" })
          .where(
            revoking
              ? and(eq(agents.id, current.id), ne(agents.status, "revoked"))
              : and(
                  eq(agents.id, current.id),
                  eq(agents.status, current.status),
                  edits.metadata?.fits,
                ),
          )
          .returning(),
        ...(change ? settleAgentPlaces(db, current.id, at) : []),
      ];
    },
    { webhooks: true },
  );
  const row = results[0][0];
  if (row) return toAgent(row, tenant.env);
  // A revocation that a twin landed first: the agent as it left it.
  if (revoking) return toAgent(await findAgent(tenant, id), tenant.env);
  return toAgent(await refused(tenant, current, edits.metadata), tenant.env);
}

/** Whether a replayed status move is this one: the same move and the same patch. */
function sameMove(
  first: ReturnType<typeof ledgerChange>["payload"],
  mine: ReturnType<typeof ledgerChange>["payload"],
): boolean {
  return (
    first.status.to === mine.status.to &&
    canonicalize(first.patch) === canonicalize(mine.patch) &&
    canonicalize(first.changed) === canonicalize(mine.changed)
  );
}

/** A page of the agent's trust history, newest first (404: no such agent). */
export async function agentTrustHistoryPage(
  tenant: Tenant,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const { limit, cursor } = query;
  const after = decodeSequenceCursor(cursor);
  const [found, rows] = await tenant.batch((db) => [
    db.select({ id: agents.id }).from(agents).where(eq(agents.id, id)),
    db
      .select()
      .from(agentTrustHistory)
      .where(
        and(
          eq(agentTrustHistory.agentId, id),
          after ? lt(agentTrustHistory.seq, after) : undefined,
        ),
      )
      .orderBy(desc(agentTrustHistory.seq))
      .limit(limit + 1),
  ]);
  orNotFound(found[0]);
  const events = rows.map((row) => ({
    seq: row.seq,
    object: "trust_event" as const,
    id: row.id,
    agent_id: row.agentId,
    reason: row.reason,
    status: row.status as AgentRow["status"],
    trust_score: row.trustScore,
    risk_tier: row.riskTier as AgentRow["riskTier"],
    previous_score: row.previousScore,
    previous_tier: row.previousTier as AgentRow["riskTier"] | null,
    created: row.createdAt.toISOString(),
  }));
  const result = page(events, limit, (e) => e.seq);
  return { ...result, data: result.data.map(({ seq, ...event }) => event) };
}
