/**
 * The transaction behind a decision, as every page that shows a decision writes it (issue 40):
 * the amount in its currency, the payee, the agent and its principal by name, the credential,
 * and who decided. Built from an `AssessmentSummary` (GET /v1/assessments, and each review
 * item's `assessment`). Names for people to read; ids one click away (a copy button).
 */
import type { components } from "@agent-risk/client";
import { money, shortId } from "../format";
import { href } from "../router";
import { CopyButton } from "./copy-button";

export type Summary = components["schemas"]["AssessmentSummary"];

const muted = <span class="muted">—</span>;

/** The amount in its currency ("$199.00", "¥48,000"), or a dash. */
export function Amount({ summary }: { summary: Pick<Summary, "amount" | "currency"> }) {
  if (summary.amount === null || summary.currency === null) return muted;
  return <span class="amount">{money(summary.amount, summary.currency)}</span>;
}

/** The payee by name, its id beside it (or the id alone when the mandate named none). */
export function Payee({ summary, copy = false }: { summary: Summary; copy?: boolean }) {
  const payee = summary.payee;
  if (!payee) return muted;
  return (
    <span class="party">
      <span>{payee.name ?? payee.id}</span>
      {payee.name ? <small class="muted id">{payee.id}</small> : null}
      {copy ? <CopyButton text={payee.id} label="Copy payee id" /> : null}
    </span>
  );
}

/** The agent by name, linked to its page; a short id when the agent is gone. */
export function AgentName({ summary, copy = false }: { summary: Summary; copy?: boolean }) {
  const id = summary.agent?.id ?? summary.agent_id;
  if (!id) return <span class="muted">unidentified</span>;
  return (
    <span class="party">
      <a href={href(`agents/${id}`)} title={id}>
        {summary.agent?.name ?? shortId(id)}
      </a>
      {copy ? <CopyButton text={id} label="Copy agent id" /> : null}
    </span>
  );
}

/** The principal by name, or "erased" once its personal data is destroyed. */
export function PrincipalName({ summary }: { summary: Summary }) {
  const principal = summary.principal;
  if (!principal) return muted;
  if (principal.erased) return <span class="muted">erased</span>;
  return <span title={principal.id}>{principal.name ?? shortId(principal.id)}</span>;
}

/** What an AP2 credential proved: verified, refused with its reason, or none presented. */
export function CredentialState({ summary }: { summary: Summary }) {
  const credential = summary.credential;
  if (!credential) return <span class="muted">none</span>;
  if (credential.status === "verified") return <span class="decision-approve">verified</span>;
  return (
    <span>
      <span class="decision-deny">refused</span>
      {credential.reason || credential.failure
        ? `: ${credential.reason ?? credential.failure}`
        : ""}
    </span>
  );
}

/** Who made the decision: a person (and who), a rule (and which), the model, or the score. */
export function decidedByText(summary: Summary): string {
  const by = summary.decided_by;
  switch (by.type) {
    case "person":
      return by.reviewer ? `a person (${shortId(by.reviewer)})` : "a person";
    case "rule":
      return by.rule ? `rule ${by.rule}` : "a policy rule";
    case "model":
      return summary.model
        ? `the model (${(summary.model.probability * 100).toFixed(1)} % fraud)`
        : "the model";
    default:
      return "the risk score";
  }
}

/** The decision a person reads: the final one once a review closed, and who made it. */
export function finalDecision(summary: Summary): string {
  const review = summary.review;
  if (review && review.status !== "open" && review.decision) return review.decision;
  return summary.decision;
}
