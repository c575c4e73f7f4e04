// From a trained model's fraud probability to what an assessment shows: the 0–100 risk_score
// (and so the decision, whose bands are 0–39 approve, 40–69 review, 70–100 deny) and the
// features that moved the probability most, for reason codes a person can read.

import { type BoostedTrees, boostedContributions } from "./boosting";
import { FEATURE_NAMES } from "./features";

/** The probabilities at which a model's alerts reach their target precision (from training). */
export interface ProbabilityThresholds {
  review: number;
  /** 1 (or more) means the model never denies: no threshold reached the deny precision. */
  deny: number;
}

/** The risk_score bands' lower edges. */
export interface ScoreThresholds {
  review: number;
  deny: number;
}

const SERVICE_BANDS: ScoreThresholds = { review: 40, deny: 70 };

/**
 * The risk_score of a fraud probability: piecewise linear and non-decreasing, so that the
 * score's bands are the model's thresholds. [0, t_review) → [0, 40), [t_review, t_deny) →
 * [40, 70), [t_deny, 1] → [70, 100]; each band's score is floored to an integer, so a
 * probability just under a threshold stays in the band below. Edge cases: t_review = t_deny
 * leaves no review band (39 jumps to 70); a threshold ≥ 1 never fires, so with t_deny ≥ 1 the
 * review band stretches to p = 1 and tops out at 69 (with t_review ≥ 1 too, approve tops out at
 * 39); t_review = 0 leaves no approve band; a t_deny below t_review counts as t_review.
 * Throws on a probability that is not a number (a caller's bug, never a score).
 */
export function modelScore(
  probability: number,
  thresholds: ProbabilityThresholds,
  bands: ScoreThresholds = SERVICE_BANDS,
): number {
  if (Number.isNaN(probability)) throw new RangeError("probability is NaN");
  const p = Math.min(1, Math.max(0, probability));
  const review = Math.max(0, thresholds.review);
  const deny = Math.max(review, thresholds.deny);
  // A band [from, to) onto the scores [low, high): `to` ≥ 1 when the next band never fires,
  // and then the band runs through p = 1. Capped, so rounding never crosses into the next band.
  const band = (from: number, to: number, low: number, high: number): number => {
    const span = Math.min(to, 1) - from;
    return Math.min(high - 1, low + Math.floor(((high - low) * (p - from)) / span));
  };
  if (review >= 1) return band(0, 1, 0, bands.review);
  if (p < review) return band(0, review, 0, bands.review);
  if (p < deny || deny >= 1) return band(review, deny, bands.review, bands.deny);
  return Math.min(100, bands.deny + Math.floor(((100 - bands.deny) * (p - deny)) / (1 - deny)));
}

/** One feature's share in a score, in log-odds (positive: it raised the fraud probability). */
export interface Contribution {
  name: string;
  contribution: number;
}

/**
 * The `k` features that moved this row's log-odds most (largest |contribution| first; features
 * that did not move it are left out), by Saabas path attribution (`boostedContributions`).
 * `names` are the row's feature names, `FEATURE_NAMES` by default.
 */
export function topContributions(
  model: BoostedTrees,
  row: ArrayLike<number>,
  k: number,
  names: readonly string[] = FEATURE_NAMES,
): Contribution[] {
  const { contributions } = boostedContributions(model, row);
  const out: Contribution[] = [];
  for (let f = 0; f < contributions.length; f++) {
    const c = contributions[f] as number;
    if (c !== 0) out.push({ name: names[f] ?? `feature_${f}`, contribution: c });
  }
  out.sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution));
  return out.slice(0, k);
}
