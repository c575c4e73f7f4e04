import { and, asc, count, desc, eq, gte, isNotNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import {
  actionDecisions,
  actionRedemptions,
  apiKeys,
  assessments,
  auditCheckpoints,
  auditEntries,
  controlEffects,
} from "../db/schema";
import { type EffectFacts, effectGaps, type Gap, neverRedeemedGap } from "./gaps";

/** At most this many effects (and as many unredeemed grants) are evaluated per computation. */
export const MAX_EFFECTS = 10_000;
/** At most this many gaps are listed; the counts still cover every evaluated effect. */
export const MAX_GAPS = 1_000;

export interface Period {
  from: Date;
  to: Date;
}

/**
 * The effect that first claimed the same gate (by occurrence, then id): the single use of a
 * grant or an assessment belongs to it, every later claim is a reuse. A grant (or a decision
 * without one) has no mode, so its claims are compared across the org's modes; an assessment
 * has one, so only effects of its mode can claim it.
 */
const firstClaimant = sql<string | null>`(
  select f.id::text from control_effects f
  where f.org_id = ${controlEffects.orgId} and f.gate_claim = ${controlEffects.gateClaim}
    and (f.livemode = ${controlEffects.livemode} or f.gate_claim not like 'assessment:%')
  order by f.occurred_at, f.id limit 1)`;

/** The decision an effect's gate names: by its id, or through its grant. */
const decisionOfGate = and(
  eq(actionDecisions.orgId, controlEffects.orgId),
  or(
    and(eq(controlEffects.gateType, "decision"), eq(actionDecisions.id, controlEffects.gateId)),
    and(eq(controlEffects.gateType, "grant"), eq(actionDecisions.grantId, controlEffects.gateId)),
  ),
);

/** The mode of the credential that redeemed: an API key's own; a user (a session) is live. */
const executorLive = sql<boolean | null>`case
  when ${actionRedemptions.executorType} = 'user' then true
  when ${actionRedemptions.executorType} = 'api_key' and ${apiKeys.mode} is not null
    then ${apiKeys.mode} = 'live'
  else null end`;

/** Effects with the facts of their gates: one row each (every join finds at most one row). */
export function effectFactsQuery(db: Database, where: SQL | undefined, limit: number) {
  return db
    .select({
      // Only what matching needs (never the metadata).
      effect: {
        id: controlEffects.id,
        livemode: controlEffects.livemode,
        reference: controlEffects.reference,
        occurredAt: controlEffects.occurredAt,
        action: controlEffects.action,
        resource: controlEffects.resource,
        amount: controlEffects.amount,
        currency: controlEffects.currency,
        gateType: controlEffects.gateType,
        gateId: controlEffects.gateId,
        auditSequence: controlEffects.auditSequence,
      },
      firstClaimant,
      assessment: {
        id: assessments.id,
        decision: assessments.decision,
        createdAt: assessments.createdAt,
        amount: assessments.amount,
        currency: assessments.currency,
      },
      decision: {
        id: actionDecisions.id,
        decision: actionDecisions.decision,
        grantId: actionDecisions.grantId,
        grantExpiresAt: actionDecisions.grantExpiresAt,
        audience: actionDecisions.audience,
        action: actionDecisions.action,
        resource: actionDecisions.resource,
        amount: actionDecisions.amount,
        currency: actionDecisions.currency,
      },
      redemption: {
        redeemedAt: actionRedemptions.redeemedAt,
        executorType: actionRedemptions.executorType,
        executorId: actionRedemptions.executorId,
        executorLive,
        action: actionRedemptions.action,
        resource: actionRedemptions.resource,
        amount: actionRedemptions.amount,
        currency: actionRedemptions.currency,
      },
    })
    .from(controlEffects)
    .leftJoin(
      assessments,
      and(
        eq(controlEffects.gateType, "assessment"),
        eq(assessments.orgId, controlEffects.orgId),
        eq(assessments.id, controlEffects.gateId),
        eq(assessments.livemode, controlEffects.livemode),
      ),
    )
    .leftJoin(actionDecisions, decisionOfGate)
    .leftJoin(
      actionRedemptions,
      and(
        eq(actionRedemptions.orgId, actionDecisions.orgId),
        eq(actionRedemptions.grantId, actionDecisions.grantId),
      ),
    )
    .leftJoin(
      apiKeys,
      and(
        eq(apiKeys.orgId, actionRedemptions.orgId),
        eq(actionRedemptions.executorType, "api_key"),
        sql`${apiKeys.id}::text = ${actionRedemptions.executorId}`,
      ),
    )
    .where(where)
    .orderBy(asc(controlEffects.occurredAt), asc(controlEffects.id))
    .limit(limit);
}

type FactsRow = Awaited<ReturnType<typeof effectFactsQuery>>[number];

export function factsOf(row: FactsRow): EffectFacts {
  const e = row.effect;
  return {
    id: e.id,
    livemode: e.livemode,
    reference: e.reference,
    occurredAt: e.occurredAt,
    action: e.action,
    resource: e.resource,
    amount: e.amount,
    currency: e.currency,
    gateType: e.gateType,
    gateId: e.gateId,
    firstClaimant: row.firstClaimant,
    assessment: row.assessment,
    decision: row.decision,
    redemption: row.redemption,
  };
}

function inPeriod(column: Parameters<typeof gte>[0], period: Period) {
  return and(gte(column, period.from), lt(column, period.to));
}

/**
 * Everything a coverage computation reads, in one batch (one round trip, which also
 * authenticates): the period's effects with their gates, the grants of the period that
 * expired unredeemed, the gate counts, and the ledger's head and newest checkpoint.
 */
export async function readCoverage(tenant: Tenant, period: Period, now: Date) {
  const livemode = tenant.livemode;
  const [effects, unredeemed, approved, issued, redeemed, head, checkpoint] = await tenant.batch(
    (db) => [
      effectFactsQuery(
        db,
        and(eq(controlEffects.livemode, livemode), inPeriod(controlEffects.occurredAt, period)),
        MAX_EFFECTS + 1,
      ),
      db
        .select({
          id: actionDecisions.id,
          grantId: actionDecisions.grantId,
          grantExpiresAt: actionDecisions.grantExpiresAt,
        })
        .from(actionDecisions)
        .where(
          and(
            isNotNull(actionDecisions.grantId),
            inPeriod(actionDecisions.createdAt, period),
            lte(actionDecisions.grantExpiresAt, now),
            sql`not exists (select 1 from action_redemptions r
                            where r.org_id = ${actionDecisions.orgId}
                              and r.grant_id = ${actionDecisions.grantId})`,
          ),
        )
        .orderBy(asc(actionDecisions.createdAt), asc(actionDecisions.id))
        .limit(MAX_EFFECTS + 1),
      db
        .select({ n: count() })
        .from(assessments)
        .where(
          and(
            eq(assessments.livemode, livemode),
            eq(assessments.decision, "approve"),
            inPeriod(assessments.createdAt, period),
          ),
        ),
      db
        .select({ n: count() })
        .from(actionDecisions)
        .where(
          and(isNotNull(actionDecisions.grantId), inPeriod(actionDecisions.createdAt, period)),
        ),
      db
        .select({ n: count() })
        .from(actionRedemptions)
        .where(inPeriod(actionRedemptions.redeemedAt, period)),
      db
        .select({ sequence: auditEntries.sequence, hash: auditEntries.hash })
        .from(auditEntries)
        .orderBy(desc(auditEntries.sequence))
        .limit(1),
      db.select().from(auditCheckpoints).orderBy(desc(auditCheckpoints.treeSize)).limit(1),
    ],
  );
  return {
    livemode,
    effects,
    unredeemed,
    counts: {
      approved_assessments: approved[0]?.n ?? 0,
      grants_issued: issued[0]?.n ?? 0,
      grants_redeemed: redeemed[0]?.n ?? 0,
    },
    head: head[0] ?? null,
    checkpoint: checkpoint[0] ?? null,
  };
}

/** The coverage of a period, as `GET /v1/control-coverage` answers it. */
export function coverageOf(read: Awaited<ReturnType<typeof readCoverage>>, period: Period) {
  const evaluated = read.effects.slice(0, MAX_EFFECTS).map(factsOf);
  const unredeemed = read.unredeemed.slice(0, MAX_EFFECTS);
  const gaps: Gap[] = [];
  let byRedemption = 0;
  let byAssessment = 0;
  for (const facts of evaluated) {
    const found = effectGaps(facts);
    if (found.length === 0) {
      if (facts.gateType === "assessment") byAssessment += 1;
      else byRedemption += 1;
    }
    gaps.push(...found);
  }
  const gated = byRedemption + byAssessment;
  for (const grant of unredeemed) {
    if (grant.grantId && grant.grantExpiresAt) {
      gaps.push(neverRedeemedGap(grant.id, grant.grantId, grant.grantExpiresAt));
    }
  }
  const observed = evaluated.length;
  return {
    object: "control_coverage" as const,
    livemode: read.livemode,
    period: { from: period.from.toISOString(), to: period.to.toISOString() },
    effects: {
      observed,
      gated,
      gated_by_redemption: byRedemption,
      gated_by_assessment: byAssessment,
      ungated: observed - gated,
    },
    gates: read.counts,
    coverage_ratio: observed === 0 ? null : gated / observed,
    redemption_coverage_ratio: observed === 0 ? null : byRedemption / observed,
    truncated: read.effects.length > MAX_EFFECTS || read.unredeemed.length > MAX_EFFECTS,
    gaps: gaps.slice(0, MAX_GAPS),
    gaps_truncated: gaps.length > MAX_GAPS,
  };
}

/**
 * `sha256:hex(SHA-256(JCS([[effect id, audit sequence], …])))` over the evaluated effects in
 * evaluation order: ties a report to the `control_effect.observed` entries it covered.
 */
export function effectsDigest(read: Awaited<ReturnType<typeof readCoverage>>): string {
  const pairs = read.effects
    .slice(0, MAX_EFFECTS)
    .map((r) => [r.effect.id, r.effect.auditSequence]);
  return `sha256:${toHex(sha256(utf8(canonicalize(pairs))))}`;
}
