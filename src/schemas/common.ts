import { z } from "@hono/zod-openapi";

// Value schemas of the API's objects, shared by the routes that validate them and the domain
// that builds them (the HTTP envelope is in src/http/schemas.ts).

/**
 * A string matching a Unicode pattern (`\p{…}` classes need the `u` flag). zod-to-openapi
 * 9.1 renders a regex with flags as its source with the flags appended (`^\P{Cc}*$/u`), a
 * pattern no value matches; JSON Schema reads patterns in Unicode mode, so the document gets
 * the source alone.
 */
export function withUnicodePattern(schema: z.ZodString, pattern: RegExp, message: string) {
  return schema.regex(pattern, message).openapi({ pattern: pattern.source });
}

/**
 * Free text from clients: no control characters (Postgres refuses NUL in text, and nobody
 * needs a newline in a name), no lone UTF-16 surrogates (not text at all: jsonb refuses them,
 * and a UTF-8 encoder would silently replace them), trimmed, bounded.
 */
export function plainText(max: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((text) => !hasControlCharacter(text), "must not contain control characters")
    .refine((text) => !hasLoneSurrogate(text), LONE_SURROGATE);
}

export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

const LONE_SURROGATE = "must be valid Unicode (no unpaired surrogate)";

/**
 * A high surrogate not followed by a low one, or a low one not preceded by a high one: what
 * ES2024's String.prototype.isWellFormed checks natively (a regex was slower on the hot path).
 */
export function hasLoneSurrogate(text: string): boolean {
  return !(text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Text the database can store as it is: no NUL (Postgres refuses it in text and jsonb) and no
 * lone surrogate. For values compared byte for byte, which `plainText` would trim or refuse.
 */
export function storableText(max: number) {
  return z
    .string()
    .max(max)
    .refine((text) => !text.includes("\u0000"), "must not contain NUL (U+0000)")
    .refine((text) => !hasLoneSurrogate(text), LONE_SURROGATE);
}

/** Stripe-style list envelope with keyset pagination. */
export function listOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      object: z.literal("list"),
      data: z.array(item),
      has_more: z.boolean(),
      next_cursor: z.string().nullable(),
    })
    .openapi(name);
}

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ example: 25 }),
  cursor: z.string().min(1).optional().openapi({ description: "Opaque; from `next_cursor`" }),
});

/**
 * Stripe-style metadata: the caller's own labels, string to string, bounded. Not for personal
 * data (principal erasure clears it all the same; an agent's is never erased). Values may hold
 * any text Postgres can store: no NUL, no unpaired surrogate.
 */
export const Metadata = z
  .record(
    z
      .string()
      .min(1)
      .max(40)
      .refine((key) => !hasControlCharacter(key), "must not contain control characters")
      .refine((key) => !hasLoneSurrogate(key), LONE_SURROGATE),
    storableText(500),
  )
  .refine((record) => Object.keys(record).length <= 50, "at most 50 keys")
  .openapi("Metadata", { example: { crm_id: "cus_123" } });

/** The instants Postgres stores: years 1 to 9999 (UTC). Beyond them is a 400, never a 500. */
export const EARLIEST_TIME_MS = Date.parse("0001-01-01T00:00:00Z");
export const LATEST_TIME_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** An ISO 8601 date-time with an offset, within what Postgres can store. */
export const DateTime = z.iso.datetime({ offset: true }).refine((value) => {
  const time = Date.parse(value);
  return time >= EARLIEST_TIME_MS && time <= LATEST_TIME_MS;
}, "must be between years 1 and 9999 (UTC)");

/** A record's optional time as the API shows it: ISO 8601 in UTC, or null. */
export function isoOrNull(date: Date | null): string | null {
  return date?.toISOString() ?? null;
}
