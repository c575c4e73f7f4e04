import type { components } from "@agent-risk/client";
import { useEffect, useState } from "preact/hooks";
import { api, useAction } from "../api";
import { CodePicker } from "../components/code-picker";
import { ErrorBanner } from "../components/error-banner";
import { Field, FieldErrors, Options } from "../components/field";
import { minorDigits } from "../format";
import { countryList, currencyList } from "../iso";
import {
  ACTIONS,
  bodyOf,
  type DraftIssues,
  emptyIssues,
  GRAMMAR_LINKS,
  issueCount,
  newRule,
  type PolicyDraft,
  parseCondition,
  type RuleDraft,
  sortIssues,
  WINDOW_UNITS,
  type WindowUnit,
} from "./policy-form";

type Policy = components["schemas"]["Policy"];

/**
 * The rule editor. Policies are immutable (docs/shadow-policies.md, Editing), so saving always
 * creates a new draft; the server's validation errors are shown at the rule and the field
 * their path names, marked `aria-invalid`.
 */
export function PolicyEditor({
  initial,
  submitLabel,
  onCreated,
}: {
  initial: PolicyDraft;
  submitLabel: string;
  onCreated: (policy: Policy) => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [issues, setIssues] = useState<DraftIssues>(emptyIssues);
  const [refused, setRefused] = useState(false);
  const { busy, error, setError, run } = useAction();

  const setRule = (index: number, change: Partial<RuleDraft>) =>
    setDraft({
      ...draft,
      rules: draft.rules.map((rule, i) => (i === index ? { ...rule, ...change } : rule)),
    });
  const move = (index: number, by: number) => {
    const rules = [...draft.rules];
    const [rule] = rules.splice(index, 1);
    if (rule) rules.splice(index + by, 0, rule);
    setDraft({ ...draft, rules });
    setIssues(emptyIssues());
  };

  const submit = (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setRefused(false);
    const built = bodyOf(draft);
    if (!built.ok) {
      setIssues(built.issues);
      setRefused(true);
      return;
    }
    void run(async () => {
      try {
        const { data } = await api.POST("/v1/policies", { body: built.body });
        setIssues(emptyIssues());
        onCreated(data);
      } catch (caught) {
        // The server's validation errors go to their fields; anything else to the banner.
        const e = caught as { status?: number; details?: unknown };
        if (e.status === 400 && Array.isArray(e.details)) {
          setIssues(sortIssues(e.details));
          setRefused(true);
          return;
        }
        setIssues(emptyIssues());
        throw caught;
      }
    });
  };

  const problems = issueCount(issues);
  return (
    <form class="policy-editor" onSubmit={submit} noValidate>
      <Field label="Name" id="policy-name" errors={issues.name}>
        {(id, describedBy, invalid) => (
          <input
            id={id}
            type="text"
            required
            maxLength={200}
            value={draft.name}
            onInput={(e) =>
              setDraft({ ...draft, name: (e.currentTarget as HTMLInputElement).value })
            }
            aria-invalid={invalid}
            aria-describedby={describedBy}
          />
        )}
      </Field>
      <Limits draft={draft} issues={issues} onChange={setDraft} />
      <h3>Rules, in order (the first that matches decides)</h3>
      {draft.rules.length === 0 && <p>No rules: the limits and the model decide.</p>}
      <ol class="rule-list">
        {draft.rules.map((rule, index) => {
          const fields = issues.rules.get(index);
          const base = `rule-${rule.key}`;
          const ruleLevel = fields?.get("");
          return (
            <li key={rule.key}>
              <fieldset
                class={fields ? "rule rule-invalid" : "rule"}
                data-testid={`rule-${index + 1}`}
              >
                <legend>Rule {index + 1}</legend>
                <Field label="Rule id" id={`${base}-id`} errors={fields?.get("id")}>
                  {(id, describedBy, invalid) => (
                    <input
                      id={id}
                      type="text"
                      value={rule.id}
                      onInput={(e) =>
                        setRule(index, { id: (e.currentTarget as HTMLInputElement).value })
                      }
                      aria-invalid={invalid}
                      aria-describedby={describedBy}
                    />
                  )}
                </Field>
                <Field label="Action" id={`${base}-action`} errors={fields?.get("action")}>
                  {(id, describedBy, invalid) => (
                    <select
                      id={id}
                      value={rule.action}
                      onChange={(e) =>
                        setRule(index, {
                          action: (e.currentTarget as HTMLSelectElement)
                            .value as RuleDraft["action"],
                        })
                      }
                      aria-invalid={invalid}
                      aria-describedby={describedBy}
                    >
                      <Options values={ACTIONS} />
                    </select>
                  )}
                </Field>
                <Field
                  label="Description (optional)"
                  id={`${base}-description`}
                  errors={fields?.get("description")}
                >
                  {(id, describedBy, invalid) => (
                    <input
                      id={id}
                      type="text"
                      value={rule.description}
                      onInput={(e) =>
                        setRule(index, {
                          description: (e.currentTarget as HTMLInputElement).value,
                        })
                      }
                      aria-invalid={invalid}
                      aria-describedby={describedBy}
                    />
                  )}
                </Field>
                <ConditionField
                  id={`${base}-when`}
                  text={rule.when}
                  serverErrors={fields?.get("when")}
                  onInput={(when) => setRule(index, { when })}
                />
                <FieldErrors id={`${base}-errors`} messages={ruleLevel} />
                <div class="rule-actions">
                  <button
                    type="button"
                    disabled={index === 0}
                    aria-label={`Move up rule ${index + 1}`}
                    onClick={() => move(index, -1)}
                  >
                    Move up
                  </button>
                  <button
                    type="button"
                    disabled={index === draft.rules.length - 1}
                    aria-label={`Move down rule ${index + 1}`}
                    onClick={() => move(index, 1)}
                  >
                    Move down
                  </button>
                  <button
                    type="button"
                    aria-label={`Remove rule ${index + 1}`}
                    onClick={() => {
                      setDraft({ ...draft, rules: draft.rules.filter((_, i) => i !== index) });
                      setIssues(emptyIssues());
                    }}
                  >
                    Remove
                  </button>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <p>
        <button
          type="button"
          onClick={() =>
            setDraft({ ...draft, rules: [...draft.rules, newRule(draft.rules.length)] })
          }
        >
          Add a rule
        </button>
      </p>
      {refused && problems > 0 && (
        <div role="alert" class="error-banner">
          <p>
            The policy was not saved: {problems} {problems === 1 ? "problem" : "problems"}, shown at{" "}
            {problems === 1 ? "its field" : "their fields"}.
          </p>
          {issues.other.length > 0 && (
            <ul>
              {issues.other.map((message) => (
                <li key={message}>{message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      <ErrorBanner failure={error} />
      <button type="submit" class="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

/**
 * The create shape's limits as a person states them: the largest amount in major units of a
 * currency (sent as minor units with that currency's exponent), the allowed currencies and
 * countries picked from their ISO lists, and a velocity as a count per duration.
 */
function Limits({
  draft,
  issues,
  onChange,
}: {
  draft: PolicyDraft;
  issues: DraftIssues;
  onChange: (draft: PolicyDraft) => void;
}) {
  const currencies = currencyList();
  const digits = minorDigits(draft.amountCurrency);
  const set = (change: Partial<PolicyDraft>) => onChange({ ...draft, ...change });
  const amountErrors = issues.limits.get("max_amount");
  const velocityErrors = issues.limits.get("velocity");
  return (
    <fieldset class="limits">
      <legend>Limits (each optional: an empty one allows everything)</legend>
      <div class="field">
        <label for="policy-max-amount">Largest amount</label>
        <div class="amount-input">
          <input
            id="policy-max-amount"
            type="text"
            inputMode="decimal"
            placeholder={digits === 0 ? "2,150" : "2,150.00"}
            value={draft.maxAmount}
            onInput={(e) => set({ maxAmount: (e.currentTarget as HTMLInputElement).value })}
            aria-invalid={amountErrors ? true : undefined}
            aria-describedby={`policy-max-amount-hint${amountErrors ? " policy-max-amount-errors" : ""}`}
          />
          <label class="visually-hidden" for="policy-amount-currency">
            Currency of the largest amount
          </label>
          <select
            id="policy-amount-currency"
            value={draft.amountCurrency}
            onChange={(e) => set({ amountCurrency: (e.currentTarget as HTMLSelectElement).value })}
          >
            {currencies.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code}
              </option>
            ))}
          </select>
        </div>
        <small id="policy-max-amount-hint" class="muted">
          In {draft.amountCurrency} ({digits === 0 ? "no minor unit" : `${digits} decimals`}). Sent
          as minor units and compared with each action's amount in its own currency: pair it with
          the allowed currencies.
        </small>
        <FieldErrors id="policy-max-amount-errors" messages={amountErrors} />
      </div>
      <CodePicker
        id="policy-currencies"
        legend="Allowed currencies"
        noun="currency"
        hint="ISO 4217. None chosen: any currency."
        options={currencies}
        selected={draft.currencies}
        errors={issues.limits.get("currencies")}
        onChange={(list) => set({ currencies: list })}
      />
      <CodePicker
        id="policy-countries"
        legend="Allowed countries"
        noun="country"
        hint="ISO 3166-1, where the request comes from. None chosen: any country."
        options={countryList()}
        selected={draft.countries}
        errors={issues.limits.get("geo")}
        onChange={(list) => set({ countries: list })}
      />
      <fieldset class="field velocity">
        <legend>Velocity: assessments per agent</legend>
        <div class="velocity-inputs">
          <label for="policy-velocity-max">At most</label>
          <input
            id="policy-velocity-max"
            type="number"
            min={1}
            step={1}
            value={draft.velocityMax}
            onInput={(e) => set({ velocityMax: (e.currentTarget as HTMLInputElement).value })}
            aria-invalid={velocityErrors ? true : undefined}
            aria-describedby={`policy-velocity-hint${velocityErrors ? " policy-velocity-errors" : ""}`}
          />
          <label for="policy-velocity-window">per</label>
          <input
            id="policy-velocity-window"
            type="number"
            min={1}
            step={1}
            value={draft.velocityWindow}
            onInput={(e) => set({ velocityWindow: (e.currentTarget as HTMLInputElement).value })}
          />
          <label class="visually-hidden" for="policy-velocity-unit">
            Window unit
          </label>
          <select
            id="policy-velocity-unit"
            value={draft.velocityUnit}
            onChange={(e) =>
              set({ velocityUnit: (e.currentTarget as HTMLSelectElement).value as WindowUnit })
            }
          >
            {WINDOW_UNITS.map((u) => (
              <option key={u.unit} value={u.unit}>
                {u.label}
              </option>
            ))}
          </select>
        </div>
        <small id="policy-velocity-hint" class="muted">
          Empty: no velocity limit. The window is 1 second to 90 days.
        </small>
        <FieldErrors id="policy-velocity-errors" messages={velocityErrors} />
      </fieldset>
    </fieldset>
  );
}

/**
 * A rule's condition as JSON, checked as it is typed (its shape: see parseCondition) and by the
 * server on save; either's faults show under it with a link to the rule language in the
 * served API reference.
 */
function ConditionField({
  id,
  text,
  serverErrors,
  onInput,
}: {
  id: string;
  text: string;
  serverErrors: string[] | undefined;
  onInput: (text: string) => void;
}) {
  const [touched, setTouched] = useState(false);
  // A save's faults (the server's, or this check's at submit) replace what typing found.
  useEffect(() => setTouched(false), [serverErrors]);
  const parsed = parseCondition(text);
  const local = touched && !parsed.ok ? parsed.faults : [];
  // The server's faults are about the text it was sent; once it changes, the live check speaks.
  const errors = touched ? local : (serverErrors ?? []);
  const invalid = errors.length > 0;
  return (
    <div class="field">
      <label for={id}>Condition (JSON)</label>
      <textarea
        id={id}
        rows={4}
        spellcheck={false}
        value={text}
        onInput={(e) => {
          setTouched(true);
          onInput((e.currentTarget as HTMLTextAreaElement).value);
        }}
        aria-invalid={invalid ? true : undefined}
        aria-describedby={`${id}-hint${invalid ? ` ${id}-errors` : ""}`}
      />
      <small id={`${id}-hint`} class="muted">
        <code>{"{all: [...]}"}</code>, <code>{"{any: [...]}"}</code>, <code>{"{not: {...}}"}</code>{" "}
        or <code>{'{"attr", "op", "value"}'}</code>: the{" "}
        <a href={GRAMMAR_LINKS.attributes} target="_blank" rel="noopener">
          attributes
        </a>{" "}
        and{" "}
        <a href={GRAMMAR_LINKS.operators} target="_blank" rel="noopener">
          operators
        </a>{" "}
        in the API reference.
      </small>
      {invalid && (
        <div id={`${id}-errors`} class="field-error">
          <ul>
            {errors.map((message) => (
              <li key={message}>{message}</li>
            ))}
          </ul>
          <p>
            See{" "}
            <a href={GRAMMAR_LINKS.section} target="_blank" rel="noopener">
              the rule language in the API reference
            </a>
            .
          </p>
        </div>
      )}
    </div>
  );
}
