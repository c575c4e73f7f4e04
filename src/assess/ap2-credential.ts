import { z } from "@hono/zod-openapi";
import { canonicalize } from "#audit/canonical";
import { ChainMalformed, type ParsedChain, parseChain } from "../ap2-credentials/chain";
import { own } from "../ap2-credentials/claims";
import type { CredentialFailure } from "../ap2-credentials/failures";
import { type HopReading, readHop } from "../ap2-credentials/hops";
import { isPinned, pinKey, thumbprint } from "../ap2-credentials/keys";
import {
  type ChainVerdict,
  type PresentationInputs,
  type TrustAnchors,
  verifyChain,
} from "../ap2-credentials/verify";
import { ApiError } from "../errors";
import { withUnicodePattern } from "../schemas/common";
import { VCT_BY_MANDATE_TYPE } from "./ap2";
import { withoutServiceRiskData } from "./facts";
import type { Decision } from "./risk";
import { THRESHOLDS } from "./risk-model";
import { rejection } from "./signals";

/**
 * An AP2 credential (an SD-JWT delegation chain) presented to `POST /v1/assess`, read before
 * the context round trip: parsed, its mandates read without trust (the leaf becomes the
 * assessed mandate, the last delegated key the claimed holder), verified after the round trip
 * brought the trust anchors (docs/assess.md, "Assessing a credential").
 */

/** Bounded text from the caller; compared byte for byte by the verifier. */
const presented = (max: number) =>
  withUnicodePattern(
    z.string().min(1).max(max),
    /^\P{Cc}*$/u,
    "must not contain control characters",
  );

export const PresentationSchema = z
  .strictObject({
    aud: presented(2048).optional().openapi({
      description: "The audience this verifier issued: the last hop's `aud` must equal it",
    }),
    nonce: presented(1024).optional().openapi({
      description: "The challenge this verifier issued: the last hop's `nonce` must equal it",
    }),
    checkout_jwt: presented(65_536).optional().openapi({
      description: "The merchant's checkout JWT, whose hash the checkout constraints bind",
    }),
    open_checkout_hash: presented(1024).optional().openapi({
      description: "The open checkout mandate's hash a `payment.reference` constraint names",
    }),
  })
  .openapi("CredentialPresentation");
export type Presentation = z.infer<typeof PresentationSchema>;

export interface PresentedCredential {
  chain: ParsedChain;
  presentation: Presentation;
  /** The last hop's effective payload, read without trust; null when it cannot be read. */
  leaf: Record<string, unknown> | null;
  /**
   * RFC 7638 thumbprint of the key the chain says signed the last hop (the hop before's
   * `cnf.jwk`): a claim until the chain verifies, then the holder proven by possession.
   */
  claimedHolder: string | null;
  /** The first way the leaf fails its AP2 v0.2 schema; such a leaf is never accepted. */
  leafIssue?: { path: string; message: string } | null;
}

/**
 * Parses a credential and reads its mandates without trusting them. Throws ApiError 422
 * `credential_unparseable` (the chain cannot be split into hops, with the parser's details) and
 * 400 `unknown_mandate_type` (a readable hop names a `vct` that is not one of the four AP2 v0.2
 * types, exact with its version), as for decoded JSON.
 */
export function presentCredential(
  credential: string,
  presentation: Presentation,
): PresentedCredential {
  let chain: ParsedChain;
  try {
    chain = parseChain(credential);
  } catch (error) {
    if (error instanceof ChainMalformed) {
      throw new ApiError("credential_unparseable", error.details);
    }
    throw error;
  }
  const mandates = chain.hops.map((hop) => mandateOf(hop));
  mandates.forEach((mandate, i) => {
    if (mandate === null) return;
    const vct = own(mandate, "vct");
    if (!(Object.values(VCT_BY_MANDATE_TYPE) as unknown[]).includes(vct)) {
      throw new ApiError("unknown_mandate_type", [
        {
          path: `credential.hops[${i}].vct`,
          message: `must be one of ${Object.values(VCT_BY_MANDATE_TYPE).join(", ")}`,
        },
      ]);
    }
  });
  const last = chain.hops.length - 1;
  const delegating = last > 0 ? mandates[last - 1] : null;
  return {
    chain,
    presentation,
    leaf: mandates[last] ?? null,
    claimedHolder: delegating ? keyThumbprint(delegating) : null,
  };
}

function mandateOf(hop: ParsedChain["hops"][number]): Record<string, unknown> | null {
  try {
    const reading: HopReading | Error = readHop(hop);
    return reading instanceof Error ? null : reading.mandate;
  } catch {
    // An unreadable hop is the verifier's to refuse (it answers a failure, never throws).
    return null;
  }
}

function keyThumbprint(mandate: Record<string, unknown>): string | null {
  const cnf = own(mandate, "cnf");
  const jwk = typeof cnf === "object" && cnf !== null ? own(cnf as never, "jwk") : undefined;
  const key = pinKey(jwk);
  return isPinned(key) ? thumbprint(key) : null;
}

/**
 * 422 `mandate_mismatch` unless a `mandate` sent beside the credential is its leaf's payload
 * (both without the service's own `risk_data["agent-risk"]`, so the mandate this service
 * answered may be sent back with its credential).
 */
export function checkSubmittedMandate(
  submitted: Record<string, unknown>,
  leaf: Record<string, unknown> | null,
): void {
  const same =
    leaf !== null &&
    canonicalize(withoutServiceRiskData(submitted)) === canonicalize(withoutServiceRiskData(leaf));
  if (!same) {
    throw new ApiError("mandate_mismatch", [
      {
        path: "mandate",
        message: "is not the credential's leaf payload: send the credential alone, or its payload",
      },
    ]);
  }
}

/** The verifier's inputs from the presentation: only the members the caller gave. */
export function presentationInputs(presentation: Presentation): PresentationInputs {
  return { ...presentation };
}

/** The failures an assessment can report: the verifier's, and the ledger object's two. */
export type AssessedFailure = CredentialFailure | "already_consumed" | "budget_exceeded";

/** The Outcome's `credential`: what the chain proved. */
export const CredentialOutcome = z
  .object({
    verified: z.boolean(),
    reference: z.string().nullable().openapi({
      description: "base64url SHA-256 of the leaf JWS: AP2's receipt reference",
    }),
    issuer: z.string().nullable().openapi({ description: "The credential issuer's id" }),
    holder_thumbprint: z.string().nullable().openapi({
      description: "RFC 7638 thumbprint of the key that signed the last hop, once it verified",
    }),
    hops: z.number().int(),
    failure: z.string().nullable(),
  })
  .openapi("CredentialOutcome", {
    description: "What an AP2 credential proved; null for an assessment without one",
  });
export type CredentialOutcome = z.infer<typeof CredentialOutcome>;

/**
 * The verifier's verdict, refused when the chain verified but its leaf is outside its AP2 v0.2
 * schema (`constraint_violated`, constraint `mandate.schema`): what the service reads from a
 * mandate must be what the schema says it is.
 */
export function judgedVerdict(presented: PresentedCredential, verdict: ChainVerdict): ChainVerdict {
  const issue = presented.leafIssue;
  if (!verdict.verified || !issue) return verdict;
  return {
    ...verdict,
    verified: false,
    failure: "constraint_violated",
    detail: { constraint: "mandate.schema", message: `${issue.path} ${issue.message}` },
    spend: null,
  };
}

/** The Outcome's `credential` for a verifier's verdict (the ledger object may refuse it later). */
export function credentialOutcome(verdict: ChainVerdict): CredentialOutcome {
  return {
    verified: verdict.verified,
    reference: verdict.reference,
    issuer: verdict.issuerId,
    holder_thumbprint: verdict.holderThumbprint,
    hops: verdict.hops,
    failure: verdict.verified ? null : verdict.failure,
  };
}

/** 400 in live mode: a credential is verified against the verifier's own audience and nonce. */
export function requireLivePresentation(presented: PresentedCredential): void {
  const missing = (["aud", "nonce"] as const).filter((m) => !presented.presentation[m]);
  if (missing.length > 0) {
    throw new ApiError(
      "invalid_request",
      missing.map((member) => ({
        path: `presentation.${member}`,
        message: "required in live mode with a credential",
      })),
    );
  }
}

/** The verifier's verdict at the request's time, against the org's active trust anchors. */
export async function verifyPresented(
  presented: PresentedCredential,
  anchors: TrustAnchors | undefined,
  receivedAt: number,
): Promise<ChainVerdict> {
  const verified = await verifyChain(presented.chain, {
    anchors: anchors ?? { keys: [] },
    presentation: presentationInputs(presented.presentation),
    now: Math.floor(receivedAt / 1000),
  });
  const verdict = judgedVerdict(presented, verified);
  // The request's parse read the same hops; kept in step with the verifier all the same.
  if (!verdict.vctKnown) {
    throw new ApiError("unknown_mandate_type", [
      { path: "credential", message: verdict.detail?.message ?? "an unknown vct" },
    ]);
  }
  return verdict;
}

/** The model's approval turned into the ledger object's refusal of the spend: a denial. */
export function refusedDecision(decision: Decision, failure: AssessedFailure, description: string) {
  const score = Math.max(decision.risk_score, THRESHOLDS.deny);
  const reason = rejection(
    `credential_${failure}` as Parameters<typeof rejection>[0],
    `the credential is refused (${failure}): ${description}`,
  );
  return {
    ...decision,
    decision: "deny" as const,
    risk_level: "highest" as const,
    risk_score: score,
    reason: `Denied: ${reason.description}.`,
    rejection_reasons: [reason, ...decision.rejection_reasons],
    confidences: { ...decision.confidences, mandate_validity: 0 },
  };
}
