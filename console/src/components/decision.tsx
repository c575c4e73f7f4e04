/** A decision in its colour, spelled out (colour is never the only cue). */
export function Decision({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="muted">—</span>;
  return <span class={`decision-${value}`}>{value}</span>;
}
