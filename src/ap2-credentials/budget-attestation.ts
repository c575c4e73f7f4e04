/**
 * The remaining-budget attestation (AP2 #207; docs/credentials.md, "Remaining budget
 * attestation"): a signed statement of what an org has approved under an open mandate (a
 * consent) and what remains of its budget and period caps, which a second merchant verifies
 * offline with the service's key set. Signed ES256 (docs/architecture.md, issue 42's ADR, point
 * 1), `typ` `mandate-budget+jwt`, valid for five minutes: a budget moves with every payment.
 */
import type { Tenant } from "../auth/tenant";
import { publicBaseUrl } from "../env";
import { ApiError } from "../errors";
import { ledgerOf, reachLedger } from "../ledger/ledger";
import type { MandateBudgetState } from "../org-ledger/spend-decision";
import { signer } from "../signing/signer";

export const MANDATE_BUDGET_TYP = "mandate-budget+jwt";

/** How long an attestation holds: short, since the next approval changes it. */
export const MANDATE_BUDGET_LIFETIME_S = 300;

/** A consent reference: base64url (no padding) of a SHA-256, 43 characters. */
export const REFERENCE = /^[A-Za-z0-9_-]{43}$/;

export interface MandateBudgetPeriod {
  period: string;
  start: string;
  end: string;
  max_total: number;
  spent: number;
  remaining: number;
}

export interface MandateBudgetClaims {
  iss: string;
  iat: number;
  exp: number;
  sub: string;
  reference: string;
  livemode: boolean;
  currency: string;
  max_amount: number | null;
  spent: number;
  remaining: number | null;
  uses: number;
  max_uses: number | null;
  periods: MandateBudgetPeriod[];
}

/** The claims for a ledger object's state at `now` (epoch ms). */
export function budgetClaims(
  issuer: string,
  reference: string,
  livemode: boolean,
  state: MandateBudgetState,
  now: number,
): MandateBudgetClaims {
  const iat = Math.floor(now / 1000);
  const { terms } = state;
  const maxes = terms.budgets.filter((b) => b.currency === terms.currency).map((b) => b.max);
  const max = maxes.length > 0 ? Math.min(...maxes) : null;
  return {
    iss: issuer,
    iat,
    exp: iat + MANDATE_BUDGET_LIFETIME_S,
    sub: reference,
    reference,
    livemode,
    currency: terms.currency,
    max_amount: max,
    spent: state.spent,
    remaining: max === null ? null : Math.max(0, max - state.spent),
    uses: state.uses,
    max_uses: terms.maxOccurrences,
    periods: state.periods.map((p) => ({
      period: p.period,
      start: new Date(p.start).toISOString(),
      end: new Date(p.end).toISOString(),
      max_total: p.max,
      spent: p.spent,
      remaining: Math.max(0, p.max - p.spent),
    })),
  };
}

/**
 * The attestation of the caller's org, in the caller's mode, of the consent `reference`: 404
 * when the org approved nothing under it in this mode (there is nothing it can attest), 503 when
 * the ES256 key is missing or unusable (never an unsigned answer).
 */
export async function attestMandateBudget(tenant: Tenant, reference: string) {
  if (!REFERENCE.test(reference)) throw new ApiError("not_found");
  const { orgId } = await tenant.caller();
  const key = await signer(tenant.env);
  const now = Date.now();
  const state = (await reachLedger(() =>
    ledgerOf(tenant.env, orgId).mandateBudget(tenant.livemode, reference, now),
  )) as MandateBudgetState | null;
  if (state === null) throw new ApiError("not_found");
  const claims = budgetClaims(publicBaseUrl(tenant.env), reference, tenant.livemode, state, now);
  const jws = await key.es256.signClaims({ ...claims }, MANDATE_BUDGET_TYP);
  return { claims, jws };
}
