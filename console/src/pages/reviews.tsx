/**
 * Reviews: the queue of `review` decisions waiting for a person, oldest first
 * (GET /v1/reviews), resolved here as approve or deny with a note
 * (POST /v1/reviews/{id}/resolve), and the feedback labels of the reviewed assessment.
 */
import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction } from "../api";
import { Decision } from "../components/decision";
import { ErrorBanner } from "../components/error-banner";
import { Feedback } from "../components/feedback";
import { Field, Options } from "../components/field";
import { type Column, Table, useKeyset } from "../components/table";
import { shortId, when } from "../format";
import { href } from "../router";

type Review = components["schemas"]["Review"];
type Status = "open" | "resolved" | "expired";
const STATUSES: Status[] = ["open", "resolved", "expired"];

export function ReviewsPage(_: { params: string[] }) {
  const [status, setStatus] = useState<Status>("open");
  const [selected, setSelected] = useState<Review>();
  const [notice, setNotice] = useState("");
  const keyset = useKeyset<Review>(
    async (cursor) =>
      (
        await api.GET("/v1/reviews", {
          params: { query: { status, order: "asc", limit: 25, ...(cursor ? { cursor } : {}) } },
        })
      ).data,
    [status],
  );
  const columns: Column<Review>[] = [
    {
      header: "Assessment",
      cell: (row) => (
        <a href={href(`assessments/${row.assessment_id}`)} title={row.assessment_id}>
          {shortId(row.assessment_id)}
        </a>
      ),
    },
    { header: "Opened", cell: (row) => when(row.created) },
    {
      header: status === "open" ? "Expires" : "Decision",
      cell: (row) =>
        row.status === "open" ? when(row.expires_at) : <Decision value={row.decision} />,
    },
    { header: "Credential", cell: (row) => (row.credential_backed ? "spends a credential" : "—") },
    {
      header: "Action",
      cell: (row) => (
        <button
          type="button"
          aria-label={`${row.status === "open" ? "Resolve" : "Show"} review of assessment ${shortId(row.assessment_id)}`}
          aria-pressed={selected?.id === row.id}
          onClick={() => {
            setNotice("");
            setSelected(row);
          }}
        >
          {row.status === "open" ? "Resolve" : "Show"}
        </button>
      ),
    },
  ];
  return (
    <>
      <h1>Reviews</h1>
      <div class="form-row">
        <Field label="Status">
          {(id) => (
            <select
              id={id}
              value={status}
              onChange={(event) => {
                setSelected(undefined);
                setStatus(event.currentTarget.value as Status);
              }}
            >
              <Options values={STATUSES} />
            </select>
          )}
        </Field>
      </div>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <Table
        caption={
          status === "open" ? "Open reviews, the longest waiting first" : `Reviews ${status}`
        }
        columns={columns}
        rowKey={(row) => row.id}
        keyset={keyset}
        empty={status === "open" ? "The queue is empty." : "None."}
      />
      {selected ? (
        <ReviewPanel
          key={selected.id}
          review={selected}
          onResolved={(review) => {
            setSelected(undefined);
            setNotice(
              `Review of assessment ${shortId(review.assessment_id)} resolved: ${review.decision}.`,
            );
            keyset.reload();
          }}
        />
      ) : null}
    </>
  );
}

function ReviewPanel({
  review,
  onResolved,
}: {
  review: Review;
  onResolved: (review: Review) => void;
}) {
  const [note, setNote] = useState("");
  const { busy: sending, error: failure, run } = useAction();
  const resolve = (decision: "approve" | "deny") =>
    run(async () => {
      const { data } = await api.POST("/v1/reviews/{id}/resolve", {
        params: { path: { id: review.id } },
        body: { decision, ...(note.trim() ? { note: note.trim() } : {}) },
      });
      onResolved(data);
    });
  return (
    <section class="panel" aria-labelledby="review-panel">
      <h2 id="review-panel">Review of assessment {shortId(review.assessment_id)}</h2>
      <dl class="facts">
        <dt>Assessment</dt>
        <dd>
          <a href={href(`assessments/${review.assessment_id}`)}>{review.assessment_id}</a>
        </dd>
        <dt>Status</dt>
        <dd>{review.status}</dd>
        <dt>Opened</dt>
        <dd>{when(review.created)}</dd>
        <dt>{review.status === "open" ? "Expires (then denied)" : "Closed"}</dt>
        <dd>{when(review.status === "open" ? review.expires_at : review.resolved_at)}</dd>
        {review.status !== "open" ? (
          <>
            <dt>Decision</dt>
            <dd>
              <Decision value={review.decision} />
              {review.resolved_by ? ` by ${review.resolved_by.type} ${review.resolved_by.id}` : ""}
            </dd>
            <dt>Note</dt>
            <dd>{review.note ?? "—"}</dd>
          </>
        ) : null}
      </dl>
      {review.status === "open" ? (
        <form
          class="resolve"
          aria-label="Resolve the review"
          onSubmit={(event) => event.preventDefault()}
        >
          <Field label="Note" hint="Why: kept with the resolution and in the audit trail">
            {(id, describedBy) => (
              <textarea
                id={id}
                aria-describedby={describedBy}
                maxLength={1000}
                value={note}
                onInput={(event) => setNote(event.currentTarget.value)}
              />
            )}
          </Field>
          <div class="form-row">
            <button
              type="button"
              class="primary"
              disabled={sending}
              onClick={() => resolve("approve")}
            >
              Approve
            </button>
            <button type="button" disabled={sending} onClick={() => resolve("deny")}>
              Deny
            </button>
          </div>
          {review.credential_backed ? (
            <p class="muted">Approving spends under the assessment's AP2 credential.</p>
          ) : null}
          <ErrorBanner failure={failure} />
        </form>
      ) : null}
      <Feedback assessmentId={review.assessment_id} />
    </section>
  );
}
