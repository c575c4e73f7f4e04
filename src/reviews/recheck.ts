/**
 * Approving a review of a verified AP2 credential checks again what can have changed since the
 * verdict (docs/reviews.md, "Re-checked on approval"): an approval signed now must not rest on a
 * revoked issuer, a revoked key or agent, or a lapsed mandate. The single-use and budget state
 * is the ledger object's, judged where it sequences the resolution (close.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import { type AnchorRow, anchorsOf, type IssuerRow } from "../ap2-credentials/issuers";
import { isPinned, pinKey, thumbprint } from "../ap2-credentials/keys";
import { DEFAULT_SKEW_SECONDS } from "../ap2-credentials/validity";
import type { Tenant } from "../auth/tenant";
import { agentKeys, agents, credentialIssuers, reviews } from "../db/schema";
import { ApiError } from "../errors";
import { ReviewRecheck } from "../schemas/reviews";
import type { RiskPayloadClaims } from "../schemas/risk-payload";
import type { AGENT_STATUSES } from "../schemas/vocabulary";
import type { ReviewRow } from "./records";

/**
 * Why a re-check refused, in the assessment's own words where it has them (its rejection keys
 * and signals), and `not_recheckable` for an item that kept no terms to re-check with.
 */
export type RecheckFailure =
  | "not_recheckable"
  | "credential_untrusted_issuer"
  | "key_revoked"
  | "key_unregistered"
  | "agent_revoked"
  | "agent_suspended"
  | "credential_expired"
  | "credential_not_yet_valid"
  | "mandate_expired";

/**
 * What the re-check reads now, joined to the item by its terms in the read that finds it
 * (queue.ts): the issuer (its status and keys, as trust anchors are built), the holder key's
 * registration, and the item's agent. Each is null when the join finds no row.
 */
export const standingColumns = {
  issuer: {
    status: credentialIssuers.status,
    id: credentialIssuers.id,
    jwks: credentialIssuers.jwks,
    jwksUrl: credentialIssuers.jwksUrl,
    fetchedJwks: credentialIssuers.fetchedJwks,
    fetchedAt: credentialIssuers.fetchedAt,
    etag: credentialIssuers.etag,
    fetchAttemptedAt: credentialIssuers.fetchAttemptedAt,
    networkDigests: credentialIssuers.networkDigests,
    requiredConstraints: credentialIssuers.requiredConstraints,
    statusRequired: credentialIssuers.statusRequired,
  },
  holderKey: { status: agentKeys.status },
  agent: { status: agents.status },
};

/** The joins `standingColumns` read from (row-level security keeps them to the caller's org). */
export const standingJoins = {
  issuer: eq(credentialIssuers.id, sql`(${reviews.recheck}->>'issuer')::uuid`),
  holderKey: and(
    eq(agentKeys.orgId, reviews.orgId),
    eq(agentKeys.thumbprint, sql`${reviews.recheck}->>'holder'`),
  ),
  agent: eq(agents.id, reviews.agentId),
};

export interface Standing {
  issuer: (AnchorRow & { status: IssuerRow["status"] }) | null;
  holderKey: { status: "active" | "revoked" } | null;
  agent: { status: (typeof AGENT_STATUSES)[number] } | null;
}

/** Worse to the right: approving refuses a standing worse now than when the verdict was made. */
const KEY_RANK = { active: 0, unregistered: 1, revoked: 2 } as const;
const AGENT_RANK = { active: 0, suspended: 1, revoked: 2 } as const;

type Refused = { reason: RecheckFailure; message: string };

/**
 * Re-checks the approval of `review`: nothing to do (undefined) unless its assessment's payload
 * says `mandate_verified`; otherwise the time the re-check held (ISO 8601), or 409
 * `review_recheck_failed` with `{reason, message}`, the first cause in the order checked:
 * issuer, holder key, agent, the chain's time window, the mandate's own expiry.
 */
export async function recheckApproval(
  tenant: Tenant,
  review: ReviewRow,
  assessmentJws: string,
  standing: Standing,
): Promise<string | undefined> {
  // Our own payload, read back from our own row: its signature was checked when it was made.
  if ((decodeJwt(assessmentJws) as RiskPayloadClaims).mandate_verified !== true) return undefined;
  const at = Date.now();
  const terms = ReviewRecheck.safeParse(review.recheck);
  const refused = terms.success
    ? await firstRefusal(tenant, terms.data, standing, at)
    : {
        reason: "not_recheckable" as const,
        message:
          "the item opened before approvals re-checked credentials and kept nothing to " +
          "re-check it with: it can only be denied",
      };
  if (refused) throw new ApiError("review_recheck_failed", refused);
  return new Date(at).toISOString();
}

async function firstRefusal(
  tenant: Tenant,
  terms: ReviewRecheck,
  standing: Standing,
  at: number,
): Promise<Refused | null> {
  const { issuer } = standing;
  if (issuer?.status !== "active") {
    return refusal("credential_untrusted_issuer", "the credential's issuer has been revoked");
  }
  // The issuer's keys as an assessment would trust them now (a JWKS URL's cache policy).
  const anchors = await anchorsOf(tenant, tenant.env, [issuer]);
  const kept = anchors.keys.some(({ jwk }) => {
    const key = pinKey(jwk);
    return isPinned(key) && thumbprint(key) === terms.rootKey;
  });
  if (!kept) {
    return refusal(
      "credential_untrusted_issuer",
      "the credential's issuer no longer has the key that signed its root",
    );
  }
  const key = standing.holderKey?.status ?? "unregistered";
  if (key !== "active" && KEY_RANK[key] > KEY_RANK[terms.holderKey]) {
    const what = key === "revoked" ? "has been revoked" : "is no longer registered";
    return refusal(`key_${key}`, `the key that signed the credential's last hop ${what}`);
  }
  if (terms.agentStatus !== null) {
    // Agents are never deleted: one the join does not find is refused like a revoked one.
    const agent = standing.agent?.status ?? "revoked";
    if (agent !== "active" && AGENT_RANK[agent] > AGENT_RANK[terms.agentStatus]) {
      return refusal(`agent_${agent}`, `the agent has been ${agent}`);
    }
  }
  // `checkValidity`'s rule and skew (src/ap2-credentials/validity.ts), over the chain's window.
  const now = Math.floor(at / 1000);
  if (terms.notAfter !== null && now > terms.notAfter + DEFAULT_SKEW_SECONDS) {
    return refusal(
      "credential_expired",
      `the credential expired at ${iso(terms.notAfter)} (its earliest exp; ` +
        `${DEFAULT_SKEW_SECONDS} s of clock skew allowed)`,
    );
  }
  if (terms.notBefore !== null && terms.notBefore > now + DEFAULT_SKEW_SECONDS) {
    return refusal(
      "credential_not_yet_valid",
      `the credential is not valid before ${iso(terms.notBefore)}`,
    );
  }
  // The risk model's rule (src/assess/mandate-bounds.ts): not accepted on or after `exp`.
  const exp = terms.mandateExpiresAt;
  if (exp !== null && at >= exp * 1000) {
    return refusal("mandate_expired", `the mandate expired at ${iso(exp)} (exp ${exp})`);
  }
  return null;
}

function refusal(reason: RecheckFailure, message: string): Refused {
  return { reason, message };
}

/** A NumericDate in a sentence; one no Date can hold (a signer's choice) as the number. */
function iso(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? `${seconds}` : date.toISOString();
}
