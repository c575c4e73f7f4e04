import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

/**
 * A form control with a real `<label for>`: `children` receives the id to put on the control.
 * A hint is tied to the control with `aria-describedby` (the id plus `-hint`).
 */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children(id, hintId)}
      {hint ? (
        <small id={hintId} class="muted">
          {hint}
        </small>
      ) : null}
    </div>
  );
}
