import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, type Failure, failureOf } from "../api";
import { ErrorBanner } from "../components/error-banner";
import {
  ACTIONS,
  bodyOf,
  type DraftIssues,
  emptyIssues,
  newRule,
  type PolicyDraft,
  type RuleDraft,
  sortIssues,
} from "./policy-form";

type Policy = components["schemas"]["Policy"];

function count(issues: DraftIssues): number {
  let n = issues.name.length + issues.limits.length + issues.other.length;
  for (const fields of issues.rules.values()) for (const list of fields.values()) n += list.length;
  return n;
}

/** The messages of one field, with the id its control points to (aria-describedby). */
function FieldErrors({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages || messages.length === 0) return null;
  return (
    <ul id={id} class="field-error">
      {messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

function invalid(messages: string[] | undefined, id: string) {
  return messages && messages.length > 0
    ? { "aria-invalid": true as const, "aria-describedby": id }
    : {};
}

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
  const [error, setError] = useState<Failure>();
  const [busy, setBusy] = useState(false);

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

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setRefused(false);
    const built = bodyOf(draft);
    if (!built.ok) {
      setIssues(built.issues);
      setRefused(true);
      return;
    }
    setBusy(true);
    try {
      const { data } = await api.POST("/v1/policies", { body: built.body });
      setIssues(emptyIssues());
      onCreated(data);
    } catch (caught) {
      const e = caught as { status?: number; details?: unknown };
      if (e.status === 400 && Array.isArray(e.details)) {
        setIssues(sortIssues(e.details));
        setRefused(true);
      } else {
        setIssues(emptyIssues());
        setError(failureOf(caught));
      }
    } finally {
      setBusy(false);
    }
  };

  const problems = count(issues);
  return (
    <form class="policy-editor" onSubmit={submit} noValidate>
      <div class="field">
        <label for="policy-name">Name</label>
        <input
          id="policy-name"
          type="text"
          required
          maxLength={200}
          value={draft.name}
          onInput={(e) => setDraft({ ...draft, name: (e.currentTarget as HTMLInputElement).value })}
          {...invalid(issues.name, "policy-name-errors")}
        />
        <FieldErrors id="policy-name-errors" messages={issues.name} />
      </div>
      <div class="field">
        <label for="policy-limits">
          Limits (JSON: <code>max_amount</code>, <code>currencies</code>, <code>geo</code>,{" "}
          <code>velocity</code>)
        </label>
        <textarea
          id="policy-limits"
          rows={5}
          spellcheck={false}
          value={draft.limits}
          onInput={(e) =>
            setDraft({ ...draft, limits: (e.currentTarget as HTMLTextAreaElement).value })
          }
          {...invalid(issues.limits, "policy-limits-errors")}
        />
        <FieldErrors id="policy-limits-errors" messages={issues.limits} />
      </div>
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
                <div class="field">
                  <label for={`${base}-id`}>Rule id</label>
                  <input
                    id={`${base}-id`}
                    type="text"
                    value={rule.id}
                    onInput={(e) =>
                      setRule(index, { id: (e.currentTarget as HTMLInputElement).value })
                    }
                    {...invalid(fields?.get("id"), `${base}-id-errors`)}
                  />
                  <FieldErrors id={`${base}-id-errors`} messages={fields?.get("id")} />
                </div>
                <div class="field">
                  <label for={`${base}-action`}>Action</label>
                  <select
                    id={`${base}-action`}
                    value={rule.action}
                    onChange={(e) =>
                      setRule(index, {
                        action: (e.currentTarget as HTMLSelectElement).value as RuleDraft["action"],
                      })
                    }
                    {...invalid(fields?.get("action"), `${base}-action-errors`)}
                  >
                    {ACTIONS.map((action) => (
                      <option key={action} value={action}>
                        {action}
                      </option>
                    ))}
                  </select>
                  <FieldErrors id={`${base}-action-errors`} messages={fields?.get("action")} />
                </div>
                <div class="field">
                  <label for={`${base}-description`}>Description (optional)</label>
                  <input
                    id={`${base}-description`}
                    type="text"
                    value={rule.description}
                    onInput={(e) =>
                      setRule(index, { description: (e.currentTarget as HTMLInputElement).value })
                    }
                    {...invalid(fields?.get("description"), `${base}-description-errors`)}
                  />
                  <FieldErrors
                    id={`${base}-description-errors`}
                    messages={fields?.get("description")}
                  />
                </div>
                <div class="field">
                  <label for={`${base}-when`}>Condition (JSON)</label>
                  <textarea
                    id={`${base}-when`}
                    rows={4}
                    spellcheck={false}
                    value={rule.when}
                    onInput={(e) =>
                      setRule(index, { when: (e.currentTarget as HTMLTextAreaElement).value })
                    }
                    {...invalid(fields?.get("when"), `${base}-when-errors`)}
                  />
                  <FieldErrors id={`${base}-when-errors`} messages={fields?.get("when")} />
                </div>
                <FieldErrors id={`${base}-errors`} messages={ruleLevel} />
                <div class="rule-actions">
                  <button
                    type="button"
                    disabled={index === 0}
                    aria-label={`Move rule ${index + 1} up`}
                    onClick={() => move(index, -1)}
                  >
                    Move up
                  </button>
                  <button
                    type="button"
                    disabled={index === draft.rules.length - 1}
                    aria-label={`Move rule ${index + 1} down`}
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
