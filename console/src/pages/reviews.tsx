/**
 * Reviews: the queue of `review` decisions waiting for a person, oldest first
 * (GET /v1/reviews), with its SLA (GET /v1/review-settings), and beside it the selected
 * review's panel (pages/review-panel.tsx: the evidence and the resolve form). Worked from the
 * keyboard as Stripe Radar's review queue is: `j`/`k` move, `a`/`d` arm approve or deny, Enter
 * confirms, Escape cancels, `n` goes to the note; after a resolution the next open review is
 * selected, with the focus in its panel. Keys never fire while a person types in a field.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, useApiCall } from "../api";
import { Decision } from "../components/decision";
import { ErrorBanner } from "../components/error-banner";
import { Field, Options } from "../components/field";
import { type Keyset, type ListPage, useKeyset } from "../components/table";
import { money, shortId, when } from "../format";
import { href } from "../router";
import {
  type PanelActions,
  type Review,
  ReviewPanel,
  summaryOf,
  type Verdict,
} from "./review-panel";

type Status = "open" | "resolved" | "expired";
const STATUSES: Status[] = ["open", "resolved", "expired"];

/** A span of time as a person says it: "2 d 3 h", "4 h 12 min", "8 min", "under a minute". */
export function span(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return "under a minute";
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  if (days > 0) return hours ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return rest ? `${hours} h ${rest} min` : `${hours} h`;
  return `${rest} min`;
}

/** The clock the ages and deadlines are read against, ticking every half minute. */
function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** Whether a key press belongs to a field the person is typing in. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof Element)) return false;
  return (
    target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']") !==
    null
  );
}

export function ReviewsPage(_: { params: string[] }) {
  const [status, setStatus] = useState<Status>("open");
  const [selectedId, setSelectedId] = useState<string>();
  const [pending, setPending] = useState<Verdict | null>(null);
  const [notice, setNotice] = useState("");
  /** Move the focus to the panel when it shows: a person (not a page load) picked the review. */
  const [focusToken, setFocusToken] = useState(0);
  const focusPanel = () => setFocusToken((n) => n + 1);
  const actions = useRef<PanelActions | null>(null);
  const now = useNow();
  const keyset = useKeyset<Review>(
    async (cursor) =>
      (
        await api.GET("/v1/reviews", {
          params: { query: { status, order: "asc", limit: 25, ...(cursor ? { cursor } : {}) } },
        })
      ).data as ListPage<Review>,
    [status],
  );
  const settings = useApiCall(async () => (await api.GET("/v1/review-settings")).data, []);
  const rows = keyset.data?.data ?? [];
  const selected =
    rows.find((row) => row.id === selectedId) ?? (keyset.loading ? undefined : rows[0]);

  const select = (row: Review | undefined) => {
    setPending(null);
    setSelectedId(row?.id);
    focusPanel();
  };
  const move = (by: number) => {
    if (rows.length === 0) return;
    const at = selected ? rows.findIndex((row) => row.id === selected.id) : -1;
    select(rows[Math.min(rows.length - 1, Math.max(0, at + by))]);
  };
  const arm = (decision: Verdict) => {
    if (selected?.status !== "open") return;
    setPending(decision);
    setNotice(
      `${decision === "approve" ? "Approve" : "Deny"} review of assessment ${shortId(selected.assessment_id)}? Enter confirms, Escape cancels.`,
    );
  };
  const cancel = () => {
    setPending(null);
    setNotice("Cancelled: nothing was resolved.");
    focusPanel();
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "Escape") {
        if (pending) {
          event.preventDefault();
          cancel();
        } else if (typing(event.target) && (event.target as Element).closest(".review-panel")) {
          // Out of the note, back to the keys.
          focusPanel();
        }
        return;
      }
      if (typing(event.target)) return;
      const onControl =
        event.target instanceof Element && event.target.closest("button, a, summary") !== null;
      switch (event.key) {
        case "j":
          move(1);
          break;
        case "k":
          move(-1);
          break;
        case "a":
          arm("approve");
          break;
        case "d":
          arm("deny");
          break;
        case "n":
          if (selected?.status !== "open") return;
          actions.current?.focusNote();
          break;
        case "Enter":
          // On a button or a link, Enter is that control's own (Confirm takes the focus).
          if (!pending || onControl) return;
          actions.current?.resolve(pending);
          break;
        default:
          return;
      }
      event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  });

  const resolved = (review: Review) => {
    const at = rows.findIndex((row) => row.id === review.id);
    const next = status === "open" ? (rows[at + 1] ?? rows[at - 1]) : review;
    setPending(null);
    setSelectedId(next?.id);
    focusPanel();
    setNotice(
      `Review of assessment ${shortId(review.assessment_id)} resolved: ${review.decision}. ` +
        (next && next.id !== review.id
          ? `Next: review of assessment ${shortId(next.assessment_id)}.`
          : status === "open"
            ? "The queue is empty."
            : ""),
    );
    keyset.reload();
  };

  const sla = settings.data?.sla_seconds;
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
                setSelectedId(undefined);
                setPending(null);
                setStatus(event.currentTarget.value as Status);
              }}
            >
              <Options values={STATUSES} />
            </select>
          )}
        </Field>
        <p class="muted sla">
          {sla === undefined
            ? ""
            : `SLA ${span(sla * 1000)}: an open review not resolved by then is denied.`}
        </p>
      </div>
      <p class="keys" id="review-keys">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>a</kbd> approve, <kbd>d</kbd> deny, then{" "}
        <kbd>Enter</kbd> to confirm or <kbd>Esc</kbd> to cancel, <kbd>n</kbd> note.
      </p>
      {/* Always there, so that a screen reader hears each change; drawn only when it speaks. */}
      <p class={notice ? "notice" : "visually-hidden"} role="status" aria-live="polite">
        {notice}
      </p>
      <ErrorBanner failure={settings.failure} />
      <div class="review-desk">
        <Queue
          rows={rows}
          status={status}
          selectedId={selected?.id}
          now={now}
          keyset={keyset}
          onSelect={select}
        />
        {selected ? (
          <ReviewPanel
            key={selected.id}
            review={selected}
            pending={pending}
            focusToken={focusToken}
            actions={actions}
            onCancel={cancel}
            onResolved={resolved}
          />
        ) : null}
      </div>
    </>
  );
}

function Queue({
  rows,
  status,
  selectedId,
  now,
  keyset,
  onSelect,
}: {
  rows: Review[];
  status: Status;
  selectedId: string | undefined;
  now: number;
  keyset: Keyset<Review>;
  onSelect: (row: Review) => void;
}) {
  return (
    <div class="table-block review-queue">
      <ErrorBanner failure={keyset.failure} />
      <div class="table-scroll">
        <table class="stack" aria-busy={keyset.loading} aria-describedby="review-keys">
          <caption>
            {status === "open" ? "Open reviews, the longest waiting first" : `Reviews ${status}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Assessment</th>
              <th scope="col">Amount</th>
              <th scope="col">Waiting</th>
              <th scope="col">{status === "open" ? "Time left" : "Decision"}</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const summary = summaryOf(row);
              const left = Date.parse(row.expires_at) - now;
              const end = row.resolved_at ? Date.parse(row.resolved_at) : now;
              const current = row.id === selectedId;
              return (
                <tr
                  key={row.id}
                  class={current ? "selected" : undefined}
                  aria-current={current ? "true" : undefined}
                >
                  <td data-label="Assessment">
                    <a href={href(`assessments/${row.assessment_id}`)} title={row.assessment_id}>
                      {shortId(row.assessment_id)}
                    </a>
                    {summary.payee ? (
                      <span class="muted"> {summary.payee.name ?? summary.payee.id}</span>
                    ) : null}
                  </td>
                  <td data-label="Amount">
                    {summary.amount != null && summary.currency
                      ? money(summary.amount, summary.currency)
                      : "—"}
                  </td>
                  <td data-label="Waiting" title={when(row.created)}>
                    {span(end - Date.parse(row.created))}
                  </td>
                  <td
                    data-label={status === "open" ? "Time left" : "Decision"}
                    title={row.status === "open" ? when(row.expires_at) : undefined}
                  >
                    {row.status === "open" ? (
                      left > 0 ? (
                        <span class={left < 3_600_000 ? "due-soon" : undefined}>
                          {span(left)} left
                        </span>
                      ) : (
                        <span class="due-soon">overdue: denied at the next sweep</span>
                      )
                    ) : (
                      <Decision value={row.decision} />
                    )}
                  </td>
                  <td data-label="Action">
                    <button
                      type="button"
                      aria-label={`${row.status === "open" ? "Resolve" : "Show"} review of assessment ${shortId(row.assessment_id)}`}
                      aria-pressed={current}
                      onClick={() => onSelect(row)}
                    >
                      {row.status === "open" ? "Resolve" : "Show"}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {!keyset.loading && !keyset.failure && rows.length === 0 ? (
        <p class="muted">{status === "open" ? "The queue is empty." : "None."}</p>
      ) : null}
      <div class="pager">
        <button type="button" onClick={keyset.previous} disabled={!keyset.previous}>
          Previous page
        </button>
        <span class="muted">Page {keyset.page}</span>
        <button type="button" onClick={keyset.next} disabled={!keyset.next}>
          Next page
        </button>
      </div>
    </div>
  );
}
