import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction, useApiCall } from "../api";
import { Confirm } from "../components/confirm";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { focusOnMount } from "../components/focus-on-mount";
import { money, when } from "../format";

type Billing = components["schemas"]["Billing"];

const CAP_STATUS: Record<Billing["spending_cap"]["status"], string> = {
  none: "No cap",
  ok: "Under the cap",
  review_required: "At or past the review threshold",
  reached: "Reached: further billable calls are refused",
};

/** `#/billing`: the plan, this period's usage and charge, and the spending cap. */
export function BillingPage(_: { params: string[] }) {
  const billing = useApiCall(async () => (await api.GET("/v1/billing")).data, []);
  const b = billing.data;
  return (
    <>
      <h1>Billing</h1>
      <ErrorBanner failure={billing.failure} />
      {b && (
        <>
          <section aria-labelledby="plan-heading" class="panel">
            <h2 id="plan-heading">Plan: {b.plan.name}</h2>
            <dl class="facts">
              <dt>Monthly fee</dt>
              <dd>{money(b.plan.amount, b.plan.currency)}</dd>
              <dt>Included assessments</dt>
              <dd>{b.plan.included_assessments.toLocaleString("en")}</dd>
              <dt>Each further assessment</dt>
              <dd>{money(b.plan.unit_amount, b.plan.currency)}</dd>
            </dl>
          </section>
          <section aria-labelledby="usage-heading" class="panel">
            <h2 id="usage-heading">This period</h2>
            <p>
              {when(b.current_period.start)} to {when(b.current_period.end)}. Only live assessments
              are billed.
            </p>
            <dl class="facts">
              <dt>Billable assessments</dt>
              <dd data-testid="usage-assessments">{b.usage.assessments.toLocaleString("en")}</dd>
              <dt>Included remaining</dt>
              <dd>{b.usage.included_remaining.toLocaleString("en")}</dd>
              <dt>Billable overage</dt>
              <dd>{b.usage.billable_overage.toLocaleString("en")}</dd>
              <dt>Usage charge so far</dt>
              <dd>{money(b.projected_charge.usage_amount, b.projected_charge.currency)}</dd>
              <dt>Projected total</dt>
              <dd>{money(b.projected_charge.total, b.projected_charge.currency)}</dd>
            </dl>
          </section>
          <SpendingCap billing={b} onChanged={billing.reload} />
        </>
      )}
    </>
  );
}

function SpendingCap({ billing, onChanged }: { billing: Billing; onChanged: () => void }) {
  const cap = billing.spending_cap;
  const [amount, setAmount] = useState(cap.amount === null ? "" : (cap.amount / 100).toFixed(2));
  const action = useAction();
  const { busy, error, setError } = action;
  const [notice, setNotice] = useState("");
  const [needsConfirmation, setNeedsConfirmation] = useState(false);
  const [lifting, setLifting] = useState(false);

  const minor = (): number | null => {
    const value = Number(amount);
    return amount.trim() === "" || !Number.isFinite(value) || value < 0
      ? null
      : Math.round(value * 100);
  };

  const run = (call: () => Promise<string>) => {
    setNotice("");
    return action.run(async () => {
      try {
        setNotice(await call());
      } catch (caught) {
        // A raise waits for the owner's confirmation: asked below, not an error.
        if ((caught as { error?: string }).error !== "spend_confirmation_required") throw caught;
        setNeedsConfirmation(true);
        return;
      }
      setNeedsConfirmation(false);
      onChanged();
    });
  };

  const set = (event: Event) => {
    event.preventDefault();
    const value = minor();
    if (value === null) {
      setError({
        error: "invalid_request",
        details: [{ path: "amount", message: "enter an amount of 0 or more" }],
      });
      return;
    }
    void run(async () => {
      await api.POST("/v1/billing/spending_cap", { body: { amount: value } });
      return `Spending cap set to ${money(value, cap.currency)}.`;
    });
  };

  const confirm = (value: number | null) =>
    run(async () => {
      await api.POST("/v1/billing/spend_confirmations", { body: { spending_cap: value } });
      return value === null
        ? "Spending cap lifted."
        : `Spending cap raised to ${money(value, cap.currency)}.`;
    });

  return (
    <section aria-labelledby="cap-heading" class="panel">
      <h2 id="cap-heading">Spending cap</h2>
      <p>
        Bounds this period's usage charge (not the plan fee).{" "}
        <strong data-testid="cap-status">{CAP_STATUS[cap.status]}</strong>
        {cap.amount !== null &&
          `: ${money(cap.amount, cap.currency)}, review at ${cap.review_threshold_percent}%.`}
      </p>
      <form class="inline-form" onSubmit={set}>
        <Field label={`Cap (${cap.currency.toUpperCase()})`} id="cap-amount">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              step="0.01"
              inputMode="decimal"
              value={amount}
              aria-describedby="cap-help"
              onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)}
            />
          )}
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          Set cap
        </button>
      </form>
      <p id="cap-help" class="help">
        Setting or lowering a cap takes effect at once. Raising or lifting one takes an owner's
        confirmation.
      </p>
      {needsConfirmation && (
        <div role="alert" class="notice">
          <p>
            Raising the cap takes an owner's confirmation. As the owner, confirm spending up to{" "}
            {money(minor() ?? 0, cap.currency)}?
          </p>
          <button ref={focusOnMount} type="button" disabled={busy} onClick={() => confirm(minor())}>
            Confirm as owner
          </button>{" "}
          <button type="button" onClick={() => setNeedsConfirmation(false)}>
            Cancel
          </button>
        </div>
      )}
      {cap.amount !== null && !needsConfirmation && !lifting && (
        <p>
          <button type="button" disabled={busy} onClick={() => setLifting(true)}>
            Lift the cap…
          </button>
        </p>
      )}
      {lifting && (
        <Confirm
          legend="Lift the spending cap"
          showLegend
          action="Confirm as owner: lift the cap"
          busy={busy}
          onConfirm={() => {
            setLifting(false);
            void confirm(null);
          }}
          onCancel={() => setLifting(false)}
        >
          Usage is then charged without a bound. This takes an owner's confirmation.
        </Confirm>
      )}
      {notice && <p role="status">{notice}</p>}
      <ErrorBanner failure={error} />
    </section>
  );
}
