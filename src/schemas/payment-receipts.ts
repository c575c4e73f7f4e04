import { z } from "@hono/zod-openapi";
import { hasControlCharacter, hasLoneSurrogate } from "./common";

// AP2 v0.2 Payment Receipts as the API takes and shows them (docs/credentials.md, "Payment
// receipts"): the fields of `payment_receipt.json` (code/sdk/schemas/ap2/, release 0.2.0), sent
// as JSON or signed by their issuer as a compact JWS.

/** `types/receipt_status.json`: AP2 spells them capitalised, and so does the API. */
export const PAYMENT_RECEIPT_STATUSES = ["Success", "Error"] as const;

/** Whether the receipt's signature was checked: `invalid` is refused, never stored. */
export const RECEIPT_VERIFICATION_STATUSES = ["verified", "unverified"] as const;

/**
 * Why: `issuer_signature` (a key of the credential issuer `iss` names verified the JWS),
 * `unsigned` (sent as JSON), `unknown_issuer` (signed, but no active issuer of the org is
 * named `iss`: nothing to verify it with).
 */
export const RECEIPT_VERIFICATION_REASONS = [
  "issuer_signature",
  "unsigned",
  "unknown_issuer",
] as const;

/** Which of the assessment's mandate references the receipt's `reference` is. */
export const RECEIPT_REFERENCE_MATCHES = ["reference", "closed_mandate_reference"] as const;

/** A signed receipt as sent: a compact JWS is a few hundred bytes; 16 KiB is generous. */
export const MAX_RECEIPT_JWS = 16_384;

/** The latest `iat` Postgres can show as a time: 9999-12-31T23:59:59Z. */
const LATEST_IAT = 253_402_300_799;

/** An identifier as issuers write them: printable ASCII, no spaces, compared byte for byte. */
function identifier(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");
}

/** Text compared as signed: never trimmed; no control character, no lone surrogate. */
function signedText(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((text) => !hasControlCharacter(text), "must not contain control characters")
    .refine((text) => !hasLoneSurrogate(text), "must be valid Unicode (no unpaired surrogate)");
}

const ReceiptStatus = z.enum(PAYMENT_RECEIPT_STATUSES).openapi("PaymentReceiptStatus", {
  description: "AP2's `receipt_status.json`: the final state of the payment",
});

/** The members of `payment_receipt.json`, each optional here: `receiptRules` says which. */
const fields = {
  status: ReceiptStatus.optional(),
  iss: signedText(500)
    .optional()
    .openapi({
      description:
        "The issuer of the receipt (the PSP or Merchant Payment Processor). A signed receipt " +
        "is verified with the keys of the org's active credential issuer it names: its `id`, " +
        "its `name`, or the origin or host of its `jwks_url`",
    }),
  iat: z
    .int()
    .min(0)
    .max(LATEST_IAT)
    .optional()
    .openapi({ description: "When the receipt was made, Unix seconds" }),
  reference: identifier(256)
    .optional()
    .openapi({
      description:
        "The hash of the closed mandate the receipt binds to. For an assessment of a " +
        "credential it must be that credential's: the Mandate Receipt's `reference` (AP2) or " +
        "its `closed_mandate_reference` (the SDK's, `outcome.credential.reference`)",
    }),
  payment_id: identifier(255)
    .optional()
    .openapi({ description: "The payment's unique id: one receipt per payment and assessment" }),
  psp_confirmation_id: identifier(255)
    .optional()
    .openapi({ description: "The PSP's confirmation; present if and only if `Success`" }),
  network_confirmation_id: identifier(255)
    .optional()
    .openapi({ description: "The network's confirmation; present if and only if `Success`" }),
  error: identifier(100)
    .optional()
    .openapi({ description: "A unique error code; present if and only if `Error`" }),
  error_description: signedText(1000)
    .optional()
    .openapi({ description: "A human-readable description; present if and only if `Error`" }),
};

type Fields = { [K in keyof typeof fields]?: z.infer<(typeof fields)[K]> };

const REQUIRED = ["status", "iss", "iat", "reference", "payment_id"] as const;
const SUCCESS_ONLY = ["psp_confirmation_id", "network_confirmation_id"] as const;
const ERROR_ONLY = ["error", "error_description"] as const;

/**
 * `payment_receipt.json`'s rules: five members always, and its `oneOf`: a `Success` carries
 * both confirmation ids and no error, an `Error` carries `error` and `error_description` and no
 * confirmation id (their descriptions: "Present if and only if status is Error", "Present only
 * if status is Success").
 */
function receiptRules(receipt: Fields, ctx: z.RefinementCtx, at: (string | number)[] = []) {
  const missing = (name: string) =>
    ctx.addIssue({ code: "custom", path: [...at, name], message: "required" });
  const refused = (name: string) =>
    ctx.addIssue({
      code: "custom",
      path: [...at, name],
      message: `not allowed when status is ${receipt.status}`,
    });
  for (const name of REQUIRED) if (receipt[name] === undefined) missing(name);
  // An unknown status is its own issue: which members go with it is unknown too.
  if (receipt.status !== "Success" && receipt.status !== "Error") return;
  const [wanted, unwanted] =
    receipt.status === "Success" ? [SUCCESS_ONLY, ERROR_ONLY] : [ERROR_ONLY, SUCCESS_ONLY];
  for (const name of wanted) if (receipt[name] === undefined) missing(name);
  for (const name of unwanted) if (receipt[name] !== undefined) refused(name);
}

/**
 * A signed receipt's payload: the same members and rules. Other claims a JWT may carry (`exp`,
 * `jti`, …) are let through: the JWS is kept as it was signed.
 */
export const SignedReceiptPayload = z.object(fields).superRefine((r, ctx) => receiptRules(r, ctx));

const compactJws = z
  .string()
  .max(MAX_RECEIPT_JWS)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, "must be a compact JWS")
  .openapi({
    description:
      "The receipt signed by its issuer: a compact JWS (ES256 or EdDSA) whose payload is the " +
      "receipt's members, as AP2's `ReceiptClient` makes and verifies them. Send it alone",
  });

export const RecordPaymentReceipt = z
  .object({ ...fields, jws: compactJws.optional() })
  .strict()
  .superRefine((body, ctx) => {
    if (body.jws === undefined) return receiptRules(body, ctx);
    for (const name of Object.keys(fields)) {
      if (body[name as keyof Fields] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "a signed receipt is sent as jws alone: its members are the JWS payload",
        });
      }
    }
  })
  .openapi("RecordPaymentReceipt", {
    description:
      "An AP2 Payment Receipt (`payment_receipt.json`): its members as JSON (recorded " +
      "`unverified`), or `{jws}` alone, the receipt as its issuer signed it",
    example: {
      status: "Success",
      iss: "https://psp.example",
      iat: 1795166071,
      reference: "RRs8AIeCNgXRl8DsBU9hmcq-DbD6P1tMSvjpQk62fNg",
      payment_id: "pay_7d1f0c5e9a",
      psp_confirmation_id: "psp_ch_3QkR8mLqTz",
      network_confirmation_id: "nw_58210377",
    },
  });
export type RecordPaymentReceipt = z.infer<typeof RecordPaymentReceipt>;

/** The receipt's own members as recorded (AP2's names), absent ones null. */
export interface ReceiptFields {
  status: (typeof PAYMENT_RECEIPT_STATUSES)[number];
  iss: string;
  iat: number;
  reference: string;
  payment_id: string;
  psp_confirmation_id: string | null;
  network_confirmation_id: string | null;
  error: string | null;
  error_description: string | null;
}

export const ReceiptVerification = z
  .object({
    status: z.enum(RECEIPT_VERIFICATION_STATUSES),
    reason: z.enum(RECEIPT_VERIFICATION_REASONS).openapi({
      description:
        "`issuer_signature`: a key of the issuer `iss` names verified the JWS; `unsigned`: " +
        "sent as JSON; `unknown_issuer`: signed, but no active credential issuer of the org is " +
        "named `iss`. A signature that fails under a named issuer is refused (400 " +
        "`receipt_signature_invalid`), never recorded",
    }),
    issuer_id: z
      .string()
      .nullable()
      .openapi({ description: "The credential issuer whose key verified it; else null" }),
  })
  .openapi("PaymentReceiptVerification");

export const PaymentReceipt = z
  .object({
    id: z.string(),
    object: z.literal("payment_receipt"),
    assessment_id: z.string(),
    livemode: z.boolean(),
    status: ReceiptStatus,
    iss: z.string(),
    iat: z.int(),
    reference: z.string(),
    payment_id: z.string(),
    psp_confirmation_id: z.string().nullable(),
    network_confirmation_id: z.string().nullable(),
    error: z.string().nullable(),
    error_description: z.string().nullable(),
    jws: z.string().nullable().openapi({ description: "The signed receipt as sent; else null" }),
    verification: ReceiptVerification,
    reference_match: z
      .enum(RECEIPT_REFERENCE_MATCHES)
      .nullable()
      .openapi({
        description:
          "Which of the assessment's references `reference` is: the Mandate Receipt's " +
          "`reference` (AP2) or its `closed_mandate_reference` (the SDK's); null when the " +
          "assessment was made without a credential (nothing to bind to)",
      }),
    created: z.string(),
  })
  .openapi("PaymentReceipt");
export type PaymentReceipt = z.infer<typeof PaymentReceipt>;
