/** Billing: each org's plan and spending cap, its metered usage per period, and checkouts. */
import { sql } from "drizzle-orm";
import {
  bigint,
  check,
  date,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtMs, currentOrg } from "./columns";
import { organizations, tenantOrg } from "./foundation";

export const CHECKOUT_STATUSES = ["open", "complete"] as const;

/**
 * An org's billing account. No row means the free plan and no spending cap: the account is
 * written the first time something about it changes. `spending_cap` is in minor units of the
 * plan's currency and bounds the period's usage charge; null means no cap.
 */
export const billingAccounts = pgTable(
  "billing_accounts",
  {
    orgId: uuid("org_id")
      .primaryKey()
      .default(currentOrg)
      .references(() => organizations.id),
    plan: text("plan").notNull().default("free"),
    spendingCap: bigint("spending_cap", { mode: "number" }),
    providerCustomerId: text("provider_customer_id"),
    providerSubscriptionId: text("provider_subscription_id"),
    createdAt: createdAtMs().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [check("billing_accounts_cap_check", sql`${t.spendingCap} >= 0`)],
);

/** The meter: billable (live) assessments per org per period, counted by the persist statement. */
export const billingUsage = pgTable(
  "billing_usage",
  {
    orgId: tenantOrg(),
    periodStart: date("period_start").notNull(),
    assessments: bigint("assessments", { mode: "number" }).notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.periodStart] })],
);

/** A Checkout Session the service created at the provider: the completion webhook names it. */
export const billingCheckouts = pgTable("billing_checkouts", {
  id: text("id").primaryKey(),
  orgId: tenantOrg(),
  plan: text("plan").notNull(),
  status: text("status", { enum: CHECKOUT_STATUSES }).notNull().default("open"),
  url: text("url").notNull(),
  expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  createdAt: createdAtMs().defaultNow(),
  completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
});

/** Provider events already processed, by the provider's event id: a redelivery changes nothing. */
export const billingProviderEvents = pgTable("billing_provider_events", {
  id: text("id").primaryKey(),
  orgId: tenantOrg(),
  type: text("type").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
