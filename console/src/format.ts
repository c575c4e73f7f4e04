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

/** The digits after the decimal point of a currency (ISO 4217 exponent): JPY 0, USD 2, KWD 3. */
export function exponentOf(currency: string): number {
  try {
    return (
      new Intl.NumberFormat("en", {
        style: "currency",
        currency: currency.toUpperCase(),
      }).resolvedOptions().maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

/**
 * An amount a person typed in major units ("12.5") as minor units of `currency` (1250 for
 * USD, 13 for JPY's "12.5" would be refused): null when it is not a non-negative number with
 * at most the currency's own decimals.
 */
export function minorOf(typed: string, currency: string): number | null {
  const digits = exponentOf(currency);
  const match = /^(\d{1,15})(?:\.(\d*))?$/.exec(typed.trim());
  if (!match) return null;
  const [, whole = "", fraction = ""] = match;
  if (fraction.length > digits) return null;
  const minor = Number(whole + fraction.padEnd(digits, "0"));
  return Number.isSafeInteger(minor) ? minor : null;
}
