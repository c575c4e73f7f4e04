import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useApiCall } from "../api";
import { ErrorBanner } from "../components/error-banner";
import { SelectField } from "../components/field";
import { useRollback } from "../components/rollback";
import { Table, useKeyset } from "../components/table";
import { when } from "../format";
import { ActivationPreview } from "./activation-preview";
import { previousActive } from "./policy-rollback";

type Policy = components["schemas"]["Policy"];
type StatusFilter = "" | "draft" | "active" | "shadow";

/** `#/policies`: every policy, newest first, with the active one and a rollback. */
export function PoliciesPage(_: { params: string[] }) {
  const [filter, setFilter] = useState<StatusFilter>("");
  const [round, setRound] = useState(0);
  const keyset = useKeyset(
    async (cursor) => {
      const query = {
        limit: 25,
        ...(cursor ? { cursor } : {}),
        ...(filter === "draft" || filter === "active" ? { status: filter } : {}),
        ...(filter === "shadow" ? { shadow: "true" as const } : {}),
      };
      return (await api.GET("/v1/policies", { params: { query } })).data;
    },
    [filter, round],
  );

  return (
    <>
      <h1>Policies</h1>
      <p>
        <a href="#/policies/new" class="button">
          New policy draft
        </a>
      </p>
      <Rollback onDone={() => setRound((n) => n + 1)} />
      <div class="filters">
        <SelectField label="Show" value={filter} onValue={setFilter}>
          <option value="">All</option>
          <option value="active">Active</option>
          <option value="draft">Drafts</option>
          <option value="shadow">Shadow</option>
        </SelectField>
      </div>
      <Table<Policy>
        caption="Policies, newest first"
        keyset={keyset}
        rowKey={(policy) => policy.id}
        empty="No policies yet."
        columns={[
          { header: "Name", cell: (p) => <a href={`#/policies/${p.id}`}>{p.name}</a> },
          {
            header: "Status",
            cell: (p) => <span class={`badge badge-${p.status}`}>{p.status}</span>,
          },
          { header: "Version", cell: (p) => p.version ?? "—" },
          { header: "Shadow", cell: (p) => (p.shadow ? "shadowing" : "—") },
          { header: "Created", cell: (p) => when(p.created) },
          { header: "Last activated", cell: (p) => when(p.activated_at) },
        ]}
      />
    </>
  );
}

/**
 * Roll back: activate again the policy that was active before the current one (the draft
 * with the highest version, see policy-rollback.ts), after its 30-day backtest and a
 * confirmation, as any activation.
 */
function Rollback({ onDone }: { onDone: () => void }) {
  const target = useApiCall(async () => {
    const active = await api.GET("/v1/policies", {
      params: { query: { status: "active", limit: 1 } },
    });
    return { active: active.data.data[0] ?? null, previous: await previousActive() };
  }, []);
  const { confirming, setConfirming, done, busy, error, rollBack } = useRollback(
    async (policy: Policy) =>
      (
        await api.POST("/v1/policies/{id}/activate", {
          params: { path: { id: policy.id } },
        })
      ).data,
    target.reload,
    onDone,
  );
  if (target.failure) return <ErrorBanner failure={target.failure} />;
  if (!target.data) return null;
  const { active, previous } = target.data;

  return (
    <section aria-labelledby="active-policy" class="panel">
      <h2 id="active-policy">Active policy</h2>
      <p>
        {active ? (
          <>
            <a href={`#/policies/${active.id}`}>{active.name}</a> (version {active.version},
            activated {when(active.activated_at)})
          </>
        ) : (
          "No active policy: the model decides alone."
        )}
      </p>
      {done && (
        <p role="status">
          Rolled back: {done.name} is active again as version {done.version}.
        </p>
      )}
      <ErrorBanner failure={error} />
      {previous && !confirming && (
        <button type="button" onClick={() => setConfirming(true)}>
          Roll back to {previous.name} (version {previous.version})
        </button>
      )}
      {previous && confirming && (
        <ActivationPreview
          id={previous.id}
          name={previous.name}
          action="Confirm rollback"
          busy={busy}
          onConfirm={() => rollBack(previous)}
          onCancel={() => setConfirming(false)}
        >
          Activate <strong>{previous.name}</strong> again? It decides every assessment from now on,
          under a new version number; {active ? active.name : "the current policy"} returns to
          draft.
        </ActivationPreview>
      )}
    </section>
  );
}
