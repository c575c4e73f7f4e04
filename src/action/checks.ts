import type { ReasonCode } from "../schemas/vocabulary";
import type { Reason } from "./reasons";
import type { DecisionRow, MandateRow } from "./records";

/**
 * The checks of a decision: pure, so every reason can be tested without a request. A decision
 * is an ALLOW when no check gives a reason (docs/action-authority.md lists them).
 */

/** What a decision is asked about: one action on one resource, with an amount where it applies. */
export interface ActionRequest {
  action: string;
  resource: string;
  amount: number | null;
  currency: string | null;
}

export type AgentSnapshot = DecisionRow["agent"];

/**
 * A mandate's resource is an exact resource, or a pattern: a prefix ending in `*`, matching
 * every resource that starts with the prefix (`merchant:acme/*`; `*` alone matches all).
 */
export function resourceMatches(pattern: string, resource: string): boolean {
  return pattern.endsWith("*") ? resource.startsWith(pattern.slice(0, -1)) : pattern === resource;
}

/** The reasons to deny, all of them, in a fixed order; none means ALLOW. */
export function denyReasons(
  mandate: MandateRow,
  agent: AgentSnapshot,
  request: ActionRequest,
  now: Date,
): Reason[] {
  const reasons: Reason[] = [];
  const deny = (code: ReasonCode, message: string) => reasons.push({ code, message });

  if (mandate.status === "revoked") deny("mandate_revoked", "the mandate was revoked");
  if (now < mandate.notBefore) {
    deny("mandate_not_yet_valid", `the mandate is valid from ${mandate.notBefore.toISOString()}`);
  }
  if (now >= mandate.expiresAt) {
    deny("mandate_expired", `the mandate expired at ${mandate.expiresAt.toISOString()}`);
  }
  if (request.action !== mandate.action) {
    deny("action_mismatch", `the mandate covers the action "${mandate.action}" only`);
  }
  if (!resourceMatches(mandate.resource, request.resource)) {
    deny("resource_mismatch", `the resource does not match "${mandate.resource}"`);
  }
  amountReasons(mandate, request, deny);
  if (mandate.maxUses !== null && mandate.uses >= mandate.maxUses) {
    deny("uses_exhausted", `all ${mandate.maxUses} uses of the mandate are spent`);
  }
  if (agent.status === "suspended") deny("agent_suspended", "the agent is suspended");
  if (agent.status === "revoked") deny("agent_revoked", "the agent is revoked");
  if (agent.status === "active" && agent.risk_tier === "critical") {
    deny("agent_risk_critical", `the agent's trust score is ${agent.trust_score} (tier critical)`);
  }
  return reasons;
}

function amountReasons(
  mandate: MandateRow,
  request: ActionRequest,
  deny: (code: ReasonCode, message: string) => void,
) {
  const bounded = mandate.maxAmountPerUse !== null || mandate.maxAmountTotal !== null;
  if (request.amount === null) {
    if (bounded || mandate.currency !== null) {
      deny("amount_required", "the mandate bounds amounts: the request must state one");
    }
    return;
  }
  if (mandate.currency !== null && request.currency !== mandate.currency) {
    // Amounts in another currency cannot be held against these limits at all.
    deny("currency_mismatch", `the mandate is in ${mandate.currency}`);
    return;
  }
  if (mandate.maxAmountPerUse !== null && request.amount > mandate.maxAmountPerUse) {
    deny("amount_exceeds_per_use", `at most ${mandate.maxAmountPerUse} per use`);
  }
  if (
    mandate.maxAmountTotal !== null &&
    mandate.amountUsed + request.amount > mandate.maxAmountTotal
  ) {
    const left = Math.max(0, mandate.maxAmountTotal - mandate.amountUsed);
    deny("amount_exceeds_total", `${left} of the total of ${mandate.maxAmountTotal} is left`);
  }
}

export const LOST_RACE: Reason = {
  code: "limits_exhausted",
  message: "a concurrent decision took what was left of the mandate's limits",
};
