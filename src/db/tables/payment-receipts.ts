/**
 * AP2 Payment Receipts recorded against assessments (docs/credentials.md, "Payment receipts"):
 * evidence of how a payment ended, kept as sent and never changed. One per payment and
 * assessment (the unique index is what makes a repeat answer the first); each is written with
 * its `assessment.payment_receipt_recorded` ledger entry, named by `audit_*`.
 */
import {
  bigint,
  boolean,
  foreignKey,
  index,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import {
  PAYMENT_RECEIPT_STATUSES,
  RECEIPT_REFERENCE_MATCHES,
  RECEIPT_VERIFICATION_REASONS,
  RECEIPT_VERIFICATION_STATUSES,
} from "../../schemas/payment-receipts";
import { assessments } from "./assess";
import { createdAtMs, oneOf } from "./columns";
import { tenantOrg } from "./foundation";
import { auditEntries } from "./ledger";

export const paymentReceipts = pgTable(
  "payment_receipts",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    assessmentId: uuid("assessment_id").notNull(),
    /** The assessment's mode. */
    livemode: boolean("livemode").notNull(),
    // The receipt's members (AP2's payment_receipt.json), as sent or as signed.
    paymentId: text("payment_id").notNull(),
    status: text("status", { enum: PAYMENT_RECEIPT_STATUSES }).notNull(),
    iss: text("iss").notNull(),
    /** Unix seconds, as the receipt says. */
    iat: bigint("iat", { mode: "number" }).notNull(),
    reference: text("reference").notNull(),
    pspConfirmationId: text("psp_confirmation_id"),
    networkConfirmationId: text("network_confirmation_id"),
    error: text("error"),
    errorDescription: text("error_description"),
    /** The compact JWS of a signed receipt, as sent; null for one sent as JSON. */
    jws: text("jws"),
    /**
     * base64url SHA-256 of the RFC 8785 receipt members and whether it was signed: a repeat of
     * the same content (another spelling of its JWS included) answers the stored receipt; other
     * content under the same `payment_id` is a conflict.
     */
    contentDigest: text("content_digest").notNull(),
    verificationStatus: text("verification_status", {
      enum: RECEIPT_VERIFICATION_STATUSES,
    }).notNull(),
    verificationReason: text("verification_reason", {
      enum: RECEIPT_VERIFICATION_REASONS,
    }).notNull(),
    /** The credential issuer whose key verified the JWS. */
    issuerId: uuid("issuer_id"),
    /** Which of the assessment's references `reference` is; null without a credential. */
    referenceMatch: text("reference_match", { enum: RECEIPT_REFERENCE_MATCHES }),
    createdAt: createdAtMs(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("payment_receipts_payment_idx").on(t.orgId, t.assessmentId, t.paymentId),
    // The assessment's receipts, newest first by id (the list), oldest first (the evidence).
    index("payment_receipts_assessment_idx").on(t.orgId, t.assessmentId, t.id),
    foreignKey({
      columns: [t.orgId, t.assessmentId],
      foreignColumns: [assessments.orgId, assessments.id],
      name: "payment_receipts_assessment_fk",
    }),
    foreignKey({
      columns: [t.orgId, t.auditSequence],
      foreignColumns: [auditEntries.orgId, auditEntries.sequence],
      name: "payment_receipts_audit_entry_fk",
    }),
    oneOf("payment_receipts_status_check", t.status, PAYMENT_RECEIPT_STATUSES),
    oneOf(
      "payment_receipts_verification_status_check",
      t.verificationStatus,
      RECEIPT_VERIFICATION_STATUSES,
    ),
    oneOf(
      "payment_receipts_verification_reason_check",
      t.verificationReason,
      RECEIPT_VERIFICATION_REASONS,
    ),
    oneOf("payment_receipts_reference_match_check", t.referenceMatch, RECEIPT_REFERENCE_MATCHES),
  ],
);
