import type { Env } from "../env";
import { signer } from "../signing/signer";
import type { RiskModelRow } from "./records";

/** The model card's `typ`: a card is never mistaken for another signed payload. */
export const MODEL_CARD_TYP = "risk-model-card+jwt";

/**
 * What a model card states (docs/risk-model.md, "The model card"): which model of which org
 * and mode, its status and version at this step, what it was trained on (as of, label delay,
 * training window), the digest of its parameters, its counts and its held-out metrics without
 * the calibration table, the curves and `caught`. Null until training has produced them.
 */
export function cardClaims(orgId: string, row: RiskModelRow, iat: number) {
  const metrics = row.metrics as Record<string, unknown> | null;
  // The headline numbers: the tables and curves (pictures of the same slice) stay off the card.
  const {
    calibration: _calibration,
    roc: _roc,
    pr: _pr,
    caught: _caught,
    ...headline
  } = metrics ?? {};
  return {
    model_id: row.id,
    org_id: orgId,
    livemode: row.livemode,
    status: row.status,
    version: row.version,
    as_of: row.asOf.toISOString(),
    label_delay: row.labelDelaySeconds,
    training_window: row.trainingWindowSeconds,
    params_digest: row.paramsDigest,
    counts: row.counts ?? null,
    metrics: metrics ? headline : null,
    iat,
  };
}

/**
 * The signed model card of `row` as it stands (each lifecycle step signs one: created,
 * trained or failed, activated, shadowed, retired): a compact JWS by the service's key,
 * verifiable with GET /.well-known/jwks.json.
 */
export async function signCard(env: Env, orgId: string, row: RiskModelRow): Promise<string> {
  const claims = cardClaims(orgId, row, Math.floor(Date.now() / 1000));
  return (await signer(env)).signClaims(claims, MODEL_CARD_TYP);
}

/** The row with its card signed for the status it is in. */
export async function withCard(env: Env, orgId: string, row: RiskModelRow): Promise<RiskModelRow> {
  return { ...row, card: await signCard(env, orgId, row) };
}
