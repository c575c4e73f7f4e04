/**
 * A Risk Payload verified here, in the browser, with the client package: its EdDSA signature
 * against the service's published keys (/.well-known/jwks.json), nothing taken on the API's
 * word. A payload past its `exp` (they are short-lived by design) is checked again as of its
 * issue time, so an old decision still shows whether its signature holds.
 */
import { type RiskPayloadClaims, VerificationError, verifyRiskPayload } from "@agent-risk/client";
import { decodeJwt } from "jose";
import { useEffect, useState } from "preact/hooks";
import { currentMode } from "../api";
import { when } from "../format";

/** What the page shows, which the signed claims must say too, or the check fails. */
export interface Expected {
  assessmentId: string;
  decision: string;
  livemode: boolean;
}

type Verdict =
  | { state: "checking" }
  | { state: "verified"; claims: RiskPayloadClaims; expired: boolean }
  | { state: "failed"; code: string; message: string };

const JWKS_URL = new URL("/.well-known/jwks.json", location.origin);

/**
 * A valid signature over another assessment's claims is no proof of this one: the signed
 * assessment, decision and mode must be the ones on the screen.
 */
function mismatch(claims: RiskPayloadClaims, expected: Expected): Verdict | undefined {
  const differs = [
    claims.assessment_id !== expected.assessmentId ? "assessment_id" : null,
    claims.sub !== expected.assessmentId ? "sub" : null,
    claims.decision !== expected.decision ? "decision" : null,
    claims.livemode !== expected.livemode ? "livemode" : null,
  ].filter((name) => name !== null);
  if (differs.length === 0) return undefined;
  return {
    state: "failed",
    code: "claims_mismatch",
    message: `the signed ${differs.join(", ")} differ from the assessment shown`,
  };
}

async function check(jws: string, expected: Expected): Promise<Verdict> {
  const verdict = await verify(jws);
  if (verdict.state !== "verified") return verdict;
  return mismatch(verdict.claims, expected) ?? verdict;
}

async function verify(jws: string): Promise<Verdict> {
  const options = { jwksUrl: JWKS_URL, allowTestMode: currentMode() === "test" };
  try {
    return { state: "verified", claims: await verifyRiskPayload(jws, options), expired: false };
  } catch (error) {
    if (!(error instanceof VerificationError)) throw error;
    if (error.code !== "expired")
      return { state: "failed", code: error.code, message: error.message };
    const iat = decodeJwt(jws).iat;
    if (typeof iat !== "number")
      return { state: "failed", code: error.code, message: error.message };
    const claims = await verifyRiskPayload(jws, { ...options, currentDate: new Date(iat * 1000) });
    return { state: "verified", claims, expired: true };
  }
}

export function PayloadCheck({
  jws,
  title,
  expected,
}: {
  jws: string;
  title: string;
  expected: Expected;
}) {
  const [verdict, setVerdict] = useState<Verdict>({ state: "checking" });
  useEffect(() => {
    let current = true;
    setVerdict({ state: "checking" });
    check(jws, expected).then(
      (result) => current && setVerdict(result),
      (error: unknown) =>
        current &&
        setVerdict({
          state: "failed",
          code: error instanceof VerificationError ? error.code : "error",
          message: error instanceof Error ? error.message : String(error),
        }),
    );
    return () => {
      current = false;
    };
  }, [jws, expected.assessmentId, expected.decision, expected.livemode]);
  return (
    <div class="payload-check">
      <h3>{title}</h3>
      <p role="status" aria-live="polite">
        {verdict.state === "checking" ? (
          "Verifying the signature…"
        ) : verdict.state === "verified" ? (
          <span class="verified">Signature verified</span>
        ) : (
          <span class="unverified">
            Signature not verified: {verdict.code} ({verdict.message})
          </span>
        )}
      </p>
      {verdict.state === "verified" ? (
        <dl class="facts">
          <dt>Signed decision</dt>
          <dd>{verdict.claims.decision}</dd>
          <dt>Issuer</dt>
          <dd>{verdict.claims.iss}</dd>
          <dt>Issued</dt>
          <dd>{when(new Date(verdict.claims.iat * 1000).toISOString())}</dd>
          <dt>Expires</dt>
          <dd>
            {when(new Date(verdict.claims.exp * 1000).toISOString())}
            {verdict.expired ? " (expired: checked as of its issue time)" : ""}
          </dd>
          <dt>Mandate hash</dt>
          <dd>
            <code>{verdict.claims.mandate_hash}</code>
          </dd>
          <dt>Log id</dt>
          <dd>
            <code>{verdict.claims.log_id}</code>
          </dd>
        </dl>
      ) : null}
      <details>
        <summary>The compact JWS</summary>
        <pre>{jws}</pre>
      </details>
    </div>
  );
}
