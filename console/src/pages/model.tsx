import { useState } from "preact/hooks";
import { api, useAction, useApiCall } from "../api";
import { Confirm } from "../components/confirm";
import { CopyButton } from "../components/copy-button";
import { ErrorBanner } from "../components/error-banner";
import {
  CalibrationPlot,
  CaughtView,
  hasPictures,
  Importances,
  MetricTiles,
  PrCurve,
  type RiskModel,
  RocCurve,
} from "../components/model-charts";
import { TrainingProgress } from "../components/train-model";
import { when } from "../format";
import { href } from "../router";
import { modelName, modelSlots, modeWord } from "./models";

const days = (seconds: number) => `${+(seconds / 86_400).toFixed(2)} days`;

/** `#/models/<id>`: one model, its metrics as pictures and numbers, and its lifecycle. */
export function ModelPage({ params }: { params: string[] }) {
  const id = params[0] ?? "";
  const loaded = useApiCall(
    async () => (await api.GET("/v1/risk-models/{id}", { params: { path: { id } } })).data,
    [id],
  );
  const model = loaded.data;
  if (loaded.failure) {
    return (
      <>
        <h1>Model</h1>
        <ErrorBanner failure={loaded.failure} />
        <p>
          <a href={href("models")}>All models</a>
        </p>
      </>
    );
  }
  if (!model) {
    return (
      <>
        <h1>Model</h1>
        <p aria-busy="true">Loading…</p>
      </>
    );
  }
  const m = model.metrics;
  return (
    <>
      <h1>
        {modelName(model)[0]?.toUpperCase()}
        {modelName(model).slice(1)}
      </h1>
      <p>
        <a href={href("models")}>All models</a>
      </p>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge badge-${model.status}`}>{model.status}</span>
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{model.id}</code> <CopyButton text={model.id} label="Copy the id" />
        </dd>
        <dt>Trained as of</dt>
        <dd>{when(model.as_of)}</dd>
        <dt>Label delay, training window</dt>
        <dd>
          {days(model.label_delay)}, {days(model.training_window)}
        </dd>
        <dt>Target precision (review, deny)</dt>
        <dd>
          {model.targets.review_precision}, {model.targets.deny_precision}
        </dd>
        {model.counts ? (
          <>
            <dt>Trained on</dt>
            <dd>
              {model.counts.rows} payments ({model.counts.positives} frauds);{" "}
              {model.counts.left_out_unlabeled} recent unlabelled payments left out;{" "}
              {model.counts.events_considered} payments read
            </dd>
          </>
        ) : null}
        <dt>Trained</dt>
        <dd>{when(model.trained_at)}</dd>
        <dt>Last activated</dt>
        <dd>{when(model.activated_at)}</dd>
      </dl>
      {model.status === "training" ? (
        <section class="panel" aria-labelledby="progress-heading">
          <h2 id="progress-heading">Training</h2>
          <TrainingProgress model={model} onSettled={loaded.reload} />
        </section>
      ) : null}
      {model.status === "failed" ? (
        <p class="error-banner" role="alert">
          Training failed: {model.failure_reason ?? "no reason given"}
        </p>
      ) : null}
      <Lifecycle model={model} onChanged={loaded.reload} />
      {m ? (
        <>
          <section aria-labelledby="metrics-heading">
            <h2 id="metrics-heading">Metrics on the held-out slice</h2>
            <p class="muted">
              Measured on the latest quarter of the mature payments, by a fit that never saw them (
              <a href="/docs#tag/risk-models">risk models in the API reference</a>).
            </p>
            <MetricTiles model={model} />
          </section>
          {hasPictures(m) ? null : (
            <p class="notice" role="note">
              This model was trained before the service kept its ROC and precision–recall curves and
              what each threshold would have caught: they are not shown. Train it again to see them;
              its thresholds and calibration are below.
            </p>
          )}
          <section aria-labelledby="pr-heading">
            <h2 id="pr-heading">Precision and recall at the thresholds</h2>
            <PrCurve metrics={m} />
          </section>
          {m.roc ? (
            <section aria-labelledby="roc-heading">
              <h2 id="roc-heading">ROC curve</h2>
              <RocCurve metrics={m} />
            </section>
          ) : null}
          <section aria-labelledby="calibration-heading">
            <h2 id="calibration-heading">Calibration</h2>
            <CalibrationPlot metrics={m} />
          </section>
          {m.caught ? (
            <section aria-labelledby="caught-heading">
              <h2 id="caught-heading">What it would have caught</h2>
              <CaughtView metrics={m} />
            </section>
          ) : null}
        </>
      ) : null}
      {model.features ? (
        <section aria-labelledby="features-heading">
          <h2 id="features-heading">Feature importances</h2>
          <Importances features={model.features} />
        </section>
      ) : null}
    </>
  );
}

/**
 * Activate (or roll back to) and shadow, each after a confirmation that says what changes for
 * the mode's payments.
 */
function Lifecycle({ model, onChanged }: { model: RiskModel; onChanged: () => void }) {
  const slots = useApiCall(modelSlots, [model.status]);
  const [asking, setAsking] = useState<"activate" | "shadow" | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const trained = model.status !== "training" && model.status !== "failed";
  if (!trained) return null;
  if (slots.failure) return <ErrorBanner failure={slots.failure} />;
  if (!slots.data) return null;
  const { active, shadow } = slots.data;
  const mode = modeWord();
  const name = modelName(model);
  const act = (what: "activate" | "shadow") =>
    run(async () => {
      const path = { params: { path: { id: model.id } } };
      const { data } =
        what === "activate"
          ? await api.POST("/v1/risk-models/{id}/activate", path)
          : await api.POST("/v1/risk-models/{id}/shadow", path);
      setAsking(null);
      setDone(
        what === "activate"
          ? `Activated: ${modelName(data)} scores ${mode.toLowerCase()} payments.`
          : `Shadowing: ${modelName(data)} is scored beside every ${mode.toLowerCase()} payment.`,
      );
      onChanged();
    });
  const canActivate = model.status !== "active";
  const canShadow = model.status === "ready" || model.status === "retired";
  return (
    <section class="panel" aria-labelledby="lifecycle-heading">
      <h2 id="lifecycle-heading">Use this model</h2>
      <p>
        {model.status === "active"
          ? `This model scores ${mode.toLowerCase()} payments.`
          : active
            ? `${mode} payments are scored by ${modelName(active)}.`
            : `No model is active: ${mode.toLowerCase()} payments get the hand-weighted score.`}{" "}
        {shadow && shadow.id !== model.id ? `${modelName(shadow)} shadows it.` : null}
        {active && active.id !== model.id ? (
          <>
            {" "}
            <a href={href(`models/${active.id}`)}>See {modelName(active)}</a>
          </>
        ) : null}
      </p>
      {done ? <p role="status">{done}</p> : null}
      <ErrorBanner failure={error} />
      {asking === null ? (
        <div class="actions">
          {canActivate ? (
            <button type="button" onClick={() => setAsking("activate")}>
              {model.status === "retired" ? "Roll back to this model" : "Activate"}
            </button>
          ) : null}
          {canShadow ? (
            <button type="button" onClick={() => setAsking("shadow")}>
              Shadow
            </button>
          ) : null}
        </div>
      ) : null}
      {asking === "activate" ? (
        <Confirm
          legend="Confirm the activation"
          action="Confirm activation"
          busy={busy}
          onConfirm={() => act("activate")}
          onCancel={() => setAsking(null)}
        >
          {mode} assessments will be scored by {name}
          {model.version === null ? "" : " (under a new version number)"} instead of{" "}
          {active ? `${modelName(active)}, which is retired` : "the hand-weighted score"}. Its
          thresholds (review at {model.metrics?.thresholds.review.probability ?? "—"}, deny at{" "}
          {model.metrics?.thresholds.deny.probability ?? "—"}) set the score's bands.
        </Confirm>
      ) : null}
      {asking === "shadow" ? (
        <Confirm
          legend="Confirm shadowing"
          action="Confirm shadow"
          busy={busy}
          onConfirm={() => act("shadow")}
          onCancel={() => setAsking(null)}
        >
          {name} will be scored beside every {mode.toLowerCase()} assessment, its verdict recorded
          and never acted on
          {shadow ? `; ${modelName(shadow)} stops shadowing` : ""}.
        </Confirm>
      ) : null}
    </section>
  );
}
