import { z } from "@hono/zod-openapi";
import { RowUuid } from "./agents";
import { DateTime, plainText, storableText } from "./common";
import { HISTORY_LABELS } from "./vocabulary";

// An org's payment history as the import takes it and shows it (docs/history.md).

/** At most this many records per call of `POST /v1/history/transactions`. */
export const MAX_HISTORY_RECORDS = 10_000;

/** An identifier compared byte for byte (the org's transaction id, a payee's id). */
const identifier = (description: string) =>
  storableText(255).min(1).openapi({ description, minLength: 1, maxLength: 255 });

export const HistoryLabelName = z.enum(HISTORY_LABELS).openapi("HistoryLabelName", {
  description:
    "`fraud` and `chargeback` make the payment a fraud for the risk model, `legitimate` a " +
    "confirmed good one, `refund` is neutral",
});

export const HistoryRecord = z
  .object({
    id: identifier("The org's own transaction id: a record is stored once per id and mode"),
    occurred_at: DateTime.openapi({
      description: "When the payment happened (ISO 8601 with an offset); at most 5 minutes ahead",
    }),
    agent_id: RowUuid.openapi({ description: "A registered agent of the org" }),
    payee: z
      .object({
        id: identifier("The payee as the assess path names it (`payee.id` of a mandate)"),
        name: plainText(255).optional(),
      })
      .strict()
      .openapi("HistoryPayee"),
    amount: z
      .object({
        amount: z
          .int()
          .min(0)
          .max(Number.MAX_SAFE_INTEGER)
          .openapi({ description: "In minor units of the currency (cents for USD)" }),
        currency: z
          .string()
          .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code of 3 letters")
          .openapi({ description: "ISO 4217; stored upper-case", example: "USD" }),
      })
      .strict()
      .openapi("HistoryAmount"),
    kind: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, "lowercase letters, digits and _ (1 to 64)")
      .optional()
      .openapi({ description: "What was done; defaults to `payment`" }),
    label: z
      .object({
        label: HistoryLabelName,
        labeled_at: DateTime.openapi({
          description:
            "When the outcome became known; not before `occurred_at`. No window, feature or " +
            "training set sees the label before this instant.",
        }),
      })
      .strict()
      .optional()
      .openapi("HistoryRecordLabel"),
  })
  .strict()
  .openapi("HistoryRecord", {
    example: {
      id: "txn_1042",
      occurred_at: "2026-09-14T10:21:07Z",
      agent_id: "01a1a0de-6907-78cb-9aa9-4d0d45d0e308",
      payee: { id: "merchant_7731", name: "Nimbus Books" },
      amount: { amount: 4_599, currency: "USD" },
      label: { label: "chargeback", labeled_at: "2026-10-02T08:00:00Z" },
    },
  });

export type HistoryRecordInput = z.infer<typeof HistoryRecord>;

export const ImportHistoryRequest = z
  .object({
    records: z.array(HistoryRecord).min(1).max(MAX_HISTORY_RECORDS),
  })
  .strict()
  .openapi("ImportHistoryRequest");

/** The NDJSON form of the same request: one record per line. */
export const HistoryRecordsNdjson = z.string().openapi("HistoryRecordsNdjson", {
  description:
    "One HistoryRecord as JSON per line (`Content-Type: application/x-ndjson`), 1 to 10,000 " +
    "lines; blank lines are skipped. A line's index is its record's index in errors.",
  example:
    '{"id":"txn_1","occurred_at":"2026-09-14T10:21:07Z","agent_id":"01a1a0de-6907-78cb-9aa9-4d0d45d0e308","payee":{"id":"merchant_7731"},"amount":{"amount":4599,"currency":"USD"}}\n',
});

const LabelCounts = z
  .object(
    Object.fromEntries(HISTORY_LABELS.map((label) => [label, z.int()])) as {
      [K in (typeof HISTORY_LABELS)[number]]: z.ZodInt;
    },
  )
  .strict()
  .openapi("HistoryLabelCounts", {
    description: "Labels per value among the records this call stored",
  });

export const HistoryImport = z
  .object({
    id: z.string(),
    object: z.literal("history_import"),
    livemode: z.boolean(),
    created: z.string(),
    records: z.int().openapi({ description: "Records in the call" }),
    inserted: z.int().openapi({ description: "Records this call stored" }),
    unchanged: z.int().openapi({
      description: "Records already stored with the same content (a replay): counted, not stored",
    }),
    labels: LabelCounts,
    first_occurred_at: z.string().nullable().openapi({
      description: "The earliest `occurred_at` of the call's records",
    }),
    last_occurred_at: z.string().nullable().openapi({
      description: "The latest `occurred_at` of the call's records",
    }),
    digest: z.string().openapi({
      description:
        "`sha256:` and the hex SHA-256 of the call's records as stored (RFC 8785 JSON of the " +
        "array, in the call's order)",
    }),
    audit_entry_id: z.string().nullable().openapi({
      description: "The `history.imported` entry of the org's ledger that records the call",
    }),
  })
  .openapi("HistoryImport");
