/** How the console writes numbers, money and times: one place, so every page agrees. */

/** Minor units (cents) as money in their currency, e.g. 12345 usd → "$123.45". */
export function money(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  const digits =
    new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  return new Intl.NumberFormat("en", { style: "currency", currency: code }).format(
    minor / 10 ** digits,
  );
}

export function percent(ratio: number | null): string {
  return ratio === null ? "—" : `${(ratio * 100).toFixed(1)} %`;
}

export function milliseconds(value: number | null): string {
  return value === null ? "—" : `${value} ms`;
}

/** An ISO instant in the reader's locale and zone, with the zone named. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** A long id shortened for a table cell; the full id stays in the title and the link. */
export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}
