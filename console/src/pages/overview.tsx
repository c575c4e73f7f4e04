/**
 * Overview: the last 30 days of assessments by decision (GET /v1/assessments/summary), the
 * approval rate and latency percentiles, the open reviews and this period's spend against the
 * cap.
 */
import { useMemo } from "preact/hooks";
import type uPlot from "uplot";
import { api, useApiCall } from "../api";
import { Chart } from "../components/chart";
import { ErrorBanner } from "../components/error-banner";
import { milliseconds, money, percent } from "../format";
import { href } from "../router";

type Summary = Awaited<ReturnType<typeof loadSummary>>;

/** The reader's time zone: the days charted are theirs, not UTC's. */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

async function loadSummary() {
  return (await api.GET("/v1/assessments/summary", { params: { query: { tz: ZONE } } })).data;
}

/** A `YYYY-MM-DD` day as its local midnight in seconds: uPlot draws the time axis locally. */
function localMidnight(date: string): number {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(year ?? 1970, (month ?? 1) - 1, day ?? 1).getTime() / 1000;
}

/** uPlot's options for the per-day chart: a line per decision, in the decisions' colours. */
const CHART_OPTIONS: Omit<uPlot.Options, "width" | "height"> = {
  scales: { x: { time: true } },
  axes: [{}, { label: "Assessments" }],
  series: [
    { label: "Day" },
    { label: "approve", stroke: "#1a7f37", width: 2, points: { show: true } },
    { label: "review", stroke: "#9a6700", width: 2, points: { show: true } },
    { label: "deny", stroke: "#cf222e", width: 2, points: { show: true } },
  ],
};

function chartData(summary: Summary): uPlot.AlignedData {
  const days = summary.days;
  return [
    days.map((day) => localMidnight(day.date)),
    days.map((day) => day.approve),
    days.map((day) => day.review),
    days.map((day) => day.deny),
  ];
}

export function OverviewPage(_: { params: string[] }) {
  const summary = useApiCall(loadSummary, []);
  const open = useApiCall(
    async () =>
      (await api.GET("/v1/reviews", { params: { query: { status: "open", limit: 100 } } })).data,
    [],
  );
  const billing = useApiCall(async () => (await api.GET("/v1/billing")).data, []);
  const data = useMemo(() => summary.data && chartData(summary.data), [summary.data]);
  const totals = summary.data?.totals;
  const openCount = open.data ? `${open.data.data.length}${open.data.has_more ? "+" : ""}` : "…";
  const cap = billing.data?.spending_cap;
  const charge = billing.data?.projected_charge;
  return (
    <>
      <h1>Overview</h1>
      <ErrorBanner failure={summary.failure} />
      <ErrorBanner failure={open.failure} />
      <ErrorBanner failure={billing.failure} />
      <dl class="tiles">
        <div>
          <dt>Assessments, 30 days</dt>
          <dd>{totals ? totals.total : "…"}</dd>
        </div>
        <div>
          <dt>Approval rate</dt>
          <dd>{totals ? percent(totals.approval_rate) : "…"}</dd>
        </div>
        <div>
          <dt>Latency p50</dt>
          <dd>{totals ? milliseconds(totals.latency_ms.p50) : "…"}</dd>
        </div>
        <div>
          <dt>Latency p99</dt>
          <dd>{totals ? milliseconds(totals.latency_ms.p99) : "…"}</dd>
        </div>
        <div>
          <dt>Open reviews</dt>
          <dd>
            <a href={href("reviews")}>{openCount}</a>
          </dd>
        </div>
        <div>
          <dt>Spend this period</dt>
          <dd>
            {charge && cap
              ? `${money(charge.usage_amount, charge.currency)} of ${
                  cap.amount === null ? "no cap" : money(cap.amount, cap.currency)
                }`
              : "…"}
          </dd>
        </div>
      </dl>
      {cap && cap.status !== "none" && cap.status !== "ok" ? (
        <p class="error-banner" role="status">
          Spending cap: {cap.status === "reached" ? "reached" : "review required"} (
          <a href={href("billing")}>billing</a>)
        </p>
      ) : null}
      <h2>Assessments per day by decision</h2>
      {summary.data && data ? (
        <>
          <Chart
            title="Assessments per day: approve, review and deny"
            options={CHART_OPTIONS}
            data={data}
          />
          <details>
            <summary>The numbers per day</summary>
            <div class="table-scroll">
              <table>
                <caption>Assessments per day ({ZONE})</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">approve</th>
                    <th scope="col">review</th>
                    <th scope="col">deny</th>
                    <th scope="col">p50</th>
                    <th scope="col">p99</th>
                  </tr>
                </thead>
                <tbody>
                  {summary.data.days.map((day) => (
                    <tr key={day.date}>
                      <th scope="row">{day.date}</th>
                      <td>{day.approve}</td>
                      <td>{day.review}</td>
                      <td>{day.deny}</td>
                      <td>{milliseconds(day.latency_ms.p50)}</td>
                      <td>{milliseconds(day.latency_ms.p99)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      ) : summary.loading ? (
        <p aria-busy="true">Loading…</p>
      ) : null}
    </>
  );
}
