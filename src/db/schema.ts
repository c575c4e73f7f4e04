/**
 * The database schema, one module per domain under tables/. drizzle-kit reads this file; the
 * application imports tables from here.
 */
export * from "./tables/action";
export * from "./tables/artifacts";
export * from "./tables/assess";
export * from "./tables/billing";
export * from "./tables/coverage";
export * from "./tables/credentials";
export * from "./tables/feedback";
export * from "./tables/foundation";
export * from "./tables/history";
export * from "./tables/identity";
export * from "./tables/ledger";
export * from "./tables/payment-receipts";
export * from "./tables/reviews";
export * from "./tables/rules";
export * from "./tables/sessions";
export * from "./tables/signing";
export * from "./tables/status-lists";
export * from "./tables/webhooks";
