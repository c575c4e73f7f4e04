import "./pages-b.css";
import { CopyButton } from "../components/copy-button";

// Small pieces the pages B share: the focus of a confirmation, and a secret shown once.

/**
 * A ref that focuses its element when it appears: an inline confirmation takes the focus from
 * the button that opened it (which goes away), so the keyboard lands on "Confirm".
 */
export function focusOnMount(element: HTMLElement | null): void {
  element?.focus();
}

/** A secret shown this once: the value, a copy button, and the warning. */
export function OneTimeSecret({ title, value }: { title: string; value: string }) {
  return (
    <section class="one-time-secret" aria-label={title}>
      <h2>{title}</h2>
      <p>
        <strong>Copy it now: you won't see it again.</strong> It is not stored in a readable form
        and will not be shown after you leave or reload this page.
      </p>
      <p>
        <code data-testid="secret-value" class="secret">
          {value}
        </code>{" "}
        <CopyButton text={value} />
      </p>
    </section>
  );
}
