/**
 * The Overview's lists, from GET /v1/assessments/breakdown: the top signals and rejection
 * reasons, fraud caught and missed, and the top payees and agents. Every figure is text; a
 * `<meter>` beside a count shows its share without an inline style.
 */
import type { components } from "@agent-risk/client";
import { SIGNAL_CATALOG } from "../../../src/assess/signals";
import { money, percent } from "../format";
import { href } from "../router";

type Breakdown = components["schemas"]["AssessmentsBreakdown"];
type Code = Breakdown["top_signals"][number];
type Payee = components["schemas"]["BreakdownPayee"];
type Agent = components["schemas"]["BreakdownAgent"];
type Amount = components["schemas"]["BreakdownAmount"];

/** A code in words: the signal catalog's text, or the code with its underscores as spaces. */
function words(code: string, kind: "signal" | "reason"): string {
  const known = kind === "signal" ? SIGNAL_CATALOG[code as keyof typeof SIGNAL_CATALOG] : null;
  if (known) return known.text;
  const spaced = code.replaceAll("_", " ");
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** Amounts in their currencies, or a dash when there are none. */
export function amounts(list: Amount[]): string {
  return list.length === 0 ? "—" : list.map((a) => money(a.amount, a.currency)).join(", ");
}

export function CodeTable({
  caption,
  codes,
  total,
  kind,
}: {
  caption: string;
  codes: Code[];
  total: number;
  kind: "signal" | "reason";
}) {
  if (codes.length === 0) return <p class="muted">{caption}: none in the period.</p>;
  return (
    <div class="table-scroll">
      <table class="stack">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{kind === "signal" ? "Signal" : "Reason"}</th>
            <th scope="col">Category</th>
            <th scope="col">Assessments</th>
            <th scope="col">Share</th>
          </tr>
        </thead>
        <tbody>
          {codes.map((c) => (
            <tr key={c.code}>
              <th scope="row">
                {words(c.code, kind)} <code class="muted">{c.code}</code>
              </th>
              <td data-label="Category">{c.category}</td>
              <td data-label="Assessments">{c.count}</td>
              <td data-label="Share">
                <meter min={0} max={Math.max(1, total)} value={c.count} aria-hidden="true" />{" "}
                {percent(total === 0 ? null : c.count / total)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The period's labels: fraud rate, and fraud caught (review or deny) against missed. */
export function FraudFigures({ labels, total }: { labels: Breakdown["labels"]; total: number }) {
  const { fraud_caught: caught, fraud_missed: missed } = labels;
  return (
    <dl class="tiles" data-testid="fraud-figures">
      <div>
        <dt>Fraud labeled rate</dt>
        <dd>
          {percent(labels.fraud_rate)}{" "}
          <small class="muted">
            ({labels.fraud} of {total})
          </small>
        </dd>
      </div>
      <div>
        <dt>Fraud caught (review or deny)</dt>
        <dd>
          {amounts(caught.amounts)} <small class="muted">({caught.count})</small>
        </dd>
      </div>
      <div>
        <dt>Fraud missed (approved)</dt>
        <dd>
          {amounts(missed.amounts)} <small class="muted">({missed.count})</small>
        </dd>
      </div>
      <div>
        <dt>Labeled</dt>
        <dd>
          {labels.labeled}{" "}
          <small class="muted">
            ({labels.legitimate} legitimate, {labels.legitimate_flagged} of them flagged)
          </small>
        </dd>
      </div>
    </dl>
  );
}

function TrafficCells({ row }: { row: Payee | Agent }) {
  return (
    <>
      <td data-label="Assessments">{row.count}</td>
      <td data-label="Amount">{amounts(row.amounts)}</td>
      <td data-label="approve / review / deny">
        {row.approve} / {row.review} / {row.deny}
      </td>
      <td data-label="Review or deny">{percent(row.flagged_rate)}</td>
      <td data-label="Mean score">{row.mean_score}</td>
    </>
  );
}

function TrafficHead({ first }: { first: string }) {
  return (
    <thead>
      <tr>
        <th scope="col">{first}</th>
        <th scope="col">Assessments</th>
        <th scope="col">Amount</th>
        <th scope="col">approve / review / deny</th>
        <th scope="col">Review or deny</th>
        <th scope="col">Mean score</th>
      </tr>
    </thead>
  );
}

export function PayeeTable({ caption, rows }: { caption: string; rows: Payee[] }) {
  if (rows.length === 0) return <p class="muted">{caption}: no payee in the period.</p>;
  return (
    <div class="table-scroll">
      <table class="stack">
        <caption>{caption}</caption>
        <TrafficHead first="Payee" />
        <tbody>
          {rows.map((p) => (
            <tr key={p.counterparty}>
              <th scope="row">
                {p.name ?? p.id ?? "unknown"}
                {p.name && p.id ? (
                  <>
                    {" "}
                    <code class="muted">{p.id}</code>
                  </>
                ) : null}
              </th>
              <TrafficCells row={p} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AgentTable({ caption, rows }: { caption: string; rows: Agent[] }) {
  if (rows.length === 0) return <p class="muted">{caption}: no agent in the period.</p>;
  return (
    <div class="table-scroll">
      <table class="stack">
        <caption>{caption}</caption>
        <TrafficHead first="Agent" />
        <tbody>
          {rows.map((a) => (
            <tr key={a.id}>
              <th scope="row">
                <a href={href(`agents/${a.id}`)} title={a.id}>
                  {a.name ?? a.id}
                </a>
              </th>
              <TrafficCells row={a} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
