import { useState } from "preact/hooks";
import type { Coded } from "../iso";
import { FieldErrors } from "./field";

/**
 * A multi-select over a long list of codes (currencies, countries): a text input with the
 * list's suggestions (`<datalist>`: type "ger" or "DE", pick "DE — Germany"), an Add button
 * (Enter adds too), and the chosen codes as a list, each with its own Remove button. Every
 * control is a native one with a label, so the keyboard and screen readers reach it as they
 * would any form; an unknown code is refused inline, tied to the input.
 */
export function CodePicker({
  id,
  legend,
  noun,
  hint,
  options,
  selected,
  errors,
  onChange,
}: {
  id: string;
  legend: string;
  /** What one code is, for the labels: "currency", "country". */
  noun: string;
  hint: string;
  options: readonly Coded[];
  selected: string[];
  errors?: string[] | undefined;
  onChange: (selected: string[]) => void;
}) {
  const [text, setText] = useState("");
  const [refused, setRefused] = useState<string>();
  const inputId = `${id}-input`;
  const listId = `${id}-options`;
  const problems = [...(refused ? [refused] : []), ...(errors ?? [])];
  const describedBy = [`${id}-hint`, problems.length > 0 ? `${id}-errors` : ""]
    .filter(Boolean)
    .join(" ");

  const add = () => {
    const typed = text.trim();
    if (typed === "") return;
    const code = typed.split(/\s/)[0]?.toUpperCase() ?? "";
    const found =
      options.find((o) => o.code === code) ??
      options.find((o) => o.name.toLowerCase() === typed.toLowerCase());
    if (!found) {
      setRefused(`${typed} is not a ${noun} code of the list`);
      return;
    }
    setRefused(undefined);
    setText("");
    if (!selected.includes(found.code)) onChange([...selected, found.code]);
  };

  return (
    <fieldset class="field code-picker">
      <legend>{legend}</legend>
      <label for={inputId}>Add a {noun}</label>
      <div class="code-picker-add">
        <input
          id={inputId}
          type="text"
          list={listId}
          autocomplete="off"
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              add();
            }
          }}
          aria-invalid={problems.length > 0 ? true : undefined}
          aria-describedby={describedBy}
        />
        <datalist id={listId}>
          {options.map((o) => (
            <option key={o.code} value={`${o.code} — ${o.name}`} />
          ))}
        </datalist>
        <button type="button" onClick={add}>
          Add
        </button>
      </div>
      <small id={`${id}-hint`} class="muted">
        {hint}
      </small>
      <FieldErrors id={`${id}-errors`} messages={problems} />
      {selected.length > 0 && (
        <ul class="chips" aria-label={`${legend}: chosen`}>
          {selected.map((code) => {
            const name = options.find((o) => o.code === code)?.name ?? code;
            return (
              <li key={code}>
                <span>
                  <code>{code}</code> {name !== code && name}
                </span>{" "}
                <button type="button" onClick={() => onChange(selected.filter((c) => c !== code))}>
                  <span aria-hidden="true">×</span>
                  <span class="visually-hidden">
                    Remove {code} ({name})
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </fieldset>
  );
}
