/** How the console writes numbers, money and times: one place, so every page agrees. */

/**
 * The ISO 4217 exponent of a currency: the digits of its minor unit (USD 2, JPY 0, KWD 3), as
 * `Intl` knows them. Amounts travel as integer minor units; this is what turns them to and
 * from what a person reads and types.
 */
export function minorDigits(currency: string): number {
  return (
    new Intl.NumberFormat("en", {
      style: "currency",
      currency: currency.toUpperCase(),
    }).resolvedOptions().maximumFractionDigits ?? 2
  );
}

/** Minor units (cents) as money in their currency, e.g. 12345 usd → "$123.45". */
export function money(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  return new Intl.NumberFormat("en", { style: "currency", currency: code }).format(
    minor / 10 ** minorDigits(code),
  );
}

/**
 * An amount typed in major units ("2,150.00", "2150.5", "2 150") as integer minor units of
 * `currency` (215000 for USD, 2150 for JPY "2,150"), or why it is not one. Commas and spaces
 * group digits; the dot is the decimal point, with at most the currency's exponent of digits
 * after it. Done on the digits, not with floating point: "0.29" is 29, never 28.999….
 */
export function toMinor(
  typed: string,
  currency: string,
): { ok: true; minor: number } | { ok: false; message: string } {
  const digits = minorDigits(currency);
  const text = typed.trim().replaceAll(/[,\s\u00a0\u202f]/g, "");
  const match = /^(\d+)(?:\.(\d*))?$/.exec(text);
  if (!match) return { ok: false, message: "must be an amount such as 2,150.00" };
  const fraction = match[2] ?? "";
  if (fraction.length > digits) {
    return {
      ok: false,
      message:
        digits === 0
          ? `${currency.toUpperCase()} has no minor unit: type a whole amount`
          : `${currency.toUpperCase()} has ${digits} decimals at most`,
    };
  }
  const minor = Number(`${match[1]}${fraction.padEnd(digits, "0")}`);
  if (!Number.isSafeInteger(minor)) return { ok: false, message: "is too large" };
  return { ok: true, minor };
}

/** Integer minor units as the major-unit text a person would type: 215000 USD → "2150.00". */
export function fromMinor(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  if (digits === 0) return String(minor);
  const text = String(minor).padStart(digits + 1, "0");
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
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
