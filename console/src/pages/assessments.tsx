/**
 * Assessments: the list with every filter GET /v1/assessments takes (decision, agent, kind,
 * created from/to), newest first, keyset paging: a new filter starts at the first page.
 */
import type { components, paths } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { DECISIONS } from "../../../src/schemas/vocabulary";
import { api } from "../api";
import { isoOf } from "../components/date-range";
import { Decision } from "../components/decision";
import { Field, Options } from "../components/field";
import { type Column, Table, useKeyset } from "../components/table";
import { shortId, when } from "../format";
import { href } from "../router";

type Summary = components["schemas"]["AssessmentSummary"];
type Query = NonNullable<paths["/v1/assessments"]["get"]["parameters"]["query"]>;

const KINDS = ["ap2_payment", "message_send", "voice_call", "custom"] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Filters {
  status: string;
  agent: string;
  kind: string;
  from: string;
  to: string;
}

const EMPTY: Filters = { status: "", agent: "", kind: "", from: "", to: "" };

function queryOf(filters: Filters, cursor: string | undefined): Query {
  const query: Query = { limit: 25 };
  if (filters.status) query.status = filters.status as Query["status"];
  if (filters.agent) query.agent = filters.agent.trim();
  if (filters.kind) query.kind = filters.kind as Query["kind"];
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
  { header: "Decision", cell: (row) => <Decision value={row.decision} /> },
  { header: "Score", cell: (row) => row.risk_score },
  { header: "Kind", cell: (row) => row.kind },
  {
    header: "Agent",
    cell: (row) =>
      row.agent_id ? (
        <a href={href(`agents/${row.agent_id}`)} title={row.agent_id}>
          {shortId(row.agent_id)}
        </a>
      ) : (
        <span class="muted">—</span>
      ),
  },
  { header: "Reason", cell: (row) => row.reason },
];

export function AssessmentsPage(_: { params: string[] }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const agentInvalid = draft.agent.trim() !== "" && !UUID.test(draft.agent.trim());
  const keyset = useKeyset<Summary>(
    async (cursor) =>
      (await api.GET("/v1/assessments", { params: { query: queryOf(applied, cursor) } })).data,
    [applied],
  );
  const set = (name: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value });
  return (
    <>
      <h1>Assessments</h1>
      <form
        class="filters"
        aria-label="Filter assessments"
        onSubmit={(event) => {
          event.preventDefault();
          if (!agentInvalid) setApplied(draft);
        }}
      >
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
        <Field label="Agent id" hint={agentInvalid ? "An agent id is a UUID" : undefined}>
          {(id, describedBy) => (
            <input
              id={id}
              name="agent"
              value={draft.agent}
              onInput={set("agent")}
              aria-invalid={agentInvalid}
              aria-describedby={describedBy}
              placeholder="UUID"
              size={38}
            />
          )}
        </Field>
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
        <button type="submit" class="primary" disabled={agentInvalid}>
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
