/**
 * The assessment page's transaction: what was paid to whom, by which agent for which principal,
 * what the credential proved, the model's probability and its top reasons, and who decided.
 * The Outcome stays what POST /v1/assess answered (the spec makes them identical), so the names
 * as they are now come from the list's summary: GET /v1/assessments?q=<id>, whose search box
 * matches an assessment id exactly.
 */
import type { components } from "@agent-risk/client";
import { SIGNAL_CATALOG } from "../../../src/assess/signals";
import { api, useApiCall } from "../api";
import { CopyButton } from "./copy-button";
import { Decision } from "./decision";
import { ErrorBanner } from "./error-banner";
import {
  AgentName,
  Amount,
  CredentialState,
  decidedByText,
  finalDecision,
  Payee,
  PrincipalName,
  type Summary,
} from "./transaction";

type Outcome = components["schemas"]["Outcome"];

/** The model's reasons among the signals (src/assess/learned-model.ts), in words. */
function modelReasons(outcome: Outcome): string[] {
  return outcome.signals
    .filter((s) => s.type.startsWith("model_"))
    .map((s) => SIGNAL_CATALOG[s.type as keyof typeof SIGNAL_CATALOG]?.text ?? s.type);
}

export function TransactionPanel({ outcome }: { outcome: Outcome }) {
  const found = useApiCall(
    async () =>
      (await api.GET("/v1/assessments", { params: { query: { q: outcome.id, limit: 10 } } })).data,
    [outcome.id],
  );
  const summary = found.data?.data.find((s) => s.id === outcome.id);
  return (
    <section class="panel" aria-labelledby="transaction">
      <h2 id="transaction">Transaction</h2>
      <ErrorBanner failure={found.failure} />
      {summary ? (
        <Facts summary={summary} outcome={outcome} />
      ) : found.loading ? (
        <p aria-busy="true">Loading…</p>
      ) : null}
    </section>
  );
}

function Facts({ summary, outcome }: { summary: Summary; outcome: Outcome }) {
  const reasons = modelReasons(outcome);
  return (
    <>
      <dl class="facts">
        <dt>Amount</dt>
        <dd>
          <Amount summary={summary} />
        </dd>
        <dt>Payee</dt>
        <dd>
          <Payee summary={summary} copy />
        </dd>
        <dt>Transaction id</dt>
        <dd>
          {summary.transaction_id ? (
            <>
              <code>{summary.transaction_id}</code>{" "}
              <CopyButton text={summary.transaction_id} label="Copy transaction id" />
            </>
          ) : (
            <span class="muted">—</span>
          )}
        </dd>
        <dt>Agent</dt>
        <dd>
          <AgentName summary={summary} copy />
        </dd>
        <dt>Principal</dt>
        <dd>
          <PrincipalName summary={summary} />
        </dd>
        <dt>Credential</dt>
        <dd>
          <CredentialState summary={summary} />
        </dd>
        <dt>Decision</dt>
        <dd>
          <Decision value={finalDecision(summary)} /> by {decidedByText(summary)}
        </dd>
        <dt>Model</dt>
        <dd>
          {summary.model
            ? `${(summary.model.probability * 100).toFixed(1)} % fraud probability (model version ${
                summary.model.version ?? "—"
              })`
            : "no active model"}
        </dd>
      </dl>
      {reasons.length > 0 ? (
        <>
          <h3>The model's top reasons</h3>
          <ul>
            {reasons.map((text) => (
              <li key={text}>{text}</li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
