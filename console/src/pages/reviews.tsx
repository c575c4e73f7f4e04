/**
 * Reviews: the queue of `review` decisions waiting for a person, oldest first
 * (GET /v1/reviews), with its SLA (GET /v1/review-settings), and beside it the selected
 * review's panel (pages/review-panel.tsx: the evidence and the resolve form). Worked from the
 * keyboard as Stripe Radar's review queue is: `j`/`k` move, `a`/`d` arm approve or deny, Enter
 * confirms, Escape cancels, `n` goes to the note; after a resolution the next open review is
 * selected, with the focus in its panel. Keys never fire while a person types in a field.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, useApiCall } from "../api";
import { Decision } from "../components/decision";
import { ErrorBanner } from "../components/error-banner";
import { Options, SelectField } from "../components/field";
import { type Keyset, type ListPage, Table, useKeyset } from "../components/table";
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

  // Registered in the commit, so the next key already reads this render's state (pending).
  useLayoutEffect(() => {
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
        <SelectField
          label="Status"
          value={status}
          onValue={(value) => {
            setSelectedId(undefined);
            setPending(null);
            setStatus(value);
          }}
        >
          <Options values={STATUSES} />
        </SelectField>
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

/** The queue: a row a review, its age and deadline (or decision), and the button that opens it. */
function Queue({
  status,
  selectedId,
  now,
  keyset,
  onSelect,
}: {
  status: Status;
  selectedId: string | undefined;
  now: number;
  keyset: Keyset<Review>;
  onSelect: (row: Review) => void;
}) {
  const decided = status === "open" ? "Time left" : "Decision";
  return (
    <Table<Review>
      class="review-queue"
      describedBy="review-keys"
      caption={status === "open" ? "Open reviews, the longest waiting first" : `Reviews ${status}`}
      keyset={keyset}
      rowKey={(row) => row.id}
      selected={(row) => row.id === selectedId}
      empty={status === "open" ? "The queue is empty." : "None."}
      columns={[
        {
          header: "Assessment",
          cell: (row) => {
            const { payee } = summaryOf(row);
            return (
              <>
                <a href={href(`assessments/${row.assessment_id}`)} title={row.assessment_id}>
                  {shortId(row.assessment_id)}
                </a>
                {payee ? <span class="muted"> {payee.name ?? payee.id}</span> : null}
              </>
            );
          },
        },
        {
          header: "Amount",
          cell: (row) => {
            const { amount, currency } = summaryOf(row);
            return amount != null && currency ? money(amount, currency) : "—";
          },
        },
        {
          header: "Waiting",
          title: (row) => when(row.created),
          cell: (row) => {
            const end = row.resolved_at ? Date.parse(row.resolved_at) : now;
            return span(end - Date.parse(row.created));
          },
        },
        {
          header: decided,
          title: (row) => (row.status === "open" ? when(row.expires_at) : undefined),
          cell: (row) => {
            if (row.status !== "open") return <Decision value={row.decision} />;
            const left = Date.parse(row.expires_at) - now;
            return left > 0 ? (
              <span class={left < 3_600_000 ? "due-soon" : undefined}>{span(left)} left</span>
            ) : (
              <span class="due-soon">overdue: denied at the next sweep</span>
            );
          },
        },
        {
          header: "Action",
          cell: (row) => (
            <button
              type="button"
              aria-label={`${row.status === "open" ? "Resolve" : "Show"} review of assessment ${shortId(row.assessment_id)}`}
              aria-pressed={row.id === selectedId}
              onClick={() => onSelect(row)}
            >
              {row.status === "open" ? "Resolve" : "Show"}
            </button>
          ),
        },
      ]}
    />
  );
}
