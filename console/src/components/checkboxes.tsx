/**
 * A named group of checkboxes, one a code name (API-key scopes, webhook event types): `checked`
 * holds the checked ones, in the order they were checked.
 */
export function Checkboxes<T extends string>({
  legend,
  options,
  checked,
  onChange,
}: {
  legend: string;
  options: readonly T[];
  checked: T[];
  onChange: (checked: T[]) => void;
}) {
  return (
    <fieldset class="field scopes">
      <legend>{legend}</legend>
      {options.map((option) => (
        <label key={option} class="choice">
          <input
            type="checkbox"
            value={option}
            checked={checked.includes(option)}
            onChange={(e) =>
              onChange(
                (e.currentTarget as HTMLInputElement).checked
                  ? [...checked, option]
                  : checked.filter((o) => o !== option),
              )
            }
          />{" "}
          <code>{option}</code>
        </label>
      ))}
    </fieldset>
  );
}
