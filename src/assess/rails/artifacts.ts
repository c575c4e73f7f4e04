import type { JWTPayload } from "jose";
import { type Env, publicBaseUrl } from "../../env";
import { ApiError } from "../../errors";
import type { Artifacts } from "../../schemas/rails";
import type { ArtifactName } from "../../schemas/vocabulary";
import { signer } from "../../signing/signer";
import type { Outcome } from "../outcome";
import { ACP_SIGNALS_TYP, acpClaims, acpRiskSignals } from "./acp";
import { verdictFacts } from "./verdict-facts";
import { RISK_CHECK_TYP, riskCheckClaims, riskCheckResult } from "./x402";

/** The key that signs every artefact: its `kid`, its `alg`, and the signing itself. */
export interface ArtifactKey {
  kid: string;
  alg: "ES256";
  es256: { signClaims(claims: JWTPayload, typ: string): Promise<string> };
}

/**
 * The key the ADR gives every new artefact (issue 42, point 1): the one place that names it.
 * A missing or unusable key is the signer's 503, never an unsigned artefact.
 */
export async function artifactKey(env: Env): Promise<ArtifactKey> {
  const { es256 } = await signer(env);
  if (es256.kid === null) throw new ApiError("signing_key_unavailable");
  return { kid: es256.kid, alg: "ES256", es256 };
}

/**
 * The artefacts a request named, derived from the stored outcome and signed after the commit
 * (the ADR, point 2): a replay restates the same claims, and asking for an artefact is never
 * another request. Each is signed on its own, in parallel.
 */
export async function signedArtifacts(
  env: Env,
  outcome: Outcome,
  names: readonly ArtifactName[],
): Promise<Artifacts> {
  const base = publicBaseUrl(env);
  const jwksUrl = `${base}/.well-known/jwks.json`;
  const facts = verdictFacts(outcome, base);
  const key = await artifactKey(env);
  const made = await Promise.all(
    names.map(async (name): Promise<Artifacts> => {
      if (name === "x402") {
        const claims = riskCheckClaims(facts);
        const jws = await key.es256.signClaims(claims, RISK_CHECK_TYP);
        return { x402: riskCheckResult(claims, jws, jwksUrl) };
      }
      const risk_signals = acpRiskSignals(facts);
      const jws = await key.es256.signClaims(acpClaims(facts, base, risk_signals), ACP_SIGNALS_TYP);
      return { acp: { risk_signals, jws, jwks_url: jwksUrl } };
    }),
  );
  return Object.assign({}, ...made);
}
