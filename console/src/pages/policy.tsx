import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction, useApiCall } from "../api";
import { DecisionChangeChart } from "../components/chart";
import { DateRange, isoOf } from "../components/date-range";
import { MatrixTable } from "../components/decision-matrix";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { percent, shortId, when } from "../format";
import { ActivationPreview } from "./activation-preview";
import { PolicyEditor } from "./policy-editor";
import { draftOf } from "./policy-form";

type Policy = components["schemas"]["Policy"];
type Backtest = components["schemas"]["PolicyBacktest"];
type ShadowReport = components["schemas"]["ShadowReport"];
type LabeledMetrics = components["schemas"]["LabeledMetrics"];

function go(policy: Policy) {
  window.location.hash = `#/policies/${policy.id}`;
}

/** `#/policies/new` (a new draft) and `#/policies/<id>` (a policy, its backtest and report). */
export function PolicyPage({ params }: { params: string[] }) {
  const id = params[0];
  if (!id || id === "new") {
    return (
      <>
        <p>
          <a href="#/policies">← Policies</a>
        </p>
        <h1>New policy draft</h1>
        <PolicyEditor initial={draftOf("", undefined)} submitLabel="Create draft" onCreated={go} />
      </>
    );
  }
  return <PolicyDetail key={id} id={id} />;
}

function PolicyDetail({ id }: { id: string }) {
  const policy = useApiCall(
    async () => (await api.GET("/v1/policies/{id}", { params: { path: { id } } })).data,
    [id],
  );
  const { busy, error, run } = useAction();
  const [notice, setNotice] = useState("");
  const [activating, setActivating] = useState(false);

  const act = (label: string, call: () => Promise<{ data: Policy }>) => {
    setNotice("");
    return run(async () => {
      const { data } = await call();
      setNotice(label.replace("{version}", String(data.version ?? "")));
      policy.reload();
    });
  };

  const p = policy.data;
  return (
    <>
      <p>
        <a href="#/policies">← Policies</a>
      </p>
      <h1>{p ? p.name : "Policy"}</h1>
      <ErrorBanner failure={policy.failure} />
      {p && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`badge badge-${p.status}`}>{p.status}</span>
            </dd>
            <dt>Version</dt>
            <dd>{p.version ?? "never activated"}</dd>
            <dt>Shadow</dt>
            <dd>{p.shadow ? "shadowing the active policy" : "no"}</dd>
            <dt>Created</dt>
            <dd>{when(p.created)}</dd>
            <dt>Last activated</dt>
            <dd>{when(p.activated_at)}</dd>
            <dt>Id</dt>
            <dd>
              <code>{p.id}</code>
            </dd>
          </dl>
          <div class="actions">
            {p.status === "draft" && !activating && (
              <button type="button" disabled={busy} onClick={() => setActivating(true)}>
                Activate…
              </button>
            )}
            {p.status === "draft" && !p.shadow && (
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  act("Shadowing: evaluated on every assessment, never acted on.", () =>
                    api.POST("/v1/policies/{id}/shadow", { params: { path: { id } } }),
                  )
                }
              >
                Start shadow
              </button>
            )}
            {p.shadow && (
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  act("Shadowing stopped.", () =>
                    api.DELETE("/v1/policies/{id}/shadow", { params: { path: { id } } }),
                  )
                }
              >
                Stop shadow
              </button>
            )}
          </div>
          {activating && p.status === "draft" && (
            <ActivationPreview
              id={p.id}
              name={p.name}
              busy={busy}
              onConfirm={() =>
                act("Activated: this policy now decides, as version {version}.", () =>
                  api.POST("/v1/policies/{id}/activate", { params: { path: { id } } }),
                ).then(() => setActivating(false))
              }
              onCancel={() => setActivating(false)}
            />
          )}
          {notice && <p role="status">{notice}</p>}
          <ErrorBanner failure={error} />
          <BacktestPanel id={p.id} />
          <ShadowPanel id={p.id} />
          <section aria-labelledby="rules-heading">
            <h2 id="rules-heading">Edit as a new draft</h2>
            <p>
              A policy never changes once created: saving creates a new draft with these rules,
              which you can backtest, shadow and activate.
            </p>
            <PolicyEditor
              key={p.id}
              initial={draftOf(p.name, p.rules)}
              submitLabel="Save as new draft"
              onCreated={go}
            />
          </section>
        </>
      )}
    </>
  );
}

function BacktestPanel({ id }: { id: string }) {
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [limit, setLimit] = useState("10000");
  const [result, setResult] = useState<Backtest>();
  const { busy, error, run } = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const fromIso = isoOf(from);
      const toIso = isoOf(to);
      const { data } = await api.POST("/v1/policies/{id}/backtest", {
        params: { path: { id } },
        body: {
          ...(fromIso ? { from: fromIso } : {}),
          ...(toIso ? { to: toIso } : {}),
          limit: Number(limit) || 10_000,
          samples: 20,
        },
      });
      setResult(data);
    });
  };

  return (
    <section aria-labelledby="backtest-heading" class="panel">
      <h2 id="backtest-heading">Backtest</h2>
      <p>Replays this policy over the assessments of the current mode. Changes nothing.</p>
      <form class="inline-form" onSubmit={submit}>
        <DateRange id="backtest" from={from} to={to} onFrom={setFrom} onTo={setTo} />
        <Field label="Most recent assessments" id="backtest-limit">
          {(fieldId) => (
            <input
              id={fieldId}
              type="number"
              min={1}
              max={100000}
              value={limit}
              onInput={(e) => setLimit((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Running…" : "Run backtest"}
        </button>
      </form>
      <ErrorBanner failure={error} />
      {result && <BacktestResult result={result} />}
    </section>
  );
}

function BacktestResult({ result }: { result: Backtest }) {
  return (
    <div data-testid="backtest-result">
      <p role="status">
        Replayed {result.replayed} assessments: {result.changed} would change.
        {result.skipped > 0 && ` ${result.skipped} without recorded inputs were skipped.`}
        {result.truncated && " The range holds more than was replayed."}
      </p>
      <h3>Decision changes (recorded → this policy)</h3>
      <DecisionChangeChart
        matrix={result.matrix}
        label="Bar chart of recorded decisions against this policy's decisions"
      />
      <MatrixTable matrix={result.matrix} rowLabel="Recorded" columnLabel="This policy" />
      <h3>Labeled outcomes</h3>
      <MetricsTable recorded={result.labeled.recorded} policy={result.labeled.policy} />
      <h3>Rules</h3>
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Action</th>
              <th scope="col">Decided</th>
            </tr>
          </thead>
          <tbody>
            {result.rules.map((rule) => (
              <tr key={rule.id}>
                <td>{rule.id}</td>
                <td>{rule.action}</td>
                <td>{rule.hits}</td>
              </tr>
            ))}
            <tr>
              <td colSpan={2}>No rule matched</td>
              <td>{result.unmatched}</td>
            </tr>
          </tbody>
        </table>
      </div>
      {result.samples.length > 0 && (
        <>
          <h3>Changed assessments (newest first)</h3>
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Assessment</th>
                  <th scope="col">Created</th>
                  <th scope="col">Recorded</th>
                  <th scope="col">This policy</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {result.samples.map((sample) => (
                  <tr key={sample.assessment_id}>
                    <td>
                      <a href={`#/assessments/${sample.assessment_id}`}>
                        {shortId(sample.assessment_id)}
                      </a>
                    </td>
                    <td>{when(sample.created)}</td>
                    <td>{sample.decision}</td>
                    <td>{sample.replayed_decision}</td>
                    <td>{sample.rule ?? "—"}</td>
                    <td>{sample.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

function MetricsTable({ recorded, policy }: { recorded: LabeledMetrics; policy: LabeledMetrics }) {
  const rows: [string, (m: LabeledMetrics) => string][] = [
    ["Precision", (m) => percent(m.precision)],
    ["Recall", (m) => percent(m.recall)],
    ["Fire rate", (m) => percent(m.fire_rate)],
    ["Labeled assessments", (m) => String(m.labeled)],
    ["Fraud caught", (m) => String(m.fraud_caught)],
    ["Fraud missed", (m) => String(m.fraud_missed)],
    ["Legitimate blocked", (m) => String(m.legitimate_blocked)],
    ["Legitimate approved", (m) => String(m.legitimate_approved)],
  ];
  return (
    <div class="table-scroll">
      <table data-testid="backtest-metrics">
        <caption>
          Against effective labels; flagged = not approve. "—": no labeled assessment to measure.
        </caption>
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col">Decisions recorded</th>
            <th scope="col">This policy</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, value]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{value(recorded)}</td>
              <td>{value(policy)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ShadowPanel({ id }: { id: string }) {
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [report, setReport] = useState<ShadowReport>();
  const { busy, error, run } = useAction();

  const load = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const fromIso = isoOf(from);
      const toIso = isoOf(to);
      const { data } = await api.GET("/v1/policies/{id}/shadow-report", {
        params: {
          path: { id },
          query: { ...(fromIso ? { from: fromIso } : {}), ...(toIso ? { to: toIso } : {}) },
        },
      });
      setReport(data);
    });
  };

  return (
    <section aria-labelledby="shadow-heading" class="panel">
      <h2 id="shadow-heading">Shadow report</h2>
      <p>
        What this policy decided while it shadowed the active one, against what was decided and
        learned. Default window: the last 7 days.
      </p>
      <form class="inline-form" onSubmit={load}>
        <DateRange id="shadow" from={from} to={to} onFrom={setFrom} onTo={setTo} />
        <button type="submit" disabled={busy}>
          Show shadow report
        </button>
      </form>
      <ErrorBanner failure={error} />
      {report && (
        <div data-testid="shadow-report">
          <p role="status">
            {report.shadowed} assessments shadowed from {when(report.from)} to {when(report.to)}:{" "}
            {report.agreed} agreed, {report.disagreed} disagreed.
          </p>
          <MatrixTable matrix={report.matrix} rowLabel="Active" columnLabel="Shadow" />
          {report.disagreements.length > 0 && (
            <div class="table-scroll">
              <table>
                <caption>Disagreements by effective label</caption>
                <thead>
                  <tr>
                    <th scope="col">Active → shadow</th>
                    <th scope="col">Count</th>
                    <th scope="col">Fraud</th>
                    <th scope="col">Chargeback</th>
                    <th scope="col">Refund</th>
                    <th scope="col">Legitimate</th>
                    <th scope="col">Pending</th>
                    <th scope="col">Unlabeled</th>
                  </tr>
                </thead>
                <tbody>
                  {report.disagreements.map((d) => (
                    <tr key={`${d.decision}-${d.shadow_decision}`}>
                      <th scope="row">
                        {d.decision} → {d.shadow_decision}
                      </th>
                      <td>{d.count}</td>
                      <td>{d.labels.fraud}</td>
                      <td>{d.labels.chargeback}</td>
                      <td>{d.labels.refund}</td>
                      <td>{d.labels.legitimate}</td>
                      <td>{d.labels.pending}</td>
                      <td>{d.labels.unlabeled}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
