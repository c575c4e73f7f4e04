import type { ComponentChildren } from "preact";
import { focusOnMount } from "./focus-on-mount";

/**
 * An inline confirmation of something that cannot be taken back: what it does, then the
 * confirm button (which takes the focus from the button that opened this) and Cancel. The
 * legend names it for a screen reader; `showLegend` shows it to everyone.
 */
export function Confirm({
  legend,
  showLegend = false,
  children,
  action,
  danger = false,
  busy,
  onConfirm,
  onCancel,
}: {
  legend: string;
  showLegend?: boolean;
  children: ComponentChildren;
  action: string;
  danger?: boolean;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <fieldset class="confirm">
      <legend class={showLegend ? undefined : "visually-hidden"}>{legend}</legend>
      <p>{children}</p>
      <button
        ref={focusOnMount}
        type="button"
        class={danger ? "danger" : undefined}
        disabled={busy}
        onClick={onConfirm}
      >
        {action}
      </button>{" "}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </fieldset>
  );
}
