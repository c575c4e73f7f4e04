import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api } from "../api";
import { Field, Options } from "../components/field";
import { Table, useKeyset } from "../components/table";
import { when } from "../format";

type Agent = components["schemas"]["Agent"];

const STATUSES = ["active", "suspended", "revoked"] as const;
const TIERS = ["low", "medium", "high", "critical"] as const;

/** `#/agents`: the org's agents, newest first, filtered by status and risk tier. */
export function AgentsPage(_: { params: string[] }) {
  const [status, setStatus] = useState<"" | (typeof STATUSES)[number]>("");
  const [tier, setTier] = useState<"" | (typeof TIERS)[number]>("");
  const keyset = useKeyset(
    async (cursor) =>
      (
        await api.GET("/v1/agents", {
          params: {
            query: {
              limit: 25,
              ...(cursor ? { cursor } : {}),
              ...(status ? { status } : {}),
              ...(tier ? { risk_tier: tier } : {}),
            },
          },
        })
      ).data,
    [status, tier],
  );
  return (
    <>
      <h1>Agents</h1>
      <div class="filters">
        <Field label="Status">
          {(id) => (
            <select
              id={id}
              value={status}
              onChange={(e) => {
                setStatus((e.currentTarget as HTMLSelectElement).value as typeof status);
              }}
            >
              <option value="">Any</option>
              <Options values={STATUSES} />
            </select>
          )}
        </Field>
        <Field label="Risk tier">
          {(id) => (
            <select
              id={id}
              value={tier}
              onChange={(e) => {
                setTier((e.currentTarget as HTMLSelectElement).value as typeof tier);
              }}
            >
              <option value="">Any</option>
              <Options values={TIERS} />
            </select>
          )}
        </Field>
      </div>
      <Table<Agent>
        caption="Agents, newest first"
        keyset={keyset}
        rowKey={(agent) => agent.id}
        empty="No agents."
        columns={[
          { header: "Name", cell: (a) => <a href={`#/agents/${a.id}`}>{a.name}</a> },
          {
            header: "Status",
            cell: (a) => <span class={`badge badge-${a.status}`}>{a.status}</span>,
          },
          { header: "Trust score", cell: (a) => a.trust_score },
          { header: "Risk tier", cell: (a) => a.risk_tier },
          { header: "Agent Card", cell: (a) => a.evidence.card_status },
          { header: "Active keys", cell: (a) => a.evidence.active_keys },
          { header: "Created", cell: (a) => when(a.created) },
        ]}
      />
    </>
  );
}
