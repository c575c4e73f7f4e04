/**
 * Overview: one period of assessments (today, 7, 30 or 90 days, in the reader's time zone):
 * the decisions per day with their totals (GET /v1/assessments/summary), the rates, the risk
 * score histogram, fraud caught and missed from feedback labels, the top signals, rejection
 * reasons, payees and agents (GET /v1/assessments/breakdown); the open reviews and this
 * period's spend against the cap. Every chart has its numbers beside it.
 */
import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useApiCall } from "../api";
import { ErrorBanner } from "../components/error-banner";
import { SelectField } from "../components/field";
import { DecisionLegend, ScoreHistogram, VolumeChart } from "../components/overview-charts";
import { AgentTable, CodeTable, FraudFigures, PayeeTable } from "../components/overview-lists";
import { milliseconds, money, percent } from "../format";
import { href } from "../router";

/** The reader's time zone: the days charted are theirs, not UTC's. */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The periods offered, in days ending today. */
const PERIODS = [1, 7, 30, 90] as const;
type Period = (typeof PERIODS)[number];

function periodLabel(days: Period): string {
  return days === 1 ? "today" : `${days} days`;
}

/** The window's query: from the local midnight `days - 1` days ago, to the end of today. */
function windowQuery(days: Period) {
  const day = new Date();
  day.setDate(day.getDate() - (days - 1));
  const pad = (n: number) => String(n).padStart(2, "0");
  return {
    from: `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`,
    tz: ZONE,
  };
}

export function OverviewPage(_: { params: string[] }) {
  const [period, setPeriod] = useState<Period>(30);
  const summary = useApiCall(
    async () =>
      (await api.GET("/v1/assessments/summary", { params: { query: windowQuery(period) } })).data,
    [period],
  );
  const breakdown = useApiCall(
    async () =>
      (await api.GET("/v1/assessments/breakdown", { params: { query: windowQuery(period) } })).data,
    [period],
  );
  const open = useApiCall(
    async () =>
      (await api.GET("/v1/reviews", { params: { query: { status: "open", limit: 100 } } })).data,
    [],
  );
  const billing = useApiCall(async () => (await api.GET("/v1/billing")).data, []);
  const totals = summary.data?.totals;
  const b = breakdown.data;
  const openCount = open.data ? `${open.data.data.length}${open.data.has_more ? "+" : ""}` : "…";
  const cap = billing.data?.spending_cap;
  const charge = billing.data?.projected_charge;
  const span = periodLabel(period);
  return (
    <>
      <h1>Overview</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          label="Period"
          id="overview-period"
          value={String(period)}
          onValue={(value) => setPeriod(Number(value) as Period)}
        >
          {PERIODS.map((days) => (
            <option key={days} value={String(days)}>
              {days === 1 ? "Today" : `Last ${days} days`}
            </option>
          ))}
        </SelectField>
      </form>
      <ErrorBanner failure={summary.failure} />
      <ErrorBanner failure={breakdown.failure} />
      <ErrorBanner failure={open.failure} />
      <ErrorBanner failure={billing.failure} />
      <dl class="tiles">
        <div>
          <dt>Assessments, {span}</dt>
          <dd>{totals ? totals.total : "…"}</dd>
        </div>
        <div>
          <dt>Approval rate</dt>
          <dd>{b ? percent(b.decisions.rates.approve) : "…"}</dd>
        </div>
        <div>
          <dt>Review rate</dt>
          <dd>{b ? percent(b.decisions.rates.review) : "…"}</dd>
        </div>
        <div>
          <dt>Deny rate</dt>
          <dd>{b ? percent(b.decisions.rates.deny) : "…"}</dd>
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
      <section aria-labelledby="volume-heading" class="panel">
        <h2 id="volume-heading">Assessments by decision, {span}</h2>
        {summary.data && totals ? (
          <>
            <DecisionLegend counts={totals} label={`Totals by decision, ${span}`} />
            <VolumeChart days={summary.data.days} />
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
      </section>
      {b ? (
        <Breakdown breakdown={b} span={span} />
      ) : breakdown.loading ? (
        <p aria-busy="true">Loading…</p>
      ) : null}
    </>
  );
}

type BreakdownBody = components["schemas"]["AssessmentsBreakdown"];

function Breakdown({ breakdown: b, span }: { breakdown: BreakdownBody; span: string }) {
  const total = b.decisions.total;
  return (
    <>
      <section aria-labelledby="scores-heading" class="panel">
        <h2 id="scores-heading">Risk score distribution, {span}</h2>
        <DecisionLegend counts={b.decisions} label={`Scored assessments by decision, ${span}`} />
        <ScoreHistogram bins={b.score_histogram} />
        <div class="table-scroll">
          <table class="stack" data-testid="score-histogram-table">
            <caption>Assessments per risk score bin, by decision</caption>
            <thead>
              <tr>
                <th scope="col">Score</th>
                {b.score_histogram.map((bin) => (
                  <th scope="col" key={bin.min}>
                    {bin.min}–{bin.max}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {(["approve", "review", "deny", "total"] as const).map((row) => (
                <tr key={row}>
                  <th scope="row">{row}</th>
                  {b.score_histogram.map((bin) => (
                    <td key={bin.min} data-label={`${bin.min}–${bin.max}`}>
                      {bin[row]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="fraud-heading" class="panel">
        <h2 id="fraud-heading">Fraud from feedback labels, {span}</h2>
        <FraudFigures labels={b.labels} total={total} />
        <p class="muted">
          The period's assessments against their effective label as known now: a fraud or chargeback
          decided review or deny was caught, one approved was missed.
        </p>
      </section>
      <section aria-labelledby="codes-heading" class="panel">
        <h2 id="codes-heading">Top signals and rejection reasons, {span}</h2>
        <div class="columns">
          <CodeTable caption="Top signals" codes={b.top_signals} total={total} kind="signal" />
          <CodeTable
            caption="Top rejection reasons"
            codes={b.top_rejection_reasons}
            total={total}
            kind="reason"
          />
        </div>
      </section>
      <section aria-labelledby="payees-heading" class="panel">
        <h2 id="payees-heading">Top payees, {span}</h2>
        <PayeeTable caption="Payees by volume" rows={b.payees.by_volume} />
        <PayeeTable caption="Payees by risk (most review or deny)" rows={b.payees.by_risk} />
      </section>
      <section aria-labelledby="agents-heading" class="panel">
        <h2 id="agents-heading">Top agents, {span}</h2>
        <AgentTable caption="Agents by volume" rows={b.agents.by_volume} />
        <AgentTable caption="Agents by risk (most review or deny)" rows={b.agents.by_risk} />
      </section>
    </>
  );
}
