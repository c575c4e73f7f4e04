/**
 * AP2 Payment Receipts recorded against assessments (docs/credentials.md, "Payment receipts"):
 * the caller hands the service the receipt the payment's processor returned, the service binds
 * it to the assessment's mandate, checks its signature when it is signed, and keeps it with a
 * ledger entry, as AP2's "Dispute Evidence" asks of the roles that hold a Payment Mandate and
 * its Receipt.
 */
import { and, asc, desc, eq, lt } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import { textDigest } from "../ap2-credentials/disclosures";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { decodeIdCursor, mapPage, type Page, page } from "../db/pagination";
import { assessments, credentialIssuers, paymentReceipts } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit, ORPHANED } from "../ledger/commit";
import { newId } from "../lib/ids";
import type {
  PaymentReceipt,
  ReceiptFields,
  RecordPaymentReceipt,
} from "../schemas/payment-receipts";
import { checkSignature, readReceipt } from "./receipt-signature";
import { referenceMatch } from "./references";

export type ReceiptRow = typeof paymentReceipts.$inferSelect;

/** At most this many receipts in an assessment's evidence (oldest first). */
export const EVIDENCE_RECEIPTS_LIMIT = 20;

export function toReceipt(row: ReceiptRow): PaymentReceipt {
  return {
    id: row.id,
    object: "payment_receipt",
    assessment_id: row.assessmentId,
    livemode: row.livemode,
    status: row.status,
    iss: row.iss,
    iat: row.iat,
    reference: row.reference,
    payment_id: row.paymentId,
    psp_confirmation_id: row.pspConfirmationId,
    network_confirmation_id: row.networkConfirmationId,
    error: row.error,
    error_description: row.errorDescription,
    jws: row.jws,
    verification: {
      status: row.verificationStatus,
      reason: row.verificationReason,
      issuer_id: row.issuerId,
    },
    reference_match: row.referenceMatch,
    created: row.createdAt.toISOString(),
  };
}

/** The caller's assessment in its own mode (another org's or mode's is not there: 404). */
function sameAssessment(tenant: Tenant, id: string) {
  return and(eq(assessments.id, id), eq(assessments.livemode, tenant.livemode));
}

/** The receipt's AP2 members, absent ones null. */
function receiptFields(source: Partial<Record<keyof ReceiptFields, unknown>>): ReceiptFields {
  const or = (value: unknown) => (value === undefined ? null : (value as string));
  return {
    status: source.status as ReceiptFields["status"],
    iss: source.iss as string,
    iat: source.iat as number,
    reference: source.reference as string,
    payment_id: source.payment_id as string,
    psp_confirmation_id: or(source.psp_confirmation_id),
    network_confirmation_id: or(source.network_confirmation_id),
    error: or(source.error),
    error_description: or(source.error_description),
  };
}

/**
 * What makes two receipts the same: their members and whether they came signed, by content
 * (RFC 8785), never by spelling: the same receipt signed again, or its ECDSA twin, is the same.
 */
export function contentDigest(fields: ReceiptFields, signed: boolean): string {
  return textDigest(canonicalize({ receipt: fields, signed }));
}

/** The stored receipt when it is this one; 409 when its payment already has another. */
function sameOrConflict(stored: ReceiptRow, digest: string): ReceiptRow {
  if (stored.contentDigest === digest) return stored;
  throw new ApiError("receipt_conflict", [
    {
      path: "payment_id",
      message:
        `payment ${stored.paymentId} already has a receipt on this assessment (${stored.id}), ` +
        "with other content: a recorded receipt never changes",
    },
  ]);
}

/**
 * Records a receipt: one read (which authenticates, finds the assessment in the caller's mode
 * with its references, the receipt already stored for this payment, and the org's active
 * issuers when the receipt is signed), the checks (its `reference` is the assessment's mandate;
 * its signature verifies under the issuer it names), then the ledger's
 * `assessment.payment_receipt_recorded` entry and the row in one transaction. The same receipt
 * again answers the stored one (`created: false`), concurrent duplicates included (the entry's
 * `once` key is the assessment and payment); other content for the same payment is 409.
 */
export async function recordReceipt(
  tenant: Tenant,
  assessmentId: string,
  body: RecordPaymentReceipt,
): Promise<{ row: ReceiptRow; created: boolean }> {
  const jws = body.jws ?? null;
  const read = jws === null ? null : readReceipt(jws);
  const fields = receiptFields(read ? read.fields : body);
  const digest = contentDigest(fields, jws !== null);
  const [found, existing, issuers] = await tenant.batch((db) => [
    db
      .select({
        id: assessments.id,
        credential: assessments.credential,
        mandateReceipt: assessments.mandateReceipt,
      })
      .from(assessments)
      .where(sameAssessment(tenant, assessmentId)),
    db
      .select()
      .from(paymentReceipts)
      .where(
        and(
          eq(paymentReceipts.assessmentId, assessmentId),
          eq(paymentReceipts.paymentId, fields.payment_id),
        ),
      ),
    // A signed receipt's issuer is one of these (the org's trust anchors, read as assess does).
    ...(jws === null
      ? []
      : [
          db
            .select()
            .from(credentialIssuers)
            .where(eq(credentialIssuers.status, "active"))
            .orderBy(credentialIssuers.id),
        ]),
  ]);
  const assessment = orNotFound(found[0]);
  const match = referenceMatch(assessment, fields.reference, jws === null ? "" : "jws.payload.");
  const signature =
    read && jws !== null ? await checkSignature(tenant, jws, read, issuers ?? []) : null;
  const stored = existing[0];
  if (stored) return { row: sameOrConflict(stored, digest), created: false };

  const now = new Date();
  const draft: ReceiptRow = {
    id: newId(now.getTime()),
    orgId: (await tenant.caller()).orgId,
    assessmentId: assessment.id,
    livemode: tenant.livemode,
    paymentId: fields.payment_id,
    status: fields.status,
    iss: fields.iss,
    iat: fields.iat,
    reference: fields.reference,
    pspConfirmationId: fields.psp_confirmation_id,
    networkConfirmationId: fields.network_confirmation_id,
    error: fields.error,
    errorDescription: fields.error_description,
    jws,
    contentDigest: digest,
    verificationStatus: signature?.status ?? "unverified",
    verificationReason:
      signature === null
        ? "unsigned"
        : signature.status === "verified"
          ? "issuer_signature"
          : signature.reason,
    issuerId: signature?.status === "verified" ? signature.issuerId : null,
    referenceMatch: match,
    createdAt: now,
    // The entry's, once sequenced.
    auditEntryId: "",
    auditSequence: 0,
  };
  const storedById = async (id: string) => {
    const [again] = await tenant.batch((db) => [
      db.select().from(paymentReceipts).where(eq(paymentReceipts.id, id)),
    ]);
    return again[0];
  };
  const committed = await commit(
    tenant,
    {
      type: "assessment.payment_receipt_recorded",
      subject: { type: "payment_receipt", id: draft.id },
      payload: toReceipt(draft),
      terms: draft,
      once: [`payment_receipt:${assessment.id}:${fields.payment_id}`],
    },
    (db, { entry, terms, replayed }) => {
      // A concurrent duplicate's receipt, or another receipt for the same payment.
      const row = replayed ? revive(terms) : draft;
      sameOrConflict(row, digest);
      return [
        db
          .insert(paymentReceipts)
          .values({ ...row, auditEntryId: entry.id, auditSequence: entry.sequence })
          .onConflictDoNothing(),
      ];
    },
    {
      // The first receipt's row was written then, unless its writer died.
      expired: async (entry) => {
        const row = await storedById(entry.subject?.id ?? draft.id);
        return row ? { row: sameOrConflict(row, digest), created: false } : ORPHANED;
      },
    },
  );
  if (!("entry" in committed)) return committed;
  const { entry, terms, replayed } = committed;
  const row = replayed ? revive(terms) : draft;
  return {
    row: { ...row, auditEntryId: entry.id, auditSequence: entry.sequence },
    created: !replayed,
  };
}

/** The first committer's draft, back from the ledger's JSON. */
function revive(terms: ReceiptRow): ReceiptRow {
  return { ...terms, createdAt: new Date(terms.createdAt) };
}

/** A page of the assessment's receipts, newest first, or 404 for an assessment not the caller's. */
export async function listReceipts(
  tenant: Tenant,
  assessmentId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<PaymentReceipt>> {
  const after = decodeIdCursor(query.cursor);
  const [found, rows] = await tenant.batch((db) => [
    db.select({ id: assessments.id }).from(assessments).where(sameAssessment(tenant, assessmentId)),
    db
      .select()
      .from(paymentReceipts)
      .where(
        and(
          eq(paymentReceipts.assessmentId, assessmentId),
          eq(paymentReceipts.livemode, tenant.livemode),
          after ? lt(paymentReceipts.id, after) : undefined,
        ),
      )
      .orderBy(desc(paymentReceipts.id))
      .limit(query.limit + 1),
  ]);
  orNotFound(found[0]);
  return mapPage(
    page(rows, query.limit, (row) => row.id),
    toReceipt,
  );
}

/** The statement reading an assessment's first receipts for its evidence, oldest first. */
export function evidenceReceipts(db: Database, assessmentId: string, livemode: boolean) {
  return db
    .select()
    .from(paymentReceipts)
    .where(
      and(eq(paymentReceipts.assessmentId, assessmentId), eq(paymentReceipts.livemode, livemode)),
    )
    .orderBy(asc(paymentReceipts.id))
    .limit(EVIDENCE_RECEIPTS_LIMIT);
}
