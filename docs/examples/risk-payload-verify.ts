/**
 * Verifying an agent-risk Risk Payload downstream (docs/assess.md, "Verifying a Risk Payload"),
 * as the merchant or PSP that receives the forwarded mandate does: with jose, the service's key
 * set (fetched by you from `<issuer>/.well-known/jwks.json`, cached up to an hour), and what you
 * expect: the service's origin, your own identifier, the mode, and optionally the org.
 */
import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";

export interface Expected {
  /** The service's public origin, e.g. `https://risk.example.com`: the payload's `iss`. */
  issuer: string;
  /** Your own identifier, as the agent named you in the request's `audience`: the `aud`. */
  audience: string;
  /** A live payment accepts only a live verdict (`livemode: true`); a test system the reverse. */
  livemode: boolean;
  /** The assessing org's public log id, when you know which org must have assessed it. */
  logId?: string;
  /** The mandate as it was forwarded to you: its digest must be the payload's `mandate_hash`. */
  mandate?: Record<string, unknown>;
}

export interface RiskPayload extends JWTPayload {
  iss: string;
  aud: string;
  exp: number;
  jti: string;
  livemode: boolean;
  log_id: string;
  assessment_id: string;
  mandate_id: string;
  mandate_hash: string;
  kind: string;
  decision: "approve" | "review" | "deny";
  risk_score: number;
  risk_level: string;
  policy_version: number;
  agent_id: string | null;
}

/**
 * The payload's claims when every check passes; throws otherwise. Acting on `decision` is
 * yours: only `approve` is an approval, and a verdict is about one mandate, once (keep `jti`).
 */
export async function verifyRiskPayload(
  jws: string,
  keySet: JSONWebKeySet,
  expected: Expected,
  now: Date = new Date(),
): Promise<RiskPayload> {
  // Signature (EdDSA, a key of the set by `kid`), `typ`, `iss`, `aud` and `exp` (and `iat` not
  // in the future): a payload without `aud` was addressed to no one, and is refused here.
  const { payload } = await jwtVerify(jws, createLocalJWKSet(keySet), {
    algorithms: ["EdDSA"],
    typ: "risk-payload+jwt",
    issuer: expected.issuer,
    audience: expected.audience,
    requiredClaims: ["exp", "iat", "jti"],
    currentDate: now,
  });
  const claims = payload as RiskPayload;
  if (claims.livemode !== expected.livemode) throw new Error("risk payload: wrong mode");
  if (expected.logId !== undefined && claims.log_id !== expected.logId) {
    throw new Error("risk payload: assessed by another organization");
  }
  if (expected.mandate && (await mandateHash(expected.mandate)) !== claims.mandate_hash) {
    throw new Error("risk payload: signed for another mandate");
  }
  return claims;
}

/**
 * `sha256:<hex>` of the RFC 8785 form of the forwarded mandate without the service's own
 * `risk_data["agent-risk"]`, and without `risk_data` if that leaves it empty.
 */
export async function mandateHash(forwarded: Record<string, unknown>): Promise<string> {
  const mandate = structuredClone(forwarded);
  const riskData = mandate.risk_data;
  if (typeof riskData === "object" && riskData !== null && !Array.isArray(riskData)) {
    const rest = { ...(riskData as Record<string, unknown>) };
    delete rest["agent-risk"];
    if (Object.keys(rest).length === 0) delete mandate.risk_data;
    else mandate.risk_data = rest;
  }
  const bytes = new TextEncoder().encode(canonical(mandate));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** RFC 8785: members sorted by UTF-16 code units; ECMAScript's number and string forms. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(",")}}`;
}
