import type { components } from "@agent-risk/client";
import type { ComponentChildren } from "preact";
import { DECISIONS } from "../../../src/schemas/vocabulary";
import { api, useApiCall } from "../api";
import { Confirm } from "../components/confirm";
import { MatrixTable } from "../components/decision-matrix";
import { ErrorBanner } from "../components/error-banner";

type Backtest = components["schemas"]["PolicyBacktest"];

/** The window activation is previewed over: the assessments of the last 30 days. */
const PREVIEW_DAYS = 30;

/**
 * Activation, after its preview: the backtest of this policy over the last 30 days of the
 * current mode (what would have changed, as counts and the decision matrix), then the
 * confirmation. The Confirm button comes only once the backtest has answered, so nobody
 * activates a policy without seeing what it would do; a backtest that fails says so and
 * still lets the person decide.
 */
export function ActivationPreview({
  id,
  name,
  busy,
  action = "Confirm activation",
  children,
  onConfirm,
  onCancel,
}: {
  id: string;
  name: string;
  busy: boolean;
  /** The confirm button's text. */
  action?: string;
  /** What confirming does, in the confirmation. */
  children?: ComponentChildren;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const preview = useApiCall(async () => {
    const from = new Date(Date.now() - PREVIEW_DAYS * 86_400_000).toISOString();
    return (
      await api.POST("/v1/policies/{id}/backtest", {
        params: { path: { id } },
        body: { from, limit: 10_000, samples: 0 },
      })
    ).data;
  }, [id]);
  const result = preview.data;
  return (
    <section aria-labelledby="activation-heading" class="panel activation-preview">
      <h2 id="activation-heading">Activate {name}?</h2>
      {!result && !preview.failure && (
        <p role="status">Backtesting the last {PREVIEW_DAYS} days before you confirm…</p>
      )}
      {preview.failure && (
        <>
          <p>The backtest could not run, so what would change is not known:</p>
          <ErrorBanner failure={preview.failure} />
        </>
      )}
      {result && (
        <div data-testid="activation-backtest">
          <p role="status">
            Over the last {PREVIEW_DAYS} days, {result.replayed} assessments replayed:{" "}
            <strong>{result.changed} would change</strong>
            {result.changed > 0 && ` (${changes(result)})`}.
            {result.skipped > 0 && ` ${result.skipped} without recorded inputs were skipped.`}
            {result.truncated && " The window holds more than was replayed."}
          </p>
          <MatrixTable matrix={result.matrix} rowLabel="Recorded" columnLabel="This policy" />
        </div>
      )}
      {(result || preview.failure) && (
        <Confirm
          legend="Confirm the activation"
          action={action}
          busy={busy}
          onConfirm={onConfirm}
          onCancel={onCancel}
        >
          {children ??
            "From now on this policy decides every assessment, under a new version; the active " +
              "one returns to draft (roll back from Policies)."}
        </Confirm>
      )}
    </section>
  );
}

/** The changed cells of a backtest's matrix in words: "3 approve → review, 1 review → deny". */
function changes(result: Backtest): string {
  return DECISIONS.flatMap((from) =>
    DECISIONS.filter((to) => to !== from && result.matrix[from][to] > 0).map(
      (to) => `${result.matrix[from][to]} ${from} → ${to}`,
    ),
  ).join(", ");
}
