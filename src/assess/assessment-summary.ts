import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { agents, assessments, principals, reviews } from "../db/schema";
import type { Env } from "../env";
import { type MasterKey, masterKey, openPersonalData } from "../identity/personal-data";
import { logError } from "../lib/log";
import type { A2ABinding, AssessmentSummary, Decider, ModelOutcome } from "../schemas/assessments";
import type { ActionKind } from "../schemas/vocabulary";
import type { CredentialOutcome } from "./ap2-credential";
import { UNCHECKED_RULES } from "./overrides";
import type { RejectionReason, Signal } from "./signals";

/**
 * The assessment as lists show it (`AssessmentSummary`): the stored row, the payee and the
 * transaction id from its recorded inputs, the agent and its principal as they are now, and the
 * review it opened. One statement for a whole page: the joins below, on the org's own rows
 * (each join names the org, and row-level security holds on every table).
 */

/** The recorded inputs' payee and transaction (src/assess/rules/inputs.ts): what the filters index. */
export const payeeIdOf = sql<string | null>`(${assessments.inputs} #>> '{facts,payee,id}')`;
export const payeeNameOf = sql<string | null>`(${assessments.inputs} #>> '{facts,payee,name}')`;
export const transactionIdOf = sql<
  string | null
>`(${assessments.inputs} #>> '{facts,transactionId}')`;

/** The columns a summary is built from; select them with `summaryJoins` applied. */
export const summaryColumns = {
  id: assessments.id,
  createdAt: assessments.createdAt,
  kind: assessments.kind,
  livemode: assessments.livemode,
  decision: assessments.decision,
  riskLevel: assessments.riskLevel,
  riskScore: assessments.riskScore,
  reason: assessments.reason,
  agentId: assessments.agentId,
  a2a: assessments.a2a,
  amount: assessments.amount,
  currency: assessments.currency,
  model: assessments.model,
  credential: assessments.credential,
  signals: assessments.signals,
  rejectionReasons: assessments.rejectionReasons,
  payeeId: payeeIdOf,
  payeeName: payeeNameOf,
  transactionId: transactionIdOf,
  agentName: agents.name,
  principalId: principals.id,
  principalOrg: principals.orgId,
  principalStatus: principals.status,
  principalKey: principals.wrappedKey,
  principalData: principals.ciphertext,
  reviewId: reviews.id,
  reviewStatus: reviews.status,
  reviewDecision: reviews.decision,
  reviewResolvedBy: reviews.resolvedBy,
};
/** The join conditions: the acting agent, its principal, the review the assessment opened. */
export const summaryJoins = {
  agent: and(eq(agents.orgId, assessments.orgId), eq(agents.id, assessments.agentId)),
  principal: and(eq(principals.orgId, agents.orgId), eq(principals.id, agents.principalId)),
  review: and(eq(reviews.orgId, assessments.orgId), eq(reviews.assessmentId, assessments.id)),
};

/** Summaries of the caller's assessments (add `.where`, `.orderBy`, `.limit`). */
export function selectSummaries(db: Database) {
  return db
    .select(summaryColumns)
    .from(assessments)
    .leftJoin(agents, summaryJoins.agent)
    .leftJoin(principals, summaryJoins.principal)
    .leftJoin(reviews, summaryJoins.review)
    .$dynamic();
}
export type SummaryRow = Awaited<ReturnType<typeof selectSummaries>>[number];

const RULE_MATCHED = /policy rule "([a-z0-9][a-z0-9_.-]{0,63})" matched/;
const RULE_UNCHECKED = "a policy rule could not be checked";

/**
 * Who made the decision, from what the record says (docs/assess.md, "Who decided"): a person
 * once a review was resolved; a rule when the reason names a rule of the policy's list that
 * matched, a limit of the policy (`max_amount`, `currencies`, `geo`, `velocity`) whose rejection
 * the reason gives, or a limit the request gave no way to check; the model when the org's
 * active model scored it; else the score (the service's own signals and checks).
 */
export function decidedBy(row: SummaryRow): AssessmentSummary["decided_by"] {
  const by = (type: Decider, rule: string | null = null, reviewer: string | null = null) => ({
    type,
    rule,
    reviewer,
  });
  if (row.reviewStatus === "resolved") {
    const resolver = row.reviewResolvedBy as { id?: unknown } | null;
    return by("person", null, typeof resolver?.id === "string" ? resolver.id : null);
  }
  const matched = RULE_MATCHED.exec(row.reason);
  if (matched?.[1]) return by("rule", matched[1]);
  const reasons = (row.rejectionReasons as RejectionReason[] | null) ?? [];
  const cited = reasons[0];
  if (row.decision === "deny" && cited?.category === "policy") return by("rule", cited.key);
  if (row.reason.includes(RULE_UNCHECKED)) {
    const signals = (row.signals as Signal[] | null) ?? [];
    return by("rule", signals.find((s) => UNCHECKED_RULES.has(s.type))?.type ?? null);
  }
  return by(row.model === null ? "score" : "model");
}

function credentialOf(row: SummaryRow): AssessmentSummary["credential"] {
  const credential = row.credential as CredentialOutcome | null;
  if (credential === null) return null;
  if (credential.verified) return { status: "verified", failure: null, reason: null };
  const failure = credential.failure;
  const reasons = (row.rejectionReasons as RejectionReason[] | null) ?? [];
  const words = reasons.find((r) => failure !== null && r.key === `credential_${failure}`);
  return { status: "refused", failure, reason: words?.description ?? null };
}

/** The summaries of a page of rows, the principals' names opened once each. */
export async function presentSummaries(env: Env, rows: SummaryRow[]): Promise<AssessmentSummary[]> {
  const names = await principalNames(env, rows);
  return rows.map((row) => summaryOf(row, names));
}

function summaryOf(row: SummaryRow, names: Map<string, string | null>): AssessmentSummary {
  return {
    id: row.id,
    object: "assessment",
    created: row.createdAt.toISOString(),
    kind: row.kind as ActionKind,
    livemode: row.livemode,
    decision: row.decision,
    risk_level: row.riskLevel,
    risk_score: row.riskScore,
    reason: row.reason,
    agent_id: row.agentId,
    a2a: row.a2a as A2ABinding | null,
    amount: row.amount,
    currency: row.currency,
    payee: row.payeeId === null ? null : { id: row.payeeId, name: row.payeeName },
    transaction_id: row.transactionId,
    agent:
      row.agentId !== null && row.agentName !== null
        ? { id: row.agentId, name: row.agentName }
        : null,
    principal:
      row.principalId === null
        ? null
        : {
            id: row.principalId,
            name: names.get(row.principalId) ?? null,
            erased: row.principalStatus === "erased",
          },
    model: (row.model as ModelOutcome | null) ?? null,
    credential: credentialOf(row),
    decided_by: decidedBy(row),
    review:
      row.reviewId === null || row.reviewStatus === null
        ? null
        : {
            id: row.reviewId,
            status: row.reviewStatus,
            decision: row.reviewDecision ?? null,
          },
  };
}

/**
 * The names of the page's principals that still have personal data: sealed, opened in the
 * Worker as GET /v1/principals opens them. A missing master key or a record that does not open
 * leaves the name null rather than failing the list (the principal's own page says why).
 */
async function principalNames(env: Env, rows: SummaryRow[]): Promise<Map<string, string | null>> {
  const sealed = new Map<string, SummaryRow>();
  for (const row of rows) {
    if (row.principalId && row.principalKey && row.principalData && row.principalOrg) {
      sealed.set(row.principalId, row);
    }
  }
  const names = new Map<string, string | null>();
  if (sealed.size === 0) return names;
  let master: MasterKey;
  try {
    master = await masterKey(env);
  } catch {
    return names;
  }
  await Promise.all(
    [...sealed.values()].map(async (row) => {
      const id = row.principalId as string;
      try {
        const data = await openPersonalData(
          master,
          { orgId: row.principalOrg as string, principalId: id },
          { wrappedKey: row.principalKey as string, ciphertext: row.principalData as string },
        );
        names.set(id, typeof data.name === "string" ? data.name : null);
      } catch (error) {
        logError("principal name unreadable", { principal: id, error: String(error) });
        names.set(id, null);
      }
    }),
  );
  return names;
}
