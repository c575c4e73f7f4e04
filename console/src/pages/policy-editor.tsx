import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, useAction } from "../api";
import { ErrorBanner } from "../components/error-banner";
import { Field, FieldErrors, Options } from "../components/field";
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

  const problems = count(issues);
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
      <Field
        label={
          <>
            Limits (JSON: <code>max_amount</code>, <code>currencies</code>, <code>geo</code>,{" "}
            <code>velocity</code>)
          </>
        }
        id="policy-limits"
        errors={issues.limits}
      >
        {(id, describedBy, invalid) => (
          <textarea
            id={id}
            rows={5}
            spellcheck={false}
            value={draft.limits}
            onInput={(e) =>
              setDraft({ ...draft, limits: (e.currentTarget as HTMLTextAreaElement).value })
            }
            aria-invalid={invalid}
            aria-describedby={describedBy}
          />
        )}
      </Field>
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
                <Field label="Condition (JSON)" id={`${base}-when`} errors={fields?.get("when")}>
                  {(id, describedBy, invalid) => (
                    <textarea
                      id={id}
                      rows={4}
                      spellcheck={false}
                      value={rule.when}
                      onInput={(e) =>
                        setRule(index, { when: (e.currentTarget as HTMLTextAreaElement).value })
                      }
                      aria-invalid={invalid}
                      aria-describedby={describedBy}
                    />
                  )}
                </Field>
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
