/** The service's signing keys as the Cron sweep has seen them: when each came and went. */
import { jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * One row per key that has been the current signing key. A new current key closes the
 * previous one's window and emits `key.rotation` to every org, in one transaction
 * (`note_signing_key()`), so a rotation is announced exactly once.
 */
export const signingKeys = pgTable("signing_keys", {
  kid: text("kid").primaryKey(),
  publicJwk: jsonb("public_jwk").notNull(),
  firstSeenAt: timestamp("first_seen_at", { withTimezone: true, precision: 3 })
    .notNull()
    .defaultNow(),
  retiredAt: timestamp("retired_at", { withTimezone: true, precision: 3 }),
});
