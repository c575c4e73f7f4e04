import { useState } from "preact/hooks";
import { RISK_MODEL_STATUSES } from "../../../src/schemas/vocabulary";
import { api, currentMode, useApiCall } from "../api";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { Options, SelectField } from "../components/field";
import type { RiskModel } from "../components/model-charts";
import { useRollback } from "../components/rollback";
import { Table, useKeyset } from "../components/table";
import { TrainForm } from "../components/train-model";
import { shortId, when } from "../format";
import { href, navigate } from "../router";

type StatusFilter = "" | RiskModel["status"];

/** How a person names a model: its activation version, or its id while it has none. */
export function modelName(model: Pick<RiskModel, "id" | "version">): string {
  return model.version === null ? `model ${shortId(model.id)}` : `model v${model.version}`;
}

/** "Live" or "Test": the mode whose payments a model of this page scores. */
export function modeWord(): string {
  return currentMode() === "test" ? "Test" : "Live";
}

/** The mode's active and shadow models, and the retired one with the highest version. */
export async function modelSlots(): Promise<{
  active: RiskModel | null;
  shadow: RiskModel | null;
  previous: RiskModel | null;
}> {
  const first = (status: "active" | "shadow") =>
    api
      .GET("/v1/risk-models", { params: { query: { status, limit: 1 } } })
      .then((r) => r.data.data[0] ?? null);
  const retired = async () => {
    // The model active before the current one is the retired model with the highest version
    // (activation takes the org's next version; retiring keeps it). An org has few models.
    let best: RiskModel | null = null;
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { data } = await api.GET("/v1/risk-models", {
        params: { query: { status: "retired", limit: 100, ...(cursor ? { cursor } : {}) } },
      });
      for (const m of data.data) {
        if (m.version !== null && (best === null || (best.version ?? 0) < m.version)) best = m;
      }
      if (!data.has_more || !data.next_cursor) break;
      cursor = data.next_cursor;
    }
    return best;
  };
  const [active, shadow, previous] = await Promise.all([
    first("active"),
    first("shadow"),
    retired(),
  ]);
  return { active, shadow, previous };
}

/** `#/models`: the mode's risk models, newest first, training a new one, and a rollback. */
export function ModelsPage(_: { params: string[] }) {
  const [filter, setFilter] = useState<StatusFilter>("");
  const [round, setRound] = useState(0);
  const keyset = useKeyset(
    async (cursor) => {
      const query = {
        limit: 25,
        ...(cursor ? { cursor } : {}),
        ...(filter ? { status: filter } : {}),
      };
      return (await api.GET("/v1/risk-models", { params: { query } })).data;
    },
    [filter, round],
  );
  return (
    <>
      <h1>Models</h1>
      <p>
        Learned risk models of {modeWord().toLowerCase()} mode, trained on the mode's payment
        history and labels (<a href="/docs#tag/risk-models">the API reference</a>). Import history
        on the <a href={href("retro-study")}>Retro study</a> page.
      </p>
      <ActiveModel onDone={() => setRound((n) => n + 1)} />
      <section class="panel" aria-labelledby="train-heading">
        <h2 id="train-heading">Train a model</h2>
        <TrainForm onStarted={(model) => navigate(`models/${model.id}`)} />
      </section>
      <div class="filters">
        <SelectField label="Show" id="models-status" value={filter} onValue={setFilter}>
          <option value="">All</option>
          <Options values={RISK_MODEL_STATUSES} />
        </SelectField>
      </div>
      <Table<RiskModel>
        caption="Risk models, newest first"
        keyset={keyset}
        rowKey={(m) => m.id}
        empty="No models yet: train one above."
        columns={[
          {
            header: "Model",
            cell: (m) => <a href={href(`models/${m.id}`)}>{modelName(m)}</a>,
          },
          {
            header: "Status",
            cell: (m) => <span class={`badge badge-${m.status}`}>{m.status}</span>,
          },
          { header: "As of", cell: (m) => when(m.as_of) },
          { header: "AUC ROC", cell: (m) => m.metrics?.auc_roc.toFixed(4) ?? "—" },
          { header: "Avg. precision", cell: (m) => m.metrics?.average_precision.toFixed(4) ?? "—" },
          {
            header: "Held-out frauds",
            cell: (m) =>
              m.counts ? `${m.counts.held_out.positives} / ${m.counts.held_out.rows}` : "—",
          },
          { header: "Created", cell: (m) => when(m.created) },
        ]}
      />
    </>
  );
}

/** The active model, and "Roll back" to the one active before it, after a confirmation. */
function ActiveModel({ onDone }: { onDone: () => void }) {
  const slots = useApiCall(modelSlots, []);
  const { confirming, setConfirming, done, busy, error, rollBack } = useRollback(
    async (target: RiskModel) =>
      (
        await api.POST("/v1/risk-models/{id}/activate", {
          params: { path: { id: target.id } },
        })
      ).data,
    slots.reload,
    onDone,
  );
  if (slots.failure) return <ErrorBanner failure={slots.failure} />;
  if (!slots.data) return null;
  const { active, shadow, previous } = slots.data;
  return (
    <section class="panel" aria-labelledby="active-model">
      <h2 id="active-model">Active model</h2>
      <p>
        {active ? (
          <>
            <a href={href(`models/${active.id}`)}>{modelName(active)}</a> scores{" "}
            {modeWord().toLowerCase()} payments (activated {when(active.activated_at)}).
          </>
        ) : (
          `No active model: ${modeWord().toLowerCase()} payments get the hand-weighted score.`
        )}{" "}
        {shadow ? (
          <>
            <a href={href(`models/${shadow.id}`)}>{modelName(shadow)}</a> shadows it.
          </>
        ) : null}
      </p>
      {done ? <p role="status">Rolled back: {modelName(done)} is active.</p> : null}
      <ErrorBanner failure={error} />
      {previous && active && !confirming ? (
        <button type="button" onClick={() => setConfirming(true)}>
          Roll back to {modelName(previous)}
        </button>
      ) : null}
      {previous && active && confirming ? (
        <Confirm
          legend="Confirm the rollback"
          action="Confirm rollback"
          busy={busy}
          onConfirm={() => rollBack(previous)}
          onCancel={() => setConfirming(false)}
        >
          {modeWord()} assessments will be scored by {modelName(previous)} again instead of{" "}
          {modelName(active)}, under a new version number; {modelName(active)} is retired.
        </Confirm>
      ) : null}
    </section>
  );
}
