import { Field } from "./field";

/** A `datetime-local` value (the reader's zone) as the ISO instant the API takes, or undefined. */
export function isoOf(local: string): string | undefined {
  if (local === "") return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The "From" and "To" of a time window (`datetime-local`; empty leaves that end open), with the
 * ids `<id>-from` and `<id>-to`.
 */
export function DateRange({
  id,
  from,
  to,
  onFrom,
  onTo,
}: {
  id: string;
  from: string;
  to: string;
  onFrom: (value: string) => void;
  onTo: (value: string) => void;
}) {
  return (
    <>
      <Field label="From" id={`${id}-from`}>
        {(fieldId) => (
          <input
            id={fieldId}
            type="datetime-local"
            value={from}
            onInput={(e) => onFrom((e.currentTarget as HTMLInputElement).value)}
          />
        )}
      </Field>
      <Field label="To" id={`${id}-to`}>
        {(fieldId) => (
          <input
            id={fieldId}
            type="datetime-local"
            value={to}
            onInput={(e) => onTo((e.currentTarget as HTMLInputElement).value)}
          />
        )}
      </Field>
    </>
  );
}
