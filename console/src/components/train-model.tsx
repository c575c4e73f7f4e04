/**
 * Training a risk model from the console: the form of POST /v1/risk-models (202, the model in
 * `training`) and the progress of a model until it is `ready` or `failed`, polled with
 * GET /v1/risk-models/{id}.
 */
import { useEffect, useState } from "preact/hooks";
import { api, failureOf, useAction } from "../api";
import { percent, when } from "../format";
import { href } from "../router";
import { ErrorBanner } from "./error-banner";
import { Field } from "./field";
import type { RiskModel } from "./model-charts";

const DAY = 86_400;

/** How often a model in training is asked again (ms). */
export const POLL_MS = 1_000;

/**
 * The form: as of (default now), label delay and training window in days, the precisions the
 * thresholds are set to reach. `onStarted` gets the model in `training`.
 */
export function TrainForm({
  onStarted,
  defaultAsOf = "",
}: {
  onStarted: (model: RiskModel) => void;
  /** A `datetime-local` value (local time), e.g. the end of an imported history. */
  defaultAsOf?: string;
}) {
  const [asOf, setAsOf] = useState(defaultAsOf);
  const [labelDelay, setLabelDelay] = useState("7");
  const [window, setWindow] = useState("7");
  const [review, setReview] = useState("0.25");
  const [deny, setDeny] = useState("0.9");
  const { busy, error, run } = useAction();
  const errorsOf = (field: string) => {
    const details = error?.details;
    if (!Array.isArray(details)) return undefined;
    const messages = details
      .filter((d: { path?: string }) => d.path === field)
      .map((d: { message?: string }) => d.message ?? "");
    return messages.length ? messages : undefined;
  };
  const submit = (event: Event) => {
    event.preventDefault();
    run(async () => {
      const body = {
        ...(asOf ? { as_of: new Date(asOf).toISOString() } : {}),
        label_delay: Math.round(Number(labelDelay) * DAY),
        training_window: Math.round(Number(window) * DAY),
        review_precision: Number(review),
        deny_precision: Number(deny),
      };
      const { data } = await api.POST("/v1/risk-models", { body });
      onStarted(data);
    });
  };
  return (
    <form onSubmit={submit} class="train-form">
      <div class="form-row">
        <TrainInput
          label="As of"
          id="train-as-of"
          hint="Train on what was known at this time (empty: now)"
          errors={errorsOf("as_of")}
          type="datetime-local"
          value={asOf}
          onValue={setAsOf}
        />
        <TrainInput
          label="Label delay (days)"
          id="train-label-delay"
          hint="How long a chargeback may take to arrive"
          errors={errorsOf("label_delay")}
          type="number"
          min={0}
          max={90}
          step="any"
          value={labelDelay}
          onValue={setLabelDelay}
        />
        <TrainInput
          label="Training window (days)"
          id="train-window"
          hint="The span of mature payments trained on"
          errors={errorsOf("training_window")}
          type="number"
          min={1}
          max={365}
          step="any"
          value={window}
          onValue={setWindow}
        />
        <TrainInput
          label="Review precision"
          id="train-review-precision"
          errors={errorsOf("review_precision")}
          type="number"
          min={0.01}
          max={1}
          step="0.01"
          value={review}
          onValue={setReview}
        />
        <TrainInput
          label="Deny precision"
          id="train-deny-precision"
          errors={errorsOf("deny_precision")}
          type="number"
          min={0.01}
          max={1}
          step="0.01"
          value={deny}
          onValue={setDeny}
        />
      </div>
      <ErrorBanner failure={error} />
      <button type="submit" disabled={busy}>
        {busy ? "Starting…" : "Train a model"}
      </button>
    </form>
  );
}

/** One input of the form in its labelled Field, with the errors the API named for it. */
function TrainInput({
  label,
  id,
  hint,
  errors,
  type,
  min,
  max,
  step,
  value,
  onValue,
}: {
  label: string;
  id: string;
  hint?: string;
  errors: string[] | undefined;
  type: "datetime-local" | "number";
  min?: number;
  max?: number;
  step?: string;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <Field label={label} id={id} hint={hint} errors={errors}>
      {(fieldId, describedBy, invalid) => (
        <input
          id={fieldId}
          type={type}
          min={min}
          max={max}
          step={step}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

/**
 * A model's way to `ready` or `failed`: asked again every POLL_MS while it trains. The API does
 * not tell "queued" from "training" (the model is `training` from the 202 on), so the bar
 * shows three steps: requested, training (indeterminate, with the time so far), then done.
 */
export function TrainingProgress({
  model: initial,
  onSettled,
}: {
  model: RiskModel;
  onSettled?: (model: RiskModel) => void;
}) {
  const [model, setModel] = useState(initial);
  const [failure, setFailure] = useState<ReturnType<typeof failureOf>>();
  const [now, setNow] = useState(Date.now());
  const training = model.status === "training";
  useEffect(() => {
    if (!training) return;
    let stopped = false;
    const timer = setTimeout(async () => {
      try {
        const { data } = await api.GET("/v1/risk-models/{id}", {
          params: { path: { id: model.id } },
        });
        if (stopped) return;
        setFailure(undefined);
        setModel(data);
        setNow(Date.now());
        if (data.status !== "training") onSettled?.(data);
      } catch (error) {
        if (!stopped) {
          setFailure(failureOf(error));
          setNow(Date.now());
        }
      }
    }, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [model, training, now]);
  const seconds = Math.max(0, Math.round((now - Date.parse(model.created)) / 1000));
  const step = training ? 1 : 2;
  return (
    <div class="training-progress">
      <label for={`progress-${model.id}`}>
        {training
          ? `Training: requested, in the queue or training (${seconds} s so far)`
          : model.status === "failed"
            ? "Training failed"
            : "Trained"}
      </label>
      <progress id={`progress-${model.id}`} max={2} value={step} />
      <ol class="steps">
        <li class="done">Requested {when(model.created)}</li>
        <li class={training ? "current" : "done"}>Queued and training</li>
        <li class={training ? undefined : "done"}>
          {model.status === "failed" ? "Failed" : "Ready"}
          {model.trained_at ? ` ${when(model.trained_at)}` : ""}
        </li>
      </ol>
      <ErrorBanner failure={failure} />
      {model.status === "failed" ? (
        <p role="alert" class="error-banner">
          The model failed: {model.failure_reason ?? "no reason given"}
        </p>
      ) : null}
      {!training && model.status !== "failed" && model.metrics ? (
        <p role="status">
          Trained: AUC ROC {model.metrics.auc_roc.toFixed(4)}, average precision{" "}
          {model.metrics.average_precision.toFixed(4)}; at review it would have caught{" "}
          {percent(model.metrics.thresholds.review.recall)} of the frauds.{" "}
          <a href={href(`models/${model.id}`)}>Open the model</a>
        </p>
      ) : null}
    </div>
  );
}
