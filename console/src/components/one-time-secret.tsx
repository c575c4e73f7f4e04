import { CopyButton } from "./copy-button";

/**
 * A secret shown this once (an API key's plaintext, a webhook signing secret): the value, a copy
 * button, and the warning.
 */
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
