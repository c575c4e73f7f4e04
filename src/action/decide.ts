import { eq, sql } from "drizzle-orm";
import type { Caller } from "../auth/caller";
import { rolesWithScope } from "../auth/scopes";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { columnJson } from "../db/column-json";
import { actionDecisions, actionMandates, agents } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { placeReference } from "../status-lists/indices";
import { placeColumns } from "../status-lists/places";
import { type ActionRequest, type AgentSnapshot, denyReasons, LOST_RACE } from "./checks";
import { grantExpiresAt, signGrant } from "./grant";
import type { Reason } from "./reasons";
import { type DecisionRow, decisionPayload, type MandateRow } from "./records";

/** The body of `POST /v1/action-mandates/{id}/decisions`, as validated. */
export interface DecisionBody extends ActionRequest {
  audience: string | null;
  grant: boolean;
}

type DecisionFacts = Omit<DecisionRow, "auditEntryId" | "auditSequence">;

/**
 * Decides one request against a mandate and records the decision. An ALLOW reserves one use
 * (and the amount) with a conditional UPDATE in the very transaction that stores it, so no two
 * ALLOWs can share the last use; one that loses that race is answered, and recorded, as a DENY.
 * Two database round trips (the read, which also authenticates, and the write) and one call to
 * the org's ledger object; a lost race adds one of each.
 */
export async function decide(
  tenant: Tenant,
  mandateId: string,
  body: DecisionBody,
): Promise<DecisionRow> {
  const now = new Date();
  const [found, audience] = await tenant.batch((db) => [
    selectMandate(db, mandateId),
    db.execute(audienceKnown(body.audience)),
  ]);
  const current = orNotFound(found[0]);
  const known = (audience as unknown as { rows: { known: boolean }[] }).rows[0]?.known === true;
  if (body.audience !== null && !known) {
    throw new ApiError("invalid_request", [
      {
        path: "audience",
        message: "not the id of an active API key with assess:write, nor of an owner, of this org",
      },
    ]);
  }
  const who = await tenant.caller();
  const reasons = denyReasons(current.mandate, current.agent, body, now);
  if (reasons.length > 0) return deny(tenant, who, current, body, reasons, now);
  return allow(tenant, who, current, body, now);
}

/**
 * The ALLOW path: sequence the entry, sign the grant (its status-list place is the entry's),
 * then reserve and store in one go.
 */
async function allow(
  tenant: Tenant,
  who: Caller,
  current: Current,
  body: DecisionBody,
  now: Date,
): Promise<DecisionRow> {
  const id = newId(now.getTime());
  const mandateId = current.mandate.id;
  const grant =
    body.grant && body.audience !== null
      ? { id: newId(now.getTime()), expiresAt: grantExpiresAt(now, current.mandate.expiresAt) }
      : null;
  const facts = factsOf(who, id, current, body, [], grant, now);
  const amount = body.amount ?? 0;
  let row: DecisionRow | undefined;
  const { results } = await commit(tenant, decisionChange(facts), async (db, { entry }) => {
    row = await withGrant(tenant, facts, entry, current.mandate.expiresAt);
    return [
      // Held until this commits: a status move of the agent (its own UPDATE) waits for it, so
      // the move's statement that settles the agent's grants' places sees this grant, or this
      // reservation sees the move (docs/status-lists.md, "Issued").
      db.execute(sql`select 1 from agents where id = ${current.agent.id} for share`),
      db.execute(sql`
      with reserved as (
        update action_mandates m set uses = m.uses + 1, amount_used = m.amount_used + ${amount}
        where m.id = ${mandateId} and m.status = 'active'
          and (m.max_uses is null or m.uses < m.max_uses)
          and (m.max_amount_total is null or m.amount_used + ${amount} <= m.max_amount_total)
          -- The running total stays exact in JSON (2^53 - 1), far from bigint's overflow.
          and m.amount_used + ${amount} <= 9007199254740991
          and exists (select 1 from agents a where a.id = m.agent_id
                      and a.status = 'active' and a.risk_tier <> 'critical')
        returning m.id
      )
      insert into action_decisions
      select * from json_populate_record(null::action_decisions,
        ${columnJson(actionDecisions, row)}::json)
      where exists (select 1 from reserved)`),
      db.select({ id: actionDecisions.id }).from(actionDecisions).where(eq(actionDecisions.id, id)),
      selectMandate(db, mandateId),
    ];
  });
  const [, , stored, after] = results;
  if (stored[0] && row) return row;
  // The reservation lost: the mandate as it is now says why (or a concurrent ALLOW took the
  // last of it between the read and the write). The entry sequenced for the ALLOW stays in
  // the ledger as the trace of an attempt that never took effect (docs/action-authority.md).
  const latest = after[0] ?? current;
  const why = denyReasons(latest.mandate, latest.agent, body, now);
  return deny(tenant, who, latest, body, why.length > 0 ? why : [LOST_RACE], now);
}

interface Current {
  mandate: MandateRow;
  agent: AgentSnapshot;
}

function selectMandate(db: Database, mandateId: string) {
  return db
    .select({
      mandate: actionMandates,
      agent: {
        id: agents.id,
        status: agents.status,
        trust_score: agents.trustScore,
        risk_tier: agents.riskTier,
      },
    })
    .from(actionMandates)
    .innerJoin(agents, eq(agents.id, actionMandates.agentId))
    .where(eq(actionMandates.id, mandateId));
}

/** Whether an audience names an executor of this org: an active key, or a user, that may redeem. */
function audienceKnown(audience: string | null) {
  const roles = `{${rolesWithScope("assess:write").join(",")}}`;
  return sql`select (
    exists (select 1 from api_keys k where k.id = ${audience}::uuid
            and k.revoked_at is null and 'assess:write' = any(k.scopes))
    or exists (select 1 from memberships m where m.user_id = ${audience}::uuid
               and m.role = any(${roles}::text[]))) as known`;
}

async function deny(
  tenant: Tenant,
  who: Caller,
  current: Current,
  body: DecisionBody,
  reasons: Reason[],
  now: Date,
): Promise<DecisionRow> {
  const facts = factsOf(who, newId(now.getTime()), current, body, reasons, null, now);
  const { entry } = await commit(tenant, decisionChange(facts), (db, { entry }) => [
    db.insert(actionDecisions).values(rowOf(facts, entry)),
  ]);
  return rowOf(facts, entry);
}

interface IssuedGrant {
  id: string;
  expiresAt: Date;
}

/**
 * The decision's row, naming its entry, with its grant (if any) signed: the grant's
 * status-list place is the one the entry's sequence gives (docs/status-lists.md, "Issued"),
 * named by its `status` claim, so it can be signed only once the entry is sequenced.
 */
async function withGrant(
  tenant: Tenant,
  facts: DecisionFacts,
  entry: StoredEntry,
  mandateExpiresAt: Date,
): Promise<DecisionRow> {
  const row = rowOf(facts, entry);
  if (!facts.grantId || facts.audience === null) return row;
  const place = placeColumns(tenant.env, facts.orgId, entry.sequence);
  const claims = {
    jti: facts.grantId,
    org: facts.orgId,
    decision: facts.id,
    mandate: facts.mandateId,
    action: facts.action,
    resource: facts.resource,
    amount: facts.amount,
    currency: facts.currency,
    aud: facts.audience,
    status: {
      status_list: placeReference(tenant.env, facts.orgId, {
        list: place.statusList,
        idx: place.statusIdx,
      }),
    },
  };
  const { jws } = await signGrant(tenant.env, claims, facts.createdAt, mandateExpiresAt);
  return { ...row, grantJws: jws, ...place };
}

function factsOf(
  who: Caller,
  id: string,
  current: Current,
  body: DecisionBody,
  reasons: Reason[],
  grant: IssuedGrant | null,
  now: Date,
): DecisionFacts {
  return {
    id,
    orgId: who.orgId,
    mandateId: current.mandate.id,
    decision: reasons.length === 0 ? "ALLOW" : "DENY",
    reasons,
    agent: current.agent,
    action: body.action,
    resource: body.resource,
    amount: body.amount,
    currency: body.currency,
    audience: body.audience,
    grantId: grant?.id ?? null,
    // Signed once the entry is sequenced (withGrant): the decision's payload records no JWS.
    grantJws: null,
    grantExpiresAt: grant?.expiresAt ?? null,
    statusList: null,
    statusIdx: null,
    createdAt: now,
  };
}

/** The decision's ledger change, once per decision. */
function decisionChange(facts: DecisionFacts) {
  return {
    type: "action_decision.created",
    subject: { type: "action_decision", id: facts.id },
    payload: decisionPayload(facts),
    once: [`action_decision:${facts.id}`],
  };
}

/** The decision's row, naming the entry it was committed with. */
function rowOf(facts: DecisionFacts, entry: StoredEntry): DecisionRow {
  return { ...facts, auditEntryId: entry.id, auditSequence: entry.sequence };
}
