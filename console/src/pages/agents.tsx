import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { AGENT_STATUSES, RISK_TIERS } from "../../../src/schemas/vocabulary";
import { api } from "../api";
import { Options, SelectField } from "../components/field";
import { Table, useKeyset } from "../components/table";
import { when } from "../format";

type Agent = components["schemas"]["Agent"];

/** `#/agents`: the org's agents, newest first, filtered by status and risk tier. */
export function AgentsPage(_: { params: string[] }) {
  const [status, setStatus] = useState<"" | (typeof AGENT_STATUSES)[number]>("");
  const [tier, setTier] = useState<"" | (typeof RISK_TIERS)[number]>("");
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
        <SelectField label="Status" value={status} onValue={setStatus}>
          <option value="">Any</option>
          <Options values={AGENT_STATUSES} />
        </SelectField>
        <SelectField label="Risk tier" value={tier} onValue={setTier}>
          <option value="">Any</option>
          <Options values={RISK_TIERS} />
        </SelectField>
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
