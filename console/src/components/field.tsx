import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

/**
 * A form control with a real `<label for>`: `children` receives the id to put on the control
 * (`id` when given, so that a page keeps a stable one), what describes it and whether it is
 * invalid. A hint is tied to the control with `aria-describedby` (the id plus `-hint`); so are
 * `errors`, listed under it (the id plus `-errors`), which also mark it `aria-invalid`.
 */
export function Field({
  label,
  id: fixedId,
  hint,
  errors,
  children,
}: {
  label: ComponentChildren;
  id?: string;
  hint?: string;
  errors?: string[];
  children: (
    id: string,
    describedBy: string | undefined,
    invalid: true | undefined,
  ) => ComponentChildren;
}) {
  const generated = useId();
  const id = fixedId ?? generated;
  const hintId = hint ? `${id}-hint` : undefined;
  const invalid = errors && errors.length > 0 ? true : undefined;
  const errorsId = invalid ? `${id}-errors` : undefined;
  const describedBy = [hintId, errorsId].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children(id, describedBy, invalid)}
      {hint ? (
        <small id={hintId} class="muted">
          {hint}
        </small>
      ) : null}
      {errorsId ? <FieldErrors id={errorsId} messages={errors} /> : null}
    </div>
  );
}

/** Error messages, with the id a control (or a group of them) points to (aria-describedby). */
export function FieldErrors({ id, messages }: { id: string; messages: string[] | undefined }) {
  if (!messages || messages.length === 0) return null;
  return (
    <ul id={id} class="field-error">
      {messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

/** The options of a select whose values are shown as they are (decisions, statuses, tiers…). */
export function Options({ values }: { values: readonly string[] }) {
  return (
    <>
      {values.map((value) => (
        <option key={value} value={value}>
          {value}
        </option>
      ))}
    </>
  );
}

/**
 * A select in its labelled Field, as the lists' filters use it: `children` are its options,
 * `onValue` receives the chosen option's value (typed as the options' values are).
 */
export function SelectField<T extends string>({
  label,
  id,
  value,
  onValue,
  children,
}: {
  label: ComponentChildren;
  id?: string;
  value: T;
  onValue: (value: T) => void;
  children: ComponentChildren;
}) {
  return (
    <Field label={label} id={id}>
      {(fieldId) => (
        <select
          id={fieldId}
          value={value}
          onChange={(event) => onValue((event.currentTarget as HTMLSelectElement).value as T)}
        >
          {children}
        </select>
      )}
    </Field>
  );
}
