import { z } from "@hono/zod-openapi";
import { canonicalize } from "#audit/canonical";
import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import { ApiError } from "../errors";
import { hasLoneSurrogate, withUnicodePattern } from "../schemas/common";
import { HttpSignatureRequest } from "../schemas/http-signature";
import {
  ACTION_KINDS,
  type ActionKind,
  ARTIFACT_NAMES,
  type ArtifactName,
} from "../schemas/vocabulary";
import { type A2ABinding, a2aBinding } from "./a2a-binding";
import {
  isMandateType,
  MANDATE_TYPES,
  type MandateType,
  mandateTypeOfVct,
  VCT_BY_MANDATE_TYPE,
  validateMandate,
} from "./ap2";
import {
  checkSubmittedMandate,
  PresentationSchema,
  type PresentedCredential,
  presentCredential,
} from "./ap2-credential";
import { actionFacts, ap2Facts, type MandateFacts, withoutServiceRiskData } from "./facts";
import { type PresentedHttpSignature, parsePresented } from "./http-signature/presented";
import { type IssueDetail, unstorableAt } from "./storable";
import { CheckoutTelemetry } from "./telemetry";

export type { MandateType } from "./ap2";
export type { MandateFacts } from "./facts";

export interface ParsedAssessRequest {
  kind: ActionKind;
  /** Null for kinds other than `ap2_payment`. */
  mandateType: MandateType | null;
  /** The mandate exactly as submitted, unknown fields included. */
  mandate: Record<string, unknown>;
  a2a: A2ABinding | null;
  idempotencyKey: string | null;
  /** An explicit reference to the acting agent (the weakest identity evidence). */
  agentId: string | null;
  /** Who will check the Risk Payload: its `aud` claim; null for none. */
  audience: string | null;
  facts: MandateFacts;
  /** The AP2 credential the mandate came from, not yet verified; null for decoded JSON. */
  credential: PresentedCredential | null;
  /**
   * The test clock the assessment runs at (test keys only, docs/history.md): its frozen time
   * is the assessment's `created`, every window's end, the labels known and the payload's
   * `iat`. Part of the idempotency identity: another clock is another request.
   */
  testClock?: string | null;
  /**
   * The other rails' artefacts to answer beside the assessment (docs/rails.md), each once, in
   * ARTIFACT_NAMES order. Never part of the idempotency identity: asking for an artefact is
   * not another request.
   */
  artifacts?: ArtifactName[];
  /**
   * ACP checkout telemetry (`risk_data`): read for the device and network signals, never
   * stored, never part of the idempotency identity (it describes the call, not the action).
   */
  telemetry?: CheckoutTelemetry | null;
  /**
   * The agent's HTTP message signature as sent (`http_signature`) and as parsed, not yet
   * verified (docs/http-signatures.md); null or absent without one. Part of the idempotency
   * identity: another signature is another request.
   */
  httpSignature?: { sent: HttpSignatureRequest; presented: PresentedHttpSignature } | null;
}

/** Identifiers from another system: bounded, and free of control characters (logs, SQL text). */
function foreignId(max: number) {
  return withUnicodePattern(
    z.string().min(1).max(max),
    /^\P{Cc}*$/u,
    "must not contain control characters",
  ).refine((text) => !hasLoneSurrogate(text), "must not contain a lone surrogate");
}

const a2aBlockSchema = z.strictObject({
  task_id: foreignId(256).optional(),
  context_id: foreignId(256).optional(),
  agent_card_ref: foreignId(2048).optional(),
  a2a_version: z.string().max(16).optional().openapi({ description: "`0.3` or `1.0`" }),
});

/** RFC 3986 scheme and colon: RFC 7519 wants an `aud` holding a `:` to be a URI. */
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** The payment mandate of the OpenAPI examples (`AssessRequest`, `AssessResponse`). */
export const EXAMPLE_MANDATE = {
  vct: "mandate.payment.1",
  transaction_id: "NivWhuqfzcvZNapvIEJ2-3tsdQLkiuIcye2g46WVgX8",
  payee: { id: "merchant_1", name: "Demo Merchant", website: "https://demo-merchant.example" },
  payment_amount: { amount: 19900, currency: "USD" },
  payment_instrument: { id: "pm_card_4242", type: "card", description: "Card ending 4242" },
};

/**
 * The body of `POST /v1/assess`, the schema parseAssessRequest validates with (and the OpenAPI
 * document shows). Strict: a misspelt optional field (`mandate_type`, `idempotencyKey`) must
 * not pass silently.
 */
export const AssessRequest = z
  .strictObject({
    mandate: z
      .record(z.string(), z.unknown(), { error: () => "must be a JSON object" })
      .optional()
      .openapi({
        additionalProperties: true,
        description:
          "For `ap2_payment` an AP2 v0.2 mandate; for other kinds any object. Required " +
          "without `credential`; beside one, it must equal the credential's leaf payload",
      }),
    credential: z
      .string()
      .min(1)
      .optional()
      .openapi({
        description:
          "An AP2 v0.2 credential: the compact SD-JWT delegation chain as the AP2 client sends " +
          "it (`ap2_payment` only). The mandate assessed is its verified leaf's payload",
      }),
    presentation: PresentationSchema.optional(),
    kind: z
      .enum(ACTION_KINDS)
      .default("ap2_payment")
      .openapi({ description: "Default `ap2_payment`" }),
    // Any string here: an unknown value is `unknown_mandate_type`, not a malformed request.
    mandateType: z.string().optional().openapi({
      description: "`checkout`, `payment`, `open_checkout` or `open_payment`; else from `vct`",
    }),
    a2a: a2aBlockSchema.optional(),
    agent_id: z.uuid().optional().openapi({
      description: "The acting agent, when the mandate carries no key and no card names it",
    }),
    audience: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[\x21-\x7e]*$/, "must be printable ASCII without spaces")
      .refine(
        (text) => !text.includes(":") || URI_SCHEME.test(text),
        "contains ':', so must be a URI: a scheme first (https://psp.example, urn:psp:acme)",
      )
      .optional()
      .openapi({
        description:
          "Who will check the Risk Payload (the merchant or PSP): its `aud` claim. Part of the " +
          "request's idempotency identity",
        example: "https://psp.example",
      }),
    // Visible ASCII only: keys are compared byte for byte, so no lookalikes or stray whitespace.
    idempotency_key: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[\x21-\x7e]*$/, "must be printable ASCII without spaces")
      .optional(),
    http_signature: HttpSignatureRequest.optional(),
    test_clock: z
      .uuid()
      .optional()
      .openapi({
        description:
          "A test clock (`POST /v1/test-clocks`; test keys only): the assessment is made at its " +
          "frozen time",
      }),
    risk_data: CheckoutTelemetry.optional(),
    artifacts: z
      .array(z.enum(ARTIFACT_NAMES))
      .max(ARTIFACT_NAMES.length * 4)
      .optional()
      .openapi({
        description:
          "The other rails' artefacts to answer under `artifacts`, derived from this " +
          "assessment and signed: `x402` (a `risk-check` RiskCheckResult), `acp` (ACP " +
          "delegate-payment `risk_signals`). Not part of the idempotency identity; without " +
          "it the answer has no `artifacts`",
        example: ["x402"],
      }),
  })
  .openapi("AssessRequest", {
    example: {
      kind: "ap2_payment",
      mandate: EXAMPLE_MANDATE,
      audience: "https://psp.example",
      idempotency_key: "order-1042",
    },
  });

/**
 * Parses the body of `POST /v1/assess` and the `A2A-Version` header (null when absent).
 * Throws ApiError: 400 for a malformed request, an unknown or contradicted mandate type, or an
 * unsupported or mismatched A2A version; 422 `mandate_invalid` naming every failing path when
 * an AP2 mandate fails its schema. The 400s come first: a request is judged before its mandate.
 */
export function parseAssessRequest(body: unknown, a2aHeader: string | null): ParsedAssessRequest {
  if (!isObject(body)) {
    throw new ApiError("invalid_request", [{ path: "", message: "must be a JSON object" }]);
  }
  const parsed = AssessRequest.safeParse(body);
  if (!parsed.success) throw new ApiError("invalid_request", detailsOf(parsed.error.issues));
  const request = parsed.data;
  checkCredentialFields(request);
  // The submitted object itself, not zod's copy: "as submitted" down to an own `__proto__` key.
  const submitted = body.mandate as Record<string, unknown> | undefined;
  if (submitted !== undefined) {
    const unstorable = unstorableAt(submitted, "mandate", 0);
    if (unstorable) throw new ApiError("invalid_request", [unstorable]);
  }
  const a2a = a2aBinding(request.a2a, a2aHeader);
  const base = {
    kind: request.kind,
    mandate: submitted ?? {},
    a2a,
    idempotencyKey: request.idempotency_key ?? null,
    agentId: request.agent_id ?? null,
    audience: request.audience ?? null,
    credential: null,
    testClock: request.test_clock ?? null,
    artifacts: ARTIFACT_NAMES.filter((name) => request.artifacts?.includes(name)),
    telemetry: request.risk_data ?? null,
    httpSignature: request.http_signature
      ? { sent: request.http_signature, presented: parsePresented(request.http_signature) }
      : null,
  };
  if (request.credential !== undefined) {
    return credentialRequest(request.credential, request, submitted, base);
  }
  const mandate = base.mandate;

  if (request.kind !== "ap2_payment") {
    if (request.mandateType !== undefined) {
      throw new ApiError("invalid_request", [
        { path: "mandateType", message: "applies only to kind ap2_payment" },
      ]);
    }
    return { ...base, mandateType: null, facts: actionFacts(mandate) };
  }

  const type = mandateTypeOf(request.mandateType, mandate);
  const validation = validateMandate(type, mandate);
  if (!validation.ok)
    throw new ApiError("mandate_invalid", detailsOf(validation.issues, "mandate"));
  return { ...base, mandateType: type, facts: ap2Facts(validation.value) };
}

type ParsedBody = z.infer<typeof AssessRequest>;

/** 400 for what a credential request cannot be: another kind, or no mandate at all. */
function checkCredentialFields(request: ParsedBody): void {
  if (request.credential === undefined) {
    if (request.mandate === undefined) {
      throw new ApiError("invalid_request", [{ path: "mandate", message: "required" }]);
    }
    if (request.presentation !== undefined) {
      throw new ApiError("invalid_request", [
        { path: "presentation", message: "applies only with a credential" },
      ]);
    }
    return;
  }
  if (request.kind !== "ap2_payment") {
    throw new ApiError("invalid_request", [
      { path: "credential", message: "applies only to kind ap2_payment" },
    ]);
  }
}

/**
 * A request with a credential: the mandate is the credential's leaf payload (read here without
 * trust, verified after the context round trip), its type from the leaf's `vct`; a `mandate`
 * sent beside it must be that payload. A leaf that cannot be read is assessed all the same (the
 * verifier refuses it): its mandate is empty and its type unknown; so is a leaf outside its
 * AP2 v0.2 schema (`leafIssue`), with no facts read from it.
 */
function credentialRequest(
  credential: string,
  request: ParsedBody,
  submitted: Record<string, unknown> | undefined,
  base: Omit<ParsedAssessRequest, "mandateType" | "facts">,
): ParsedAssessRequest {
  const presented = presentCredential(credential, request.presentation ?? {});
  if (submitted !== undefined) checkSubmittedMandate(submitted, presented.leaf);
  const leaf = presented.leaf;
  const unstorable = leaf === null ? null : unstorableAt(leaf, "credential.mandate", 0);
  if (unstorable) throw new ApiError("invalid_request", [unstorable]);
  const withCredential = { ...base, credential: presented };
  if (leaf === null) {
    return { ...withCredential, mandate: {}, mandateType: null, facts: actionFacts({}) };
  }
  const type = mandateTypeOf(request.mandateType, leaf);
  const validation = validateMandate(type, leaf);
  if (!validation.ok) {
    // Assessed all the same, and refused: a chain is judged by its verdict, which the caller
    // needs signed (a truncated chain ends in an open mandate, which no closed schema fits).
    const [issue] = detailsOf(validation.issues, "mandate");
    const invalid = { ...presented, leafIssue: issue ?? null };
    return {
      ...base,
      credential: invalid,
      mandate: leaf,
      mandateType: type,
      facts: actionFacts({}),
    };
  }
  return { ...withCredential, mandate: leaf, mandateType: type, facts: ap2Facts(validation.value) };
}

/**
 * The type to validate against: the one `vct` names, checked against an explicit
 * `mandateType`. With neither, a PaymentMandate (the spec's default), whose schema then reports
 * the missing `vct` as a 422 like any other missing required field.
 */
function mandateTypeOf(
  declared: string | undefined,
  mandate: Record<string, unknown>,
): MandateType {
  if (declared !== undefined && !isMandateType(declared)) {
    throw new ApiError("unknown_mandate_type", [
      { path: "mandateType", message: `must be one of ${MANDATE_TYPES.join(", ")}` },
    ]);
  }
  if (mandate.vct === undefined) return declared ?? "payment";
  const named = mandateTypeOfVct(mandate.vct);
  if (named === null) {
    throw new ApiError("unknown_mandate_type", [
      {
        path: "mandate.vct",
        message: `must be one of ${Object.values(VCT_BY_MANDATE_TYPE).join(", ")}`,
      },
    ]);
  }
  if (declared !== undefined && declared !== named) {
    throw new ApiError("mandate_type_mismatch", [
      { path: "mandateType", message: `is ${declared}, but mandate.vct names ${named}` },
    ]);
  }
  return named;
}

/**
 * Zod issues as details, one per failing path, under `prefix`. Unknown keys get one entry each,
 * at their own path, so a client sees which field to remove.
 */
function detailsOf(issues: readonly z.core.$ZodIssue[], prefix?: string): IssueDetail[] {
  const at = (path: readonly PropertyKey[]) =>
    [...(prefix === undefined ? [] : [prefix]), ...path.map(String)].join(".");
  return issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: at([...issue.path, key]), message: "unknown field" }))
      : [{ path: at(issue.path), message: issue.message }],
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The idempotency hash: lowercase hex SHA-256 of the RFC 8785 form of
 * `{kind, mandateType, mandate, agent_id?, agent_card_ref?, audience?}` (docs/assess.md,
 * "Idempotency", spells it out), where the mandate is taken without the service's own
 * `risk_data["agent-risk"]` (and without a `risk_data` left empty), and an optional member is
 * present only when the request has it. A client that forwards back the mandate it received,
 * payload injected, therefore gets the assessment it already has, rather than a second one
 * scored on the service's own output. What changes the verdict or who may rely on it is hashed:
 * the identity evidence (another agent is another request) and the audience (a payload signed
 * for one verifier is not answered to a request naming another). The idempotency key and the
 * rest of the A2A binding are not: they describe the call, not the action. The mode is not in
 * the hash: the caller keeps it apart (pipeline.ts, `contentHashOf`).
 */
export function mandateCanonicalHash(
  request: Pick<ParsedAssessRequest, "kind" | "mandateType" | "mandate"> &
    Partial<Pick<ParsedAssessRequest, HashedParts>>,
): string {
  return toHex(sha256(utf8(canonicalize(idempotencyIdentity(request)))));
}

type HashedParts = "agentId" | "a2a" | "audience" | "credential" | "testClock" | "httpSignature";

/** The object mandateCanonicalHash hashes. */
function idempotencyIdentity(
  request: Pick<ParsedAssessRequest, "kind" | "mandateType" | "mandate"> &
    Partial<Pick<ParsedAssessRequest, HashedParts>>,
): Record<string, unknown> {
  const agentId = request.agentId ?? null;
  const cardRef = request.a2a?.agent_card_ref ?? null;
  const audience = request.audience ?? null;
  const credential = request.credential ?? null;
  const testClock = request.testClock ?? null;
  const signature = request.httpSignature?.sent ?? null;
  return {
    kind: request.kind,
    mandateType: request.mandateType,
    // A credential is hashed as presented (its mandate is its own), never as its payload:
    // decoded JSON equal to a verified leaf is another request.
    ...(credential === null
      ? { mandate: withoutServiceRiskData(request.mandate) }
      : { credential: credential.chain.credential, presentation: credential.presentation }),
    ...(agentId === null ? {} : { agent_id: agentId }),
    ...(cardRef === null ? {} : { agent_card_ref: cardRef }),
    ...(audience === null ? {} : { audience }),
    ...(testClock === null ? {} : { test_clock: testClock }),
    ...(signature === null ? {} : { http_signature: signature }),
  };
}
