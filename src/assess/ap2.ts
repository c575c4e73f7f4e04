import { z } from "@hono/zod-openapi";
import { RECURRENCE_FREQUENCIES } from "../ap2-credentials/payment-constraints";

/**
 * The four AP2 v0.2 mandate types, transcribed from the protocol's JSON Schemas
 * (code/sdk/schemas/ap2/ of google-agentic-commerce/AP2, release 0.2.0; copies under
 * shared/reference/ap2-v0.2/schemas). Objects accept additional properties, as those schemas
 * do, except the JWK, whose schema says `additionalProperties: false`.
 *
 * Deliberate tightenings, each because a later stage compares the value:
 * - currency codes must be three uppercase letters (the schemas say "ISO 4217 alpha-3" in prose);
 * - `payment_amount.amount` must be a non-negative safe integer: a negative payment would pass
 *   every "amount above X" rule, and beyond 2^53 a JSON number is no longer the exact value.
 */

const currency = z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code of 3 uppercase letters");
/** Unix epoch seconds (`iat`, `exp`). */
const epochSeconds = z.int();
const jsonObject = z.record(z.string(), z.unknown());

export const amountSchema = z.looseObject({
  amount: z.int().nonnegative(),
  currency,
});

export const merchantSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  website: z.string().optional(),
});

export const paymentInstrumentSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  description: z.string().optional(),
});

export const pispSchema = z.looseObject({
  legal_name: z.string(),
  brand_name: z.string(),
  domain_name: z.string(),
});

const base64urlCoordinate = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be 43 base64url chars");

/** An EC P-256 public key (types/jwk.json): the only closed object of the protocol. */
export const jwkSchema = z.strictObject({
  kty: z.literal("EC"),
  crv: z.literal("P-256").optional(),
  x: base64urlCoordinate.optional(),
  y: base64urlCoordinate.optional(),
  use: z.enum(["sig", "enc"]).optional(),
  key_ops: z
    .array(
      z.enum([
        "sign",
        "verify",
        "encrypt",
        "decrypt",
        "wrapKey",
        "unwrapKey",
        "deriveKey",
        "deriveBits",
      ]),
    )
    .optional(),
  alg: z.literal("ES256").optional(),
  kid: z.string().optional(),
  x5u: z.url().optional(),
  x5c: z.array(z.string()).optional(),
  x5t: z.string().optional(),
  "x5t#S256": z.string().optional(),
});

/**
 * RFC 7800 confirmation claim. The schemas only say "object"; when it carries `jwk` that key is
 * read as the holder key, so it must be the protocol's JWK type (types/jwk.json). A `cnf` bound
 * by other means (`kid`, `jku`) stays valid.
 */
const cnfSchema = z.looseObject({ jwk: jwkSchema.optional() });

/** SD-JWT's form of an array element the holder has not disclosed: `{"...": digest}`. */
const undisclosedElementSchema = z.strictObject({
  "...": z.string().regex(/^[A-Za-z0-9_-]+$/, "must be a base64url digest"),
});
export type UndisclosedElement = z.infer<typeof undisclosedElementSchema>;

export function isUndisclosedElement(value: unknown): value is UndisclosedElement {
  return typeof value === "object" && value !== null && Object.hasOwn(value, "...");
}

/**
 * An array marked `x-selectively-disclosable-array`: each entry is either an element or an
 * undisclosed `{"...": digest}`. Chosen by the presence of the `...` key rather than with a
 * union, so a bad element reports its own failing paths instead of a bare "invalid input".
 */
function disclosableArray<T extends z.ZodType>(element: T) {
  const entry = z.custom<z.output<T> | UndisclosedElement>().superRefine((value, ctx) => {
    const schema = isUndisclosedElement(value) ? undisclosedElementSchema : element;
    const result = schema.safeParse(value);
    for (const issue of result.error?.issues ?? []) {
      // Re-raised as custom issues (zod's own types cannot be re-added); unknown keys keep
      // one issue per key, as everywhere else in the answer.
      const unknown = issue.code === "unrecognized_keys" ? issue.keys : [];
      for (const key of unknown) {
        ctx.addIssue({ code: "custom", path: [...issue.path, key], message: "unknown field" });
      }
      if (unknown.length === 0)
        ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    }
  });
  // z.custom has no JSON Schema of its own: describe it for the OpenAPI document.
  return z.array(
    entry.openapi({
      type: "object",
      description: 'An element, or an SD-JWT undisclosed element {"...": "<digest>"}',
    }),
  );
}

/**
 * JSON Schema's `contains`: at least one entry of the given constraint `type`. It runs even when
 * some entries failed (`when`), so that every failing path is reported in one answer.
 */
function constraintArray<T extends z.ZodType>(entry: T, required: string) {
  return z
    .array(entry)
    .refine(
      (entries: unknown[]) => entries.some((item) => isObject(item) && item.type === required),
      {
        when: (payload) => Array.isArray(payload.value),
        message: `must contain a "${required}" constraint`,
      },
    );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// --- Open Payment Mandate constraints (open_payment_mandate.json $defs) ---

const openPaymentConstraintSchema = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("payment.agent_recurrence"),
    frequency: z.enum(RECURRENCE_FREQUENCIES),
    max_occurrences: z.int().optional(),
  }),
  z.looseObject({
    type: z.literal("payment.allowed_payees"),
    allowed: disclosableArray(merchantSchema),
  }),
  z.looseObject({
    type: z.literal("payment.allowed_payment_instruments"),
    allowed: disclosableArray(paymentInstrumentSchema),
  }),
  z.looseObject({ type: z.literal("payment.allowed_pisps"), allowed: z.array(pispSchema) }),
  z.looseObject({
    type: z.literal("payment.amount_range"),
    currency,
    max: z.int(),
    min: z.int().optional(),
  }),
  // The schema types the budget as "number", not integer: kept as written.
  z.looseObject({ type: z.literal("payment.budget"), max: z.number(), currency }),
  z.looseObject({
    type: z.literal("payment.execution_date"),
    not_before: z.string().optional(),
    not_after: z.string().optional(),
  }),
  z.looseObject({ type: z.literal("payment.reference"), conditional_transaction_id: z.string() }),
]);

// --- Open Checkout Mandate constraints (open_checkout_mandate.json $defs) ---

/** The open checkout's own `item` definition (id and title), not types/item.json. */
const checkoutItemSchema = z.looseObject({ id: z.string(), title: z.string() });

const lineItemRequirementSchema = z.looseObject({
  id: z.string(),
  acceptable_items: disclosableArray(checkoutItemSchema),
  quantity: z.int().positive(),
});

const openCheckoutConstraintSchema = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("checkout.allowed_merchants"),
    allowed: disclosableArray(merchantSchema),
  }),
  z.looseObject({
    type: z.literal("checkout.line_items"),
    items: z.array(lineItemRequirementSchema).min(1),
  }),
]);

// --- The four mandates ---

export const paymentMandateSchema = z.looseObject({
  vct: z.literal("mandate.payment.1"),
  transaction_id: z.string(),
  payee: merchantSchema,
  pisp: pispSchema.optional(),
  payment_amount: amountSchema,
  payment_instrument: paymentInstrumentSchema,
  execution_date: z.string().optional(),
  risk_data: jsonObject.optional(),
  iat: epochSeconds.optional(),
  exp: epochSeconds.optional(),
});

export const openPaymentMandateSchema = z.looseObject({
  vct: z.literal("mandate.payment.open.1"),
  constraints: constraintArray(openPaymentConstraintSchema, "payment.reference"),
  cnf: cnfSchema,
  payee: merchantSchema.optional(),
  payment_amount: amountSchema.optional(),
  payment_instrument: paymentInstrumentSchema.optional(),
  pisp: pispSchema.optional(),
  execution_date: z.string().optional(),
  risk_data: jsonObject.optional(),
  iat: epochSeconds.optional(),
  exp: epochSeconds.optional(),
});

/**
 * `checkout_jwt` is required but marked `x-selectively-disclosable-field`: in a presented SD-JWT
 * it may be absent from the claims and stand as a digest in `_sd` (the protocol's own example
 * does this). So it is required only when `_sd` lists nothing.
 */
export const checkoutMandateSchema = z
  .looseObject({
    vct: z.literal("mandate.checkout.1"),
    checkout_jwt: z.string().optional(),
    checkout_hash: z.string(),
    _sd: z.array(z.string()).optional(),
    iat: epochSeconds.optional(),
    exp: epochSeconds.optional(),
  })
  .refine((mandate) => mandate.checkout_jwt !== undefined || hasDigests(mandate._sd), {
    // Also when other fields failed: the answer names every failing path at once.
    when: (payload) => isObject(payload.value),
    path: ["checkout_jwt"],
    message: "required unless selectively disclosed (a digest in _sd)",
  });

function hasDigests(sd: unknown): boolean {
  return Array.isArray(sd) && sd.length > 0;
}

export const openCheckoutMandateSchema = z.looseObject({
  vct: z.literal("mandate.checkout.open.1"),
  constraints: constraintArray(openCheckoutConstraintSchema, "checkout.line_items"),
  cnf: cnfSchema,
  iat: epochSeconds.optional(),
  exp: epochSeconds.optional(),
});

export type Amount = z.infer<typeof amountSchema>;
export type Merchant = z.infer<typeof merchantSchema>;
export type Jwk = z.infer<typeof jwkSchema>;
export type PaymentMandate = z.infer<typeof paymentMandateSchema>;
export type OpenPaymentMandate = z.infer<typeof openPaymentMandateSchema>;
export type CheckoutMandate = z.infer<typeof checkoutMandateSchema>;
export type OpenCheckoutMandate = z.infer<typeof openCheckoutMandateSchema>;
export type OpenPaymentConstraint = z.infer<typeof openPaymentConstraintSchema>;
export type OpenCheckoutConstraint = z.infer<typeof openCheckoutConstraintSchema>;

// --- vct <-> mandateType ---

export const MANDATE_TYPES = ["payment", "open_payment", "checkout", "open_checkout"] as const;
export type MandateType = (typeof MANDATE_TYPES)[number];

/** Exact identifiers, version suffix included: AP2 verifiers must not match loosely. */
export const VCT_BY_MANDATE_TYPE = {
  payment: "mandate.payment.1",
  open_payment: "mandate.payment.open.1",
  checkout: "mandate.checkout.1",
  open_checkout: "mandate.checkout.open.1",
} as const satisfies Record<MandateType, string>;

export function isMandateType(value: unknown): value is MandateType {
  return (MANDATE_TYPES as readonly unknown[]).includes(value);
}

/** The mandate type a `vct` names, or null for anything that is not one of the four. */
export function mandateTypeOfVct(vct: unknown): MandateType | null {
  return MANDATE_TYPES.find((type) => VCT_BY_MANDATE_TYPE[type] === vct) ?? null;
}

/** A mandate validated against the schema of its type, tagged with that type. */
export type ValidMandate =
  | { type: "payment"; mandate: PaymentMandate }
  | { type: "open_payment"; mandate: OpenPaymentMandate }
  | { type: "checkout"; mandate: CheckoutMandate }
  | { type: "open_checkout"; mandate: OpenCheckoutMandate };

export type MandateValidation =
  | { ok: true; value: ValidMandate }
  | { ok: false; issues: z.core.$ZodIssue[] };

/** Validates `mandate` against the schema of `type`: the tagged mandate, or every issue found. */
export function validateMandate(type: MandateType, mandate: unknown): MandateValidation {
  switch (type) {
    case "payment":
      return tagged(type, paymentMandateSchema.safeParse(mandate));
    case "open_payment":
      return tagged(type, openPaymentMandateSchema.safeParse(mandate));
    case "checkout":
      return tagged(type, checkoutMandateSchema.safeParse(mandate));
    case "open_checkout":
      return tagged(type, openCheckoutMandateSchema.safeParse(mandate));
  }
}

function tagged<T extends MandateType, M>(type: T, result: z.ZodSafeParseResult<M>) {
  return result.success
    ? { ok: true as const, value: { type, mandate: result.data } }
    : { ok: false as const, issues: result.error.issues };
}
