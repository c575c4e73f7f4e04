/**
 * One assessment (GET /v1/assessments/{id}): the decision and why, the transaction (amount,
 * payee, agent and principal by name, who decided: components/transaction-panel.tsx), the five
 * confidences as a chart, the signals, the credential's verification, the network's counts of
 * its identifiers (components/network-panel.tsx), the review it opened, its audit entry
 * with the inclusion proof (GET /v1/audit/{id}/proof), the Risk Payload verified here in the
 * browser, and its feedback labels.
 */
import type { components } from "@agent-risk/client";
import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import { api, useApiCall } from "../api";
import { Chart } from "../components/chart";
import { CopyButton } from "../components/copy-button";
import { Decision } from "../components/decision";
import { ErrorBanner } from "../components/error-banner";
import { Feedback } from "../components/feedback";
import { NetworkPanel } from "../components/network-panel";
import { PayloadCheck } from "../components/payload-check";
import { TransactionPanel } from "../components/transaction-panel";
import { shortId, when } from "../format";
import { href } from "../router";

type Outcome = components["schemas"]["Outcome"];
type Confidences = Outcome["confidences"];

const CONFIDENCES: { key: keyof Confidences; label: string }[] = [
  { key: "agent_identity", label: "Agent identity" },
  { key: "mandate_validity", label: "Mandate validity" },
  { key: "policy_adherence", label: "Policy adherence" },
  { key: "behavioral_risk", label: "Behavioral risk" },
  { key: "recipient_risk", label: "Recipient risk" },
];

const BAR_OPTIONS: Omit<uPlot.Options, "width" | "height"> = {
  scales: { x: { time: false, range: [-0.5, CONFIDENCES.length - 0.5] }, y: { range: [0, 1] } },
  axes: [
    {
      splits: () => CONFIDENCES.map((_, i) => i),
      values: (_, splits) => splits.map((i) => CONFIDENCES[i]?.label ?? ""),
      size: 40,
    },
    { label: "Confidence (0 to 1)" },
  ],
  legend: { show: false },
  cursor: { show: false },
  series: [
    {},
    {
      label: "Confidence",
      fill: "rgba(11, 92, 173, 0.55)",
      stroke: "#0b5cad",
      paths: uPlot.paths.bars?.({ size: [0.6, 80] }),
      points: { show: false },
    },
  ],
};

export function AssessmentPage({ params }: { params: string[] }) {
  const id = params[0] ?? "";
  const outcome = useApiCall(
    async () => (await api.GET("/v1/assessments/{id}", { params: { path: { id } } })).data,
    [id],
  );
  const data = outcome.data;
  return (
    <>
      <p>
        <a href={href("assessments")}>← Assessments</a>
      </p>
      <h1>
        Assessment <span title={id}>{shortId(id)}</span>
      </h1>
      <ErrorBanner failure={outcome.failure} />
      {data ? (
        <Details outcome={data} />
      ) : outcome.loading ? (
        <p aria-busy="true">Loading…</p>
      ) : null}
    </>
  );
}

function Details({ outcome }: { outcome: Outcome }) {
  const bars = useMemo<uPlot.AlignedData>(
    () => [CONFIDENCES.map((_, i) => i), CONFIDENCES.map((c) => outcome.confidences[c.key])],
    [outcome],
  );
  return (
    <>
      <section class="panel" aria-labelledby="outcome">
        <h2 id="outcome">Decision</h2>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{outcome.id}</code> <CopyButton text={outcome.id} label="Copy id" />
          </dd>
          <dt>Decision</dt>
          <dd>
            <Decision value={outcome.outcome.decision} />
          </dd>
          <dt>Risk score</dt>
          <dd>
            {outcome.outcome.risk_score} ({outcome.outcome.risk_level})
          </dd>
          <dt>Reason</dt>
          <dd>{outcome.outcome.reason}</dd>
          <dt>Policy version</dt>
          <dd>{outcome.outcome.policy_version}</dd>
          <dt>Kind</dt>
          <dd>{outcome.kind}</dd>
          <dt>Created</dt>
          <dd>{when(outcome.created)}</dd>
          <dt>Mode</dt>
          <dd>{outcome.livemode ? "live" : "test"}</dd>
          <dt>Latency</dt>
          <dd>{outcome.latency_ms} ms</dd>
          <dt>Agent's trust then</dt>
          <dd>
            {outcome.agent
              ? `${outcome.agent.trust_score} (${outcome.agent.risk_tier}), as it stood when assessed`
              : "no agent identified"}
          </dd>
        </dl>
      </section>

      <TransactionPanel outcome={outcome} />

      <section class="panel" aria-labelledby="confidences">
        <h2 id="confidences">Confidences</h2>
        <Chart title="The five confidences, each from 0 to 1" options={BAR_OPTIONS} data={bars} />
        <table>
          <caption class="muted">The same, as numbers</caption>
          <tbody>
            {CONFIDENCES.map((c) => (
              <tr key={c.key}>
                <th scope="row">{c.label}</th>
                <td>{outcome.confidences[c.key].toFixed(2)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section class="panel" aria-labelledby="signals">
        <h2 id="signals">Signals</h2>
        {outcome.signals.length === 0 ? (
          <p class="muted">No signal.</p>
        ) : (
          <ul>
            {outcome.signals.map((s) => (
              <li key={`${s.category}:${s.type}`}>
                <strong>{s.type}</strong> ({s.category}, {s.severity})
              </li>
            ))}
          </ul>
        )}
        {outcome.rejection_reasons.length > 0 ? (
          <>
            <h3>Rejection reasons</h3>
            <ul>
              {outcome.rejection_reasons.map((r) => (
                <li key={r.key}>
                  <code>{r.key}</code>: {r.description}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>

      <Credential outcome={outcome} />

      <NetworkPanel network={outcome.outcome.network} />

      {outcome.refinement ? (
        <section class="panel" aria-labelledby="review">
          <h2 id="review">Review</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{outcome.refinement.status}</dd>
            <dt>Decision</dt>
            <dd>
              <Decision value={outcome.refinement.decision} />
            </dd>
            <dt>Resolved</dt>
            <dd>
              {when(outcome.refinement.resolved_at)}
              {outcome.refinement.resolved_by
                ? ` by ${outcome.refinement.resolved_by.type} ${outcome.refinement.resolved_by.id}`
                : ""}
            </dd>
          </dl>
          {outcome.refinement.status === "open" ? (
            <p>
              <a href={href("reviews")}>Resolve it in the review queue</a>
            </p>
          ) : null}
          {outcome.refinement.risk_payload ? (
            <PayloadCheck
              jws={outcome.refinement.risk_payload.jws}
              title="The resolution's Risk Payload"
              expected={{
                assessmentId: outcome.id,
                decision: outcome.refinement.decision ?? "",
                livemode: outcome.livemode,
              }}
            />
          ) : null}
        </section>
      ) : null}

      <section class="panel" aria-labelledby="payload">
        <h2 id="payload">Risk Payload</h2>
        <PayloadCheck
          jws={outcome.risk_payload.jws}
          title="Verified in this browser"
          expected={{
            assessmentId: outcome.id,
            decision: outcome.outcome.decision,
            livemode: outcome.livemode,
          }}
        />
      </section>

      <AuditEntry audit={outcome.audit} />
      <Feedback assessmentId={outcome.id} />
    </>
  );
}

function Credential({ outcome }: { outcome: Outcome }) {
  const credential = outcome.credential;
  // A refusal's words are its rejection reason's (`credential_<failure>`).
  const refusal = credential?.failure
    ? outcome.rejection_reasons.find((r) => r.key === `credential_${credential.failure}`)
    : undefined;
  return (
    <section class="panel" aria-labelledby="credential">
      <h2 id="credential">Credential</h2>
      {credential ? (
        <>
          <dl class="facts">
            <dt>Verification</dt>
            <dd class={credential.verified ? "verified" : "unverified"}>
              {credential.verified
                ? "verified"
                : `refused: ${refusal?.description ?? credential.failure ?? "unknown"}`}
            </dd>
            <dt>Issuer</dt>
            <dd>{credential.issuer ?? "—"}</dd>
            <dt>Reference</dt>
            <dd>
              <code>{credential.reference ?? "—"}</code>
            </dd>
            <dt>Holder key thumbprint</dt>
            <dd>
              <code>{credential.holder_thumbprint ?? "—"}</code>
            </dd>
            <dt>Hops</dt>
            <dd>{credential.hops}</dd>
          </dl>
          <details>
            <summary>Decoded JSON</summary>
            <pre>{JSON.stringify(credential, null, 2)}</pre>
          </details>
        </>
      ) : (
        <p class="muted">No AP2 credential was presented.</p>
      )}
    </section>
  );
}

function AuditEntry({ audit }: { audit: Outcome["audit"] }) {
  const proof = useApiCall(
    async () =>
      (await api.GET("/v1/audit/{id}/proof", { params: { path: { id: audit.entry_id } } })).data,
    [audit.entry_id],
  );
  const checkpoint = proof.data?.checkpoint;
  return (
    <section class="panel" aria-labelledby="audit">
      <h2 id="audit">Audit entry</h2>
      <dl class="facts">
        <dt>Entry</dt>
        <dd>
          <code>{audit.entry_id}</code>
        </dd>
        <dt>Sequence</dt>
        <dd>{audit.sequence}</dd>
        <dt>Anchoring</dt>
        <dd>{proof.data?.status ?? audit.status}</dd>
        {proof.data ? (
          <>
            <dt>Leaf hash</dt>
            <dd>
              <code>{proof.data.leaf_hash}</code>
            </dd>
          </>
        ) : null}
        {checkpoint ? (
          <>
            <dt>Checkpoint</dt>
            <dd>
              tree size {checkpoint.tree_size}, signed {when(checkpoint.time)}
            </dd>
            <dt>Root hash</dt>
            <dd>
              <code>{checkpoint.root_hash}</code>
            </dd>
            <dt>Inclusion proof</dt>
            <dd>{proof.data?.audit_path?.length ?? 0} hashes</dd>
          </>
        ) : null}
      </dl>
      {proof.data?.status === "pending" ? (
        <p class="muted">
          Not anchored yet: the next signed checkpoint will cover it (
          <a href={href("audit")}>audit</a>).
        </p>
      ) : null}
      <ErrorBanner failure={proof.failure} />
    </section>
  );
}
