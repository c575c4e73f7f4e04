/**
 * Assessments: the list with the filters of GET /v1/assessments (one search box `q`, decision,
 * kind, currency with an amount range typed in major units, score range, created from/to),
 * newest first, keyset paging: a new filter starts at the first page. Each row is the
 * transaction: amount, payee, agent and principal by name, the decision and who made it.
 */
import type { components, paths } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { DECISIONS } from "../../../src/schemas/vocabulary";
import { api } from "../api";
import { isoOf } from "../components/date-range";
import { Decision } from "../components/decision";
import { Field, Options } from "../components/field";
import { type Column, Table, useKeyset } from "../components/table";
import {
  AgentName,
  Amount,
  decidedByText,
  finalDecision,
  Payee,
  PrincipalName,
} from "../components/transaction";
import { minorOf, shortId, when } from "../format";
import { href } from "../router";

type Summary = components["schemas"]["AssessmentSummary"];
type Query = NonNullable<paths["/v1/assessments"]["get"]["parameters"]["query"]>;

const KINDS = ["ap2_payment", "message_send", "voice_call", "custom"] as const;

interface Filters {
  q: string;
  status: string;
  kind: string;
  currency: string;
  amountMin: string;
  amountMax: string;
  scoreMin: string;
  scoreMax: string;
  from: string;
  to: string;
}

const EMPTY: Filters = {
  q: "",
  status: "",
  kind: "",
  currency: "",
  amountMin: "",
  amountMax: "",
  scoreMin: "",
  scoreMax: "",
  from: "",
  to: "",
};

/** What is wrong with each filter as typed, by filter: the form says it before sending. */
function problemsOf(filters: Filters): Partial<Record<keyof Filters, string>> {
  const problems: Partial<Record<keyof Filters, string>> = {};
  const currency = filters.currency.trim();
  if (currency && !/^[A-Za-z]{3}$/.test(currency)) problems.currency = "A 3-letter ISO code";
  for (const name of ["amountMin", "amountMax"] as const) {
    const typed = filters[name].trim();
    if (!typed) continue;
    if (!currency) problems[name] = "Choose the currency first";
    else if (!problems.currency && minorOf(typed, currency) === null) {
      problems[name] = `An amount in ${currency.toUpperCase()}`;
    }
  }
  for (const name of ["scoreMin", "scoreMax"] as const) {
    const typed = filters[name].trim();
    if (typed && !(/^\d{1,3}$/.test(typed) && Number(typed) <= 100)) problems[name] = "0 to 100";
  }
  const low = minorOf(filters.amountMin, currency || "USD");
  const high = minorOf(filters.amountMax, currency || "USD");
  if (low !== null && high !== null && low > high) problems.amountMax = "Not below the minimum";
  if (filters.scoreMin && filters.scoreMax && Number(filters.scoreMin) > Number(filters.scoreMax)) {
    problems.scoreMax = "Not below the minimum";
  }
  return problems;
}

function queryOf(filters: Filters, cursor: string | undefined): Query {
  const query: Query = { limit: 25 };
  if (filters.q.trim()) query.q = filters.q.trim();
  if (filters.status) query.status = filters.status as Query["status"];
  if (filters.kind) query.kind = filters.kind as Query["kind"];
  const currency = filters.currency.trim().toUpperCase();
  if (currency) query.currency = currency;
  const amountMin = currency ? minorOf(filters.amountMin, currency) : null;
  const amountMax = currency ? minorOf(filters.amountMax, currency) : null;
  if (amountMin !== null) query.amount_gte = amountMin;
  if (amountMax !== null) query.amount_lte = amountMax;
  if (filters.scoreMin.trim()) query.score_gte = Number(filters.scoreMin);
  if (filters.scoreMax.trim()) query.score_lte = Number(filters.scoreMax);
  const from = isoOf(filters.from);
  const to = isoOf(filters.to);
  if (from) query.from = from;
  if (to) query.to = to;
  if (cursor) query.cursor = cursor;
  return query;
}

const COLUMNS: Column<Summary>[] = [
  {
    header: "Assessment",
    cell: (row) => (
      <a href={href(`assessments/${row.id}`)} title={row.id}>
        {shortId(row.id)}
      </a>
    ),
  },
  { header: "Created", cell: (row) => when(row.created) },
  { header: "Amount", cell: (row) => <Amount summary={row} /> },
  { header: "Payee", cell: (row) => <Payee summary={row} /> },
  { header: "Agent", cell: (row) => <AgentName summary={row} /> },
  { header: "Principal", cell: (row) => <PrincipalName summary={row} /> },
  {
    header: "Decision",
    cell: (row) => (
      <span>
        <Decision value={finalDecision(row)} /> <small class="muted">by {decidedByText(row)}</small>
      </span>
    ),
  },
  { header: "Score", cell: (row) => row.risk_score },
  { header: "Reason", cell: (row) => row.reason },
];

export function AssessmentsPage(_: { params: string[] }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const problems = problemsOf(draft);
  const invalid = Object.keys(problems).length > 0;
  const keyset = useKeyset<Summary>(
    async (cursor) =>
      (await api.GET("/v1/assessments", { params: { query: queryOf(applied, cursor) } })).data,
    [applied],
  );
  const set = (name: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value });
  /** A text filter, its problem (if any) as its hint and `aria-invalid`. */
  const text = (name: keyof Filters, label: string, props: Record<string, unknown> = {}) => (
    <Field label={label} hint={problems[name]}>
      {(id, describedBy) => (
        <input
          id={id}
          name={name}
          value={draft[name]}
          onInput={set(name)}
          aria-invalid={problems[name] ? true : undefined}
          aria-describedby={describedBy}
          {...props}
        />
      )}
    </Field>
  );
  return (
    <>
      <h1>Assessments</h1>
      <form
        class="filters"
        aria-label="Filter assessments"
        onSubmit={(event) => {
          event.preventDefault();
          if (!invalid) setApplied(draft);
        }}
      >
        {text("q", "Search", {
          type: "search",
          size: 30,
          placeholder: "Payee, agent, transaction or assessment id",
        })}
        <Field label="Decision">
          {(id) => (
            <select id={id} name="status" value={draft.status} onChange={set("status")}>
              <option value="">Any</option>
              <Options values={DECISIONS} />
            </select>
          )}
        </Field>
        <Field label="Kind">
          {(id) => (
            <select id={id} name="kind" value={draft.kind} onChange={set("kind")}>
              <option value="">Any</option>
              <Options values={KINDS} />
            </select>
          )}
        </Field>
        {text("currency", "Currency", { size: 4, placeholder: "USD", maxLength: 3 })}
        {text("amountMin", "Amount from", { size: 8, inputMode: "decimal" })}
        {text("amountMax", "Amount to", { size: 8, inputMode: "decimal" })}
        {text("scoreMin", "Score from", { size: 4, inputMode: "numeric" })}
        {text("scoreMax", "Score to", { size: 4, inputMode: "numeric" })}
        <Field label="Created from">
          {(id) => (
            <input
              id={id}
              type="datetime-local"
              name="from"
              value={draft.from}
              onInput={set("from")}
            />
          )}
        </Field>
        <Field label="Created to">
          {(id) => (
            <input id={id} type="datetime-local" name="to" value={draft.to} onInput={set("to")} />
          )}
        </Field>
        <button type="submit" class="primary" disabled={invalid}>
          Apply filters
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft(EMPTY);
            setApplied(EMPTY);
          }}
        >
          Clear
        </button>
      </form>
      <Table
        caption="Assessments, newest first"
        columns={COLUMNS}
        rowKey={(row) => row.id}
        keyset={keyset}
        empty="No assessment matches these filters."
      />
    </>
  );
}
