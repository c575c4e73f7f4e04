/**
 * One review beside the queue: the transaction, the evidence at a glance (the signals and
 * rejection reasons in words, the learned model's contributions, the agent's recent payments,
 * the payee's labels across the org) and the resolve form, whose decision a key arms and Enter
 * confirms (pages/reviews.tsx holds the keys; console/README.md, "The review queue").
 */
import type { components } from "@agent-risk/client";
import type { Ref } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, useAction, useApiCall } from "../api";
import { Confirm } from "../components/confirm";
import { Decision } from "../components/decision";
import { ErrorBanner } from "../components/error-banner";
import { Feedback } from "../components/feedback";
import { Field } from "../components/field";
import { Sparkline } from "../components/sparkline";
import { money, shortId, when } from "../format";
import { href } from "../router";
import { MODEL_GROUPS, rejectionWords, signalWords } from "../words";

export type Review = components["schemas"]["Review"];
type Evidence = components["schemas"]["AssessmentEvidence"];
type Assessment = components["schemas"]["Outcome"];
export type Verdict = "approve" | "deny";

/**
 * The transaction as GET /v1/reviews answers it once items carry their assessment's summary
 * (issue 40, part 1): every member optional, so the page works before and after.
 */
export interface ReviewSummary {
  amount?: number | null;
  currency?: string | null;
  payee?: { id: string; name: string | null } | null;
  transaction_id?: string | null;
  agent?: { id: string; name: string } | null;
  principal?: { id: string; name: string | null; erased: boolean } | null;
  model?: { id: string; version: number | null; probability: number } | null;
  credential?: { status: string; reason: string | null } | null;
  decided_by?: { type: string; rule: string | null; reviewer: string | null } | null;
}

export function summaryOf(review: Review): ReviewSummary {
  return (review as { assessment?: ReviewSummary }).assessment ?? {};
}

/** What the page asks of the panel: resolve with the note typed so far, focus the note. */
export interface PanelActions {
  resolve: (decision: Verdict) => void;
  focusNote: () => void;
}

const SEVERITY_WEIGHT: Record<string, number> = { low: 1, medium: 2, high: 3, critical: 4 };

export function ReviewPanel({
  review,
  pending,
  focusToken,
  actions,
  onCancel,
  onResolved,
}: {
  review: Review;
  /** The decision a key armed, waiting for Enter (or the Confirm button). */
  pending: Verdict | null;
  /** Take the focus when this changes (and when shown, past 0): a person moved here. */
  focusToken: number;
  actions: Ref<PanelActions | null>;
  onCancel: () => void;
  onResolved: (review: Review) => void;
}) {
  const panel = useRef<HTMLElement>(null);
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const [note, setNote] = useState("");
  const { busy: sending, error: failure, run } = useAction();
  const open = review.status === "open";

  const resolve = (decision: Verdict) => {
    if (sending || !open) return;
    void run(async () => {
      const { data } = await api.POST("/v1/reviews/{id}/resolve", {
        params: { path: { id: review.id } },
        body: { decision, ...(note.trim() ? { note: note.trim() } : {}) },
      });
      onResolved(data);
    });
  };
  const handle = { resolve, focusNote: () => noteRef.current?.focus() };
  if (typeof actions === "function") actions(handle);
  else if (actions) actions.current = handle;

  // In the commit, not after the paint: a key pressed right after (n for the note) must find
  // the focus already here, or this late focus would take it back from the note.
  useLayoutEffect(() => {
    if (focusToken > 0) panel.current?.focus();
  }, [focusToken]);

  const summary = summaryOf(review);
  return (
    <section class="panel review-panel" aria-labelledby="review-panel" tabIndex={-1} ref={panel}>
      <h2 id="review-panel">Review of assessment {shortId(review.assessment_id)}</h2>
      <Transaction review={review} summary={summary} />
      {open ? (
        <form
          class="resolve"
          aria-label="Resolve the review"
          onSubmit={(event) => event.preventDefault()}
        >
          <Field label="Note" hint="Why: kept with the resolution and in the audit trail">
            {(id, describedBy) => (
              <textarea
                id={id}
                ref={noteRef}
                aria-describedby={describedBy}
                maxLength={1000}
                value={note}
                onInput={(event) => setNote(event.currentTarget.value)}
              />
            )}
          </Field>
          {pending ? (
            <Confirm
              legend="Confirm the decision"
              action={`Confirm ${pending === "approve" ? "approval" : "denial"}`}
              danger={pending === "deny"}
              busy={sending}
              onConfirm={() => resolve(pending)}
              onCancel={onCancel}
            >
              {pending === "approve" ? "Approve" : "Deny"} this review?{" "}
              <span class="muted">
                <kbd>Enter</kbd> confirms, <kbd>Esc</kbd> cancels.
              </span>
            </Confirm>
          ) : (
            <div class="form-row">
              <button
                type="button"
                class="primary"
                disabled={sending}
                aria-keyshortcuts="a"
                onClick={() => resolve("approve")}
              >
                Approve
              </button>
              <button
                type="button"
                disabled={sending}
                aria-keyshortcuts="d"
                onClick={() => resolve("deny")}
              >
                Deny
              </button>
            </div>
          )}
          {review.credential_backed ? (
            <p class="muted">Approving spends under the assessment's AP2 credential.</p>
          ) : null}
          <ErrorBanner failure={failure} />
        </form>
      ) : (
        <Closed review={review} />
      )}
      <EvidenceBlock review={review} />
      <Feedback assessmentId={review.assessment_id} />
    </section>
  );
}

function Transaction({ review, summary }: { review: Review; summary: ReviewSummary }) {
  const amount =
    summary.amount != null && summary.currency ? money(summary.amount, summary.currency) : null;
  return (
    <dl class="facts">
      {amount ? (
        <>
          <dt>Amount</dt>
          <dd class="amount">{amount}</dd>
        </>
      ) : null}
      {summary.payee ? (
        <>
          <dt>Payee</dt>
          <dd>
            {summary.payee.name ?? summary.payee.id}{" "}
            {summary.payee.name ? <span class="muted">{summary.payee.id}</span> : null}
          </dd>
        </>
      ) : null}
      {summary.agent ? (
        <>
          <dt>Agent</dt>
          <dd>
            <a href={href(`agents/${summary.agent.id}`)}>{summary.agent.name}</a>
          </dd>
        </>
      ) : null}
      {summary.principal ? (
        <>
          <dt>Principal</dt>
          <dd>{summary.principal.erased ? "erased" : (summary.principal.name ?? "—")}</dd>
        </>
      ) : null}
      {summary.credential ? (
        <>
          <dt>AP2 credential</dt>
          <dd>
            {summary.credential.status}
            {summary.credential.reason ? `: ${rejectionWords(summary.credential.reason)}` : ""}
          </dd>
        </>
      ) : null}
      {summary.decided_by ? (
        <>
          <dt>Sent to review by</dt>
          <dd>
            {summary.decided_by.type}
            {summary.decided_by.rule ? ` (rule ${summary.decided_by.rule})` : ""}
          </dd>
        </>
      ) : null}
      <dt>Assessment</dt>
      <dd>
        <a href={href(`assessments/${review.assessment_id}`)}>{review.assessment_id}</a>
      </dd>
      <dt>Opened</dt>
      <dd>{when(review.created)}</dd>
      <dt>{review.status === "open" ? "Expires (then denied)" : "Closed"}</dt>
      <dd>{when(review.status === "open" ? review.expires_at : review.resolved_at)}</dd>
    </dl>
  );
}

function Closed({ review }: { review: Review }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>{review.status}</dd>
      <dt>Decision</dt>
      <dd>
        <Decision value={review.decision} />
        {review.resolved_by ? ` by ${review.resolved_by.type} ${review.resolved_by.id}` : ""}
      </dd>
      <dt>Note</dt>
      <dd>{review.note ?? "—"}</dd>
    </dl>
  );
}

/** The evidence: two reads, the assessment (its signals) and its evidence (history, labels). */
function EvidenceBlock({ review }: { review: Review }) {
  const id = review.assessment_id;
  const assessment = useApiCall(
    async () => (await api.GET("/v1/assessments/{id}", { params: { path: { id } } })).data,
    [id],
  );
  const evidence = useApiCall(
    async () => (await api.GET("/v1/assessments/{id}/evidence", { params: { path: { id } } })).data,
    [id],
  );
  return (
    <section class="evidence" aria-labelledby="evidence-heading" aria-busy={evidence.loading}>
      <h3 id="evidence-heading">Evidence</h3>
      <ErrorBanner failure={assessment.failure ?? evidence.failure} />
      {assessment.data ? <Findings assessment={assessment.data} /> : null}
      {evidence.data ? <History evidence={evidence.data} /> : null}
    </section>
  );
}

function Findings({ assessment }: { assessment: Assessment }) {
  const model = assessment.signals.filter((s) => s.type.startsWith("model_"));
  const others = assessment.signals.filter((s) => !s.type.startsWith("model_"));
  const probability = assessment.outcome.model?.probability;
  return (
    <>
      <p>{assessment.outcome.reason}</p>
      <h4>Signals</h4>
      {others.length === 0 && assessment.rejection_reasons.length === 0 ? (
        <p class="muted">No signal and no rejection reason.</p>
      ) : (
        <ul class="signals">
          {assessment.rejection_reasons.map((r) => (
            <li key={`r-${r.key}`}>
              <span class="badge badge-deny">denies</span> {rejectionWords(r.key)}
            </li>
          ))}
          {others.map((s) => (
            <li key={`s-${s.type}`}>
              <span class={`badge severity-${s.severity}`}>{s.severity}</span> {signalWords(s.type)}
            </li>
          ))}
        </ul>
      )}
      {probability !== undefined || model.length > 0 ? (
        <>
          <h4>The model</h4>
          {probability !== undefined ? (
            <p>Fraud probability {(probability * 100).toFixed(1)} %.</p>
          ) : null}
          {model.length > 0 ? (
            <table class="contributions">
              <caption>What moved the probability up, strongest first</caption>
              <thead>
                <tr>
                  <th scope="col">Features</th>
                  <th scope="col">Weight</th>
                </tr>
              </thead>
              <tbody>
                {model.map((s) => (
                  <tr key={s.type}>
                    <td title={signalWords(s.type)}>{MODEL_GROUPS[s.type] ?? s.type}</td>
                    <td>
                      <meter
                        min={0}
                        max={4}
                        value={SEVERITY_WEIGHT[s.severity] ?? 0}
                        aria-label={`${MODEL_GROUPS[s.type] ?? s.type}: ${s.severity}`}
                      />{" "}
                      {s.severity}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No feature group raised it by much.</p>
          )}
        </>
      ) : null}
    </>
  );
}

function History({ evidence }: { evidence: Evidence }) {
  const current = evidence.agent_history.find((p) => p.current);
  const currency = current?.currency ?? null;
  const same = evidence.agent_history.filter((p) => p.amount !== null && p.currency === currency);
  const fmt = (amount: number | null) =>
    amount !== null && currency ? money(amount, currency) : "—";
  const labels = evidence.payee_labels;
  const counted = labels
    ? (["fraud", "chargeback", "dispute", "refund", "legitimate"] as const).filter(
        (l) => labels[l] > 0,
      )
    : [];
  return (
    <>
      <h4>The agent's recent payments</h4>
      {evidence.agent_id === null ? (
        <p class="muted">No agent was identified: no history.</p>
      ) : (
        <>
          <Sparkline
            points={same.map((p) => ({ value: p.amount ?? 0, marked: p.current }))}
            label={`Amounts of the agent's last ${same.length} payments in ${currency ?? "this currency"}, this one marked`}
          />
          <p>
            {same.length} payment{same.length === 1 ? "" : "s"} in {currency ?? "—"}, this one{" "}
            {fmt(current?.amount ?? null)}; highest{" "}
            {fmt(same.length ? Math.max(...same.map((p) => p.amount ?? 0)) : null)}.{" "}
            {evidence.agent_payee_payments === null
              ? ""
              : evidence.agent_payee_payments === 0
                ? "First payment to this payee."
                : `Paid this payee ${evidence.agent_payee_payments} time${evidence.agent_payee_payments === 1 ? "" : "s"} before.`}
          </p>
        </>
      )}
      <h4>The payee across the org</h4>
      {labels === null ? (
        <p class="muted">No payee named.</p>
      ) : counted.length === 0 ? (
        <p class="muted">No labels on this payee's payments yet.</p>
      ) : (
        <p>
          {counted.map((l) => `${labels[l]} ${l}`).join(", ")}
          {labels.latest_label
            ? `; latest: ${labels.latest_label}, ${when(labels.latest_at)}.`
            : "."}
        </p>
      )}
    </>
  );
}
