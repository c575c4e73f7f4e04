import type { Decision as Verdict } from "../schemas/vocabulary";
import type { RiskInput } from "./risk-model";
import type { CompiledRule } from "./rules/evaluate";
import { type RejectionReason, SIGNAL_CATALOG, type Signal } from "./signals";

/** What a decision cannot go below, and why: a finding no score may outweigh. */
export interface Override {
  decision: Verdict;
  because: string;
}

/**
 * Signals no approve rule can overrule: the agent is not identified (or not as claimed), or the
 * mandate leaves what is being approved in doubt. The model's band decides then.
 */
export const APPROVE_BARRED_BY = new Set([
  "agent_unknown",
  "key_unregistered",
  "card_unverified",
  "card_unknown",
  "payee_unverifiable",
  "execution_date_unreadable",
]);

/** A policy rule the request gave no way to check: it is never passed silently. */
export const UNCHECKED_RULES: ReadonlySet<string> = new Set([
  "geo_unknown",
  "amount_unknown",
  "velocity_unknown",
]);

/**
 * What raises the band whatever the score: in order of precedence, the first one of the final
 * decision's rank gives the reason. Each is read from the input or the stages' findings, so it
 * holds whichever stage failed.
 */
export function overridesOf(
  input: RiskInput,
  /** The stages that failed. */
  faults: readonly string[],
  reasons: RejectionReason[],
  signals: Signal[],
  matched: CompiledRule | null,
) {
  const { agent, key, conflict } = input.identity;
  const overrides: Override[] = [];
  // Read from the input, not from the kya stage's result: it holds even when kya failed.
  if (agent?.status === "revoked") {
    overrides.push({ decision: "deny", because: `agent ${agent.id} is revoked` });
  }
  const [first, ...more] = reasons;
  if (first) {
    const others =
      more.length === 0 ? "" : `, and ${more.length} more reason${more.length > 1 ? "s" : ""}`;
    overrides.push({ decision: "deny", because: `${first.description}${others}` });
  }
  if (faults.length > 0) {
    overrides.push({
      decision: "review",
      because:
        `internal fault in ${faults.join(" and ")}; ` +
        "never approved while a component is faulty",
    });
  }
  if (agent?.status === "suspended") {
    overrides.push({ decision: "review", because: `agent ${agent.id} is suspended` });
  }
  if (key === "revoked") {
    overrides.push({ decision: "review", because: SIGNAL_CATALOG.key_revoked.text });
  }
  if (conflict) {
    overrides.push({ decision: "review", because: SIGNAL_CATALOG.identity_conflict.text });
  }
  if (input.httpSignature?.binding === "mismatch") {
    overrides.push({
      decision: "review",
      because: SIGNAL_CATALOG.http_signature_agent_mismatch.text,
    });
  }
  // The credential's status list (docs/status-lists.md): read from the input, like the agent's
  // status, so it holds whichever stage failed.
  const status = input.credential?.verified ? input.credential.status : undefined;
  if (status?.state === "suspended" || (status?.state === "unknown" && status.required)) {
    const type =
      status.state === "suspended" ? "credential_suspended" : "credential_status_unknown";
    overrides.push({
      decision: "review",
      because: `${SIGNAL_CATALOG[type].text} (${status.detail})`,
    });
  }
  if (matched?.action === "review") {
    overrides.push({ decision: "review", because: ruleText(matched) });
  }
  const unchecked = signals.find((s) => UNCHECKED_RULES.has(s.type));
  if (unchecked) {
    const text = SIGNAL_CATALOG[unchecked.type as keyof typeof SIGNAL_CATALOG].text;
    overrides.push({ decision: "review", because: `a policy rule could not be checked: ${text}` });
  }
  return overrides;
}

/** The reason a matched rule gives. */
export function ruleText(rule: CompiledRule): string {
  const text = `policy rule "${rule.id}" matched`;
  return rule.description === null ? text : `${text} (${rule.description})`;
}
