import type { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import { actionDecisions, controlEffects } from "../db/schema";
import { ApiError } from "../errors";
import { commit, ORPHANED, type Sequenced } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { CreateControlEffect } from "../schemas/control-coverage";

export type EffectRow = typeof controlEffects.$inferSelect;
type CreateBody = z.infer<typeof CreateControlEffect>;
type GateType = NonNullable<EffectRow["gateType"]>;

/** How far ahead of the service's clock an observer's `occurred_at` may be. */
export const FUTURE_SKEW_MS = 60_000;

function gateOf(row: Pick<EffectRow, "gateType" | "gateId">) {
  if (row.gateType === null || row.gateId === null) return null;
  if (row.gateType === "assessment") return { assessment_id: row.gateId };
  if (row.gateType === "grant") return { grant_id: row.gateId };
  return { decision_id: row.gateId };
}

/** The record without `audit`: what the `control_effect.observed` entry's digest is of. */
export function effectPayload(row: Omit<EffectRow, "auditEntryId" | "auditSequence">) {
  return {
    object: "control_effect" as const,
    id: row.id,
    effect: row.effect,
    observer: row.observer,
    reference: row.reference,
    occurred_at: row.occurredAt.toISOString(),
    action: row.action,
    resource: row.resource,
    amount: row.amount,
    currency: row.currency,
    gate: gateOf(row),
    metadata: row.metadata,
    reported_by: { type: row.reportedByType, id: row.reportedById },
    created: row.createdAt.toISOString(),
    livemode: row.livemode,
  };
}

export function toEffect(row: EffectRow) {
  return {
    ...effectPayload(row),
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

/** The gate as reported, split into its type and id. */
function gateParts(gate: CreateBody["gate"]): { type: GateType; id: string } | null {
  if (gate === undefined) return null;
  if ("assessment_id" in gate) return { type: "assessment", id: gate.assessment_id };
  if ("grant_id" in gate) return { type: "grant", id: gate.grant_id };
  return { type: "decision", id: gate.decision_id };
}

/**
 * What a gate is, as far as single use goes: a decision is claimed through its grant, so an
 * effect naming the decision and one naming its grant claim the same thing.
 */
function claimOf(gate: { type: GateType; id: string } | null, grantOfDecision: string | null) {
  if (gate === null) return null;
  if (gate.type === "decision" && grantOfDecision !== null) return `grant:${grantOfDecision}`;
  return `${gate.type}:${gate.id}`;
}

/** The ledger's once key of a report: its mode, observer and reference, whatever they contain. */
function onceKey(livemode: boolean, observer: string, reference: string): string {
  const digest = toHex(sha256(utf8(canonicalize([livemode, observer, reference]))));
  return `control_effect.observed:${digest}`;
}

interface Attachment {
  payload: ReturnType<typeof effectPayload>;
  claim: string | null;
}

function rowOf(
  orgId: string,
  { payload, claim }: Attachment,
): Omit<EffectRow, "auditEntryId" | "auditSequence"> {
  const gate = payload.gate;
  const parts = gate === null ? null : gateParts(gate);
  return {
    id: payload.id,
    orgId,
    livemode: payload.livemode,
    effect: payload.effect,
    observer: payload.observer,
    reference: payload.reference,
    occurredAt: new Date(payload.occurred_at),
    action: payload.action,
    resource: payload.resource,
    amount: payload.amount,
    currency: payload.currency,
    gateType: parts?.type ?? null,
    gateId: parts?.id ?? null,
    gateClaim: claim,
    metadata: payload.metadata,
    reportedByType: payload.reported_by.type,
    reportedById: payload.reported_by.id,
    createdAt: new Date(payload.created),
  };
}

/**
 * Records one observed effect, once per (mode, observer, reference): one read (which also
 * authenticates, finds an earlier report and resolves a decision's grant), the ledger
 * object's sequencing with that triple as its once key, and one transaction writing the entry
 * and the row. A repeat, or a concurrent duplicate, gets the first report back (`created`
 * false).
 *
 * An orphan (a first report's writer died after its append and before its row, and its record
 * expired a day later) is gone past as `commit` describes.
 */
export async function reportEffect(
  tenant: Tenant,
  body: CreateBody,
): Promise<{ row: EffectRow; created: boolean }> {
  const now = new Date();
  if (Date.parse(body.occurred_at) > now.getTime() + FUTURE_SKEW_MS) {
    throw new ApiError("invalid_request", [
      { path: "occurred_at", message: "must not be in the future" },
    ]);
  }
  const livemode = tenant.livemode;
  const gate = gateParts(body.gate);
  const [earlier, decisions] = await tenant.batch((db) => [
    db.select().from(controlEffects).where(sameReport(livemode, body)),
    db
      .select({ grantId: actionDecisions.grantId })
      .from(actionDecisions)
      .where(gate?.type === "decision" ? eq(actionDecisions.id, gate.id) : sql`false`),
  ]);
  const first = earlier[0];
  if (first) return { row: first, created: false };
  const who = await tenant.caller();
  const draft = {
    id: newId(now.getTime()),
    orgId: who.orgId,
    livemode,
    effect: body.effect,
    observer: body.observer,
    reference: body.reference,
    occurredAt: new Date(body.occurred_at),
    action: body.action ?? null,
    resource: body.resource ?? null,
    amount: body.amount ?? null,
    currency: body.currency ?? null,
    gateType: gate?.type ?? null,
    gateId: gate?.id ?? null,
    gateClaim: claimOf(gate, decisions[0]?.grantId ?? null),
    metadata: body.metadata ?? {},
    reportedByType: who.actor.type,
    reportedById: who.actor.id,
    createdAt: now,
  };
  const attachment: Attachment = { payload: effectPayload(draft), claim: draft.gateClaim };
  // A loser of a race (or a retry after a failure) finishes the first report's write.
  const rowFor = ({ entry, terms, replayed }: Sequenced<Attachment>): EffectRow => ({
    ...(replayed ? rowOf(who.orgId, terms) : draft),
    auditEntryId: entry.id,
    auditSequence: entry.sequence,
  });
  const committed = await commit(
    tenant,
    {
      type: "control_effect.observed",
      subject: { type: "control_effect", id: draft.id },
      payload: attachment.payload,
      terms: attachment,
      once: [onceKey(livemode, body.observer, body.reference)],
    },
    (db, sequenced) => [db.insert(controlEffects).values(rowFor(sequenced)).onConflictDoNothing()],
    {
      // The first report's row was written then, unless its writer died.
      expired: async () => {
        const [again] = await tenant.batch((db) => [
          db.select().from(controlEffects).where(sameReport(livemode, body)),
        ]);
        return again[0] ? { row: again[0], created: false } : ORPHANED;
      },
    },
  );
  if (!("entry" in committed)) return committed;
  return { row: rowFor(committed), created: !committed.replayed };
}

/** The one report of an observer's reference in a mode. */
function sameReport(livemode: boolean, body: Pick<CreateBody, "observer" | "reference">) {
  return and(
    eq(controlEffects.livemode, livemode),
    eq(controlEffects.observer, body.observer),
    eq(controlEffects.reference, body.reference),
  );
}
