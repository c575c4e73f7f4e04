/**
 * The pictures of a risk model's metrics (GET /v1/risk-models/{id}, `metrics`): the ROC and
 * precision–recall curves, the calibration plot, the feature importances and what each
 * threshold would have caught. Each chart has its numbers beside it, as a table.
 */
import "../models.css";
import type { components } from "@agent-risk/client";
import { useMemo, useState } from "preact/hooks";
import type { AlignedData, Options } from "uplot";
import { money, percent } from "../format";
import { Chart } from "./chart";
import { Field } from "./field";

export type RiskModel = components["schemas"]["RiskModel"];
export type Metrics = NonNullable<components["schemas"]["RiskModelMetrics"]>;
type Caught = NonNullable<Metrics["caught"]>;

const BLUE = "#3b5b8c";
const ORANGE = "#c2631d";
const RED = "#b3261e";
const GREY = "#9aa3ad";

interface XYSeries {
  label: string;
  points: [number, number][];
  stroke: string;
  dash?: number[];
}

/**
 * A chart of (x, y) series, each with its own points (uPlot's mode 2): a curve may go straight
 * up (several y at one x), which a chart aligned on one x array cannot draw.
 */
function XYChart({
  title,
  x,
  y,
  series,
  xRange = [0, 1],
}: {
  title: string;
  x: string;
  y: string;
  series: XYSeries[];
  xRange?: [number, number];
}) {
  const shape = JSON.stringify([series, xRange]);
  const { options, data } = useMemo(() => {
    const options: Omit<Options, "width" | "height"> = {
      mode: 2,
      scales: { x: { time: false, range: xRange }, y: { range: [0, 1] } },
      axes: [{ label: x }, { label: y }],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          width: 2,
          ...(s.dash ? { dash: s.dash } : {}),
          points: { show: false },
        })),
      ],
      cursor: { show: false },
      legend: { live: false },
    };
    const data = [
      null,
      ...series.map((s) => [s.points.map((p) => p[0]), s.points.map((p) => p[1])]),
    ] as unknown as AlignedData;
    return { options, data };
  }, [shape]);
  return <Chart title={title} options={options} data={data} />;
}

/** The numbers of a chart, folded under it: the table is long, the picture says it first. */
function Numbers({ summary, children }: { summary: string; children: preact.ComponentChildren }) {
  return (
    <details class="numbers">
      <summary>{summary}</summary>
      <div class="table-scroll">{children}</div>
    </details>
  );
}

const f4 = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(4));

/** The four headline metrics and the slice they were measured on. */
export function MetricTiles({ model }: { model: RiskModel }) {
  const m = model.metrics;
  const held = model.counts?.held_out;
  if (!m) return null;
  const base = held && held.rows > 0 ? held.positives / held.rows : null;
  return (
    <dl class="tiles">
      <div>
        <dt>AUC ROC</dt>
        <dd>{f4(m.auc_roc)}</dd>
      </div>
      <div>
        <dt>Average precision</dt>
        <dd>{f4(m.average_precision)}</dd>
      </div>
      <div>
        <dt>Card precision@100</dt>
        <dd>{f4(m.card_precision_at_100)}</dd>
      </div>
      <div>
        <dt>Brier score</dt>
        <dd>{f4(m.brier_score)}</dd>
      </div>
      <div>
        <dt>Held-out slice</dt>
        <dd>
          {held ? `${held.rows} payments, ${held.positives} frauds` : "—"}
          {base === null ? null : <span class="muted"> (fraud rate {percent(base)})</span>}
        </dd>
      </div>
    </dl>
  );
}

export function RocCurve({ metrics }: { metrics: Metrics }) {
  const roc = metrics.roc ?? [];
  return (
    <>
      <XYChart
        title={`ROC curve on the held-out slice, AUC ${f4(metrics.auc_roc)}`}
        x="false positive rate"
        y="true positive rate (recall)"
        series={[
          {
            label: "Model",
            stroke: BLUE,
            points: [[0, 0], ...roc.map((p): [number, number] => [p.fpr, p.tpr])],
          },
          {
            label: "Chance",
            stroke: GREY,
            dash: [4, 4],
            points: [
              [0, 0],
              [1, 1],
            ],
          },
        ]}
      />
      <Numbers summary={`The ROC curve's ${roc.length} points`}>
        <table>
          <caption>ROC curve: alerts are the payments scored at or above the threshold</caption>
          <thead>
            <tr>
              <th scope="col">Threshold</th>
              <th scope="col">False positive rate</th>
              <th scope="col">True positive rate</th>
            </tr>
          </thead>
          <tbody>
            {roc.map((p) => (
              <tr key={p.threshold}>
                <td>{f4(p.threshold)}</td>
                <td>{f4(p.fpr)}</td>
                <td>{f4(p.tpr)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Numbers>
    </>
  );
}

/** The PR curve with the review and deny thresholds drawn on it, and their numbers. */
export function PrCurve({ metrics }: { metrics: Metrics }) {
  const pr = metrics.pr ?? [];
  const { review, deny } = metrics.thresholds;
  // A threshold is a point of the curve: drawn as a line dropped from it to the recall axis.
  const marker = (t: typeof review): [number, number][] =>
    t.precision === null
      ? []
      : [
          [t.recall, 0],
          [t.recall, t.precision],
        ];
  return (
    <>
      <XYChart
        title={`Precision–recall curve on the held-out slice, average precision ${f4(metrics.average_precision)}, with the review and deny thresholds`}
        x="recall"
        y="precision"
        series={[
          {
            label: "Model",
            stroke: BLUE,
            points: pr.map((p): [number, number] => [p.recall, p.precision]),
          },
          { label: "Review threshold", stroke: ORANGE, dash: [6, 3], points: marker(review) },
          { label: "Deny threshold", stroke: RED, dash: [2, 2], points: marker(deny) },
        ]}
      />
      <p class="muted">
        The dashed lines drop from the review and deny thresholds' points of the curve to their
        recall.
      </p>
      <table>
        <caption>The thresholds on the held-out slice</caption>
        <thead>
          <tr>
            <th scope="col">Threshold</th>
            <th scope="col">Probability ≥</th>
            <th scope="col">Precision</th>
            <th scope="col">Recall</th>
            <th scope="col">Fire rate</th>
          </tr>
        </thead>
        <tbody>
          {(
            [
              ["Review", review],
              ["Deny", deny],
            ] as const
          ).map(([name, t]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>
                {f4(t.probability)}
                {t.precision === null ? <span class="muted"> (never fires)</span> : null}
              </td>
              <td>{percent(t.precision)}</td>
              <td>{percent(t.recall)}</td>
              <td>{percent(t.fire_rate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Numbers summary={`The precision–recall curve's ${pr.length} points`}>
        <table>
          <caption>Precision–recall curve</caption>
          <thead>
            <tr>
              <th scope="col">Threshold</th>
              <th scope="col">Precision</th>
              <th scope="col">Recall</th>
            </tr>
          </thead>
          <tbody>
            {pr.map((p) => (
              <tr key={p.threshold}>
                <td>{f4(p.threshold)}</td>
                <td>{f4(p.precision)}</td>
                <td>{f4(p.recall)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Numbers>
    </>
  );
}

export function CalibrationPlot({ metrics }: { metrics: Metrics }) {
  const bins = metrics.calibration;
  return (
    <>
      <XYChart
        title={`Calibration: each bin's observed fraud rate against its mean probability; Brier score ${f4(metrics.brier_score)}`}
        x="mean predicted probability"
        y="observed fraud rate"
        series={[
          {
            label: "Model",
            stroke: BLUE,
            points: bins.map((b): [number, number] => [b.mean_probability, b.fraud_rate]),
          },
          {
            label: "Perfectly calibrated",
            stroke: GREY,
            dash: [4, 4],
            points: [
              [0, 0],
              [1, 1],
            ],
          },
        ]}
      />
      <table>
        <caption>Calibration bins (empty bins left out)</caption>
        <thead>
          <tr>
            <th scope="col">Probability bin</th>
            <th scope="col">Payments</th>
            <th scope="col">Mean probability</th>
            <th scope="col">Fraud rate</th>
          </tr>
        </thead>
        <tbody>
          {bins.map((b) => (
            <tr key={b.from}>
              <td>
                {b.from.toFixed(1)}–{b.to.toFixed(1)}
              </td>
              <td>{b.count}</td>
              <td>{f4(b.mean_probability)}</td>
              <td>{f4(b.fraud_rate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Each feature's share of the model's total split gain, as a bar with its number. */
export function Importances({ features }: { features: NonNullable<RiskModel["features"]> }) {
  const top = features[0]?.importance ?? 0;
  return (
    <table class="importances">
      <caption>Feature importances: each feature's share of the trees' total split gain</caption>
      <thead>
        <tr>
          <th scope="col">Feature</th>
          <th scope="col">Share of the gain</th>
        </tr>
      </thead>
      <tbody>
        {features.map((f) => (
          <tr key={f.name}>
            <th scope="row">
              <code>{f.name}</code>
            </th>
            <td>
              <meter
                min={0}
                max={top || 1}
                value={f.importance}
                aria-label={`${f.name}: ${percent(f.importance)}`}
              />{" "}
              {percent(f.importance)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * What the model would have caught on the held-out slice at each threshold: the fraud amount
 * caught against the good amount sent to review or denied, in one currency (a picker when the
 * slice has several), as a chart and a table.
 */
export function CaughtView({ metrics }: { metrics: Metrics }) {
  const caught = metrics.caught as Caught;
  const currencies = caught.slice.amounts.map((a) => a.currency);
  const [currency, setCurrency] = useState<string | null>(currencies[0] ?? null);
  const column = Math.max(0, currencies.indexOf(currency));
  const total = caught.slice.amounts[column];
  const show = (minor: number) => (currency ? money(minor, currency) : minor.toLocaleString("en"));
  const { review, deny } = metrics.thresholds;
  const rows = caught.thresholds;
  return (
    <>
      {currencies.length > 1 ? (
        <Field label="Currency" id="caught-currency">
          {(id) => (
            <select
              id={id}
              value={currency ?? ""}
              onChange={(event) =>
                setCurrency((event.currentTarget as HTMLSelectElement).value || null)
              }
            >
              {currencies.map((c) => (
                <option key={c ?? ""} value={c ?? ""}>
                  {c ?? "unknown currency"}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <p>
        On the held-out slice: {caught.slice.payments} payments, {caught.slice.frauds} frauds
        {total ? (
          <>
            {" "}
            ({show(total.fraud)} of fraud, {show(total.good)} of good payments
            {currency ? "" : ", currency unknown"})
          </>
        ) : null}
        .
      </p>
      <XYChart
        title={`What the model would have caught at each threshold: fraud amount caught and good amount stopped, as shares of the slice's${currency ? ` ${currency}` : ""} amounts`}
        x="probability threshold"
        y="share of the slice's amount"
        series={[
          {
            label: "Fraud amount caught",
            stroke: BLUE,
            points: rows.map((t): [number, number] => [
              t.probability,
              (t.amounts[column]?.fraud ?? 0) / Math.max(1, total?.fraud ?? 0),
            ]),
          },
          {
            label: "Good amount stopped",
            stroke: ORANGE,
            points: rows.map((t): [number, number] => [
              t.probability,
              (t.amounts[column]?.good ?? 0) / Math.max(1, total?.good ?? 0),
            ]),
          },
        ]}
      />
      <div class="table-scroll">
        <table class="stack caught">
          <caption>
            At each threshold (alerts are payments scored at or above it, sent to review or denied)
          </caption>
          <thead>
            <tr>
              <th scope="col">Threshold</th>
              <th scope="col">Alerts</th>
              <th scope="col">Frauds caught</th>
              <th scope="col">Fraud amount caught</th>
              <th scope="col">Good payments stopped</th>
              <th scope="col">Good amount stopped</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => {
              const a = t.amounts[column];
              const mark =
                t.probability === deny.probability
                  ? " (deny)"
                  : t.probability === review.probability
                    ? " (review)"
                    : "";
              return (
                <tr key={t.probability} class={mark ? "selected" : undefined}>
                  <td data-label="Threshold">
                    {f4(t.probability)}
                    {mark}
                  </td>
                  <td data-label="Alerts">{t.alerts}</td>
                  <td data-label="Frauds caught">
                    {t.frauds} of {caught.slice.frauds}
                  </td>
                  <td data-label="Fraud amount caught">
                    {a ? show(a.fraud) : "—"}
                    {a && total ? (
                      <span class="muted"> ({percent(a.fraud / Math.max(1, total.fraud))})</span>
                    ) : null}
                  </td>
                  <td data-label="Good payments stopped">{t.goods}</td>
                  <td data-label="Good amount stopped">
                    {a ? show(a.good) : "—"}
                    {a && total ? (
                      <span class="muted"> ({percent(a.good / Math.max(1, total.good))})</span>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Whether a model's metrics carry the pictures (models trained before them do not). */
export function hasPictures(metrics: Metrics | null | undefined): metrics is Metrics {
  return Boolean(metrics?.roc && metrics.pr && metrics.caught);
}
