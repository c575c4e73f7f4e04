/**
 * An assessment's feedback labels (what happened afterwards: fraud, chargeback, …) and a form
 * to add one: GET and POST /v1/assessments/{id}/feedback (docs/feedback.md).
 */
import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction, useApiCall } from "../api";
import { when } from "../format";
import { ErrorBanner } from "./error-banner";
import { Field, Options } from "./field";

type Label = components["schemas"]["FeedbackLabel"];
const LABELS: Label[] = ["fraud", "dispute", "chargeback", "refund", "legitimate"];

export function Feedback({ assessmentId }: { assessmentId: string }) {
  const list = useApiCall(
    async () =>
      (
        await api.GET("/v1/assessments/{id}/feedback", {
          params: { path: { id: assessmentId } },
        })
      ).data,
    [assessmentId],
  );
  const [label, setLabel] = useState<Label>("legitimate");
  const [note, setNote] = useState("");
  const { busy: sending, error: failure, run } = useAction();
  const [said, setSaid] = useState("");

  const send = (event: Event) => {
    event.preventDefault();
    setSaid("");
    void run(async () => {
      await api.POST("/v1/assessments/{id}/feedback", {
        params: { path: { id: assessmentId } },
        body: { label, source: "console", ...(note.trim() ? { note: note.trim() } : {}) },
      });
      setNote("");
      setSaid(`Labelled ${label}.`);
      list.reload();
    });
  };

  const labels = list.data?.data ?? [];
  return (
    <section class="panel" aria-labelledby={`feedback-${assessmentId}`}>
      <h2 id={`feedback-${assessmentId}`}>Feedback labels</h2>
      <ErrorBanner failure={list.failure} />
      {labels.length === 0 ? (
        <p class="muted">{list.loading ? "Loading…" : "No label yet."}</p>
      ) : (
        <ul>
          {labels.map((item) => (
            <li key={item.id}>
              <strong>{item.label}</strong> · {when(item.occurred_at)}
              {item.source ? ` · ${item.source}` : ""}
              {item.note ? ` · “${item.note}”` : ""}
            </li>
          ))}
        </ul>
      )}
      <form class="form-row" onSubmit={send} aria-label="Add a feedback label">
        <Field label="Label">
          {(id) => (
            <select
              id={id}
              value={label}
              onChange={(event) => setLabel(event.currentTarget.value as Label)}
            >
              <Options values={LABELS} />
            </select>
          )}
        </Field>
        <Field label="Label note">
          {(id) => (
            <input
              id={id}
              value={note}
              maxLength={1000}
              onInput={(event) => setNote(event.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={sending}>
          Add label
        </button>
      </form>
      <p role="status" class="muted">
        {said}
      </p>
      <ErrorBanner failure={failure} />
    </section>
  );
}
