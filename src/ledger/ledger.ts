import type { Party } from "#audit/chain";
import type { AssessmentCommit, CommitAnswer } from "../assess/commit";
import type { Caller } from "../auth/caller";
import type { Env } from "../env";
import { ApiError, type ErrorCode, errorStatus } from "../errors";
import type {
  DeferredAppend,
  DeferredInput,
  DeferredRule,
  OrgLedger,
  Refusal,
} from "../org-ledger/org-ledger";
import { LEDGER_UNAVAILABLE } from "./ledger-postgres";
import { ledgerLocationHint } from "./location-hint";

/** A state change to record: what happened, to what, and the payload it is a digest of. */
export interface Change {
  type: string;
  subject: Party | null;
  /** Hashed (RFC 8785 + SHA-256) into the entry; never stored in the ledger itself. */
  payload: unknown;
  /** Records the change at most once per org under this key (see AppendInput.once). */
  once?: string;
}

export function ledgerOf(env: Env, orgId: string): DurableObjectStub<OrgLedger> {
  if (!env.ORG_LEDGER) throw new ApiError("ledger_unavailable");
  const locationHint = ledgerLocationHint(env.LEDGER_LOCATION_HINT);
  const id = env.ORG_LEDGER.idFromName(orgId);
  return locationHint ? env.ORG_LEDGER.get(id, { locationHint }) : env.ORG_LEDGER.get(id);
}

/**
 * Has the org's ledger object sequence a deferred append under `rule` (OrgLedger.appendDeferred):
 * the entry to write, or the refusal the rule made.
 */
export function appendDeferred(
  env: Env,
  orgId: string,
  input: DeferredInput,
  rule: DeferredRule,
): Promise<DeferredAppend | Refusal> {
  // The one cast: the RPC stub types a union answer as a union of its serialized forms, not
  // the union itself; every member is plain data, which RPC carries unchanged.
  return reachLedger(
    () =>
      ledgerOf(env, orgId).appendDeferred(orgId, input, rule) as unknown as Promise<
        DeferredAppend | Refusal
      >,
  );
}

/**
 * The second and last hop of a fresh assessment: the org's ledger object signs the verdict it
 * chooses, sequences it and writes the assessment with its entry (OrgLedger.commitAssessment).
 */
export function commitAssessment(
  env: Env,
  caller: Caller,
  commit: AssessmentCommit,
): Promise<CommitAnswer> {
  // The RPC stub's type of a union answer is not the union itself.
  return reachLedger(
    () =>
      ledgerOf(env, caller.orgId).commitAssessment(
        caller.orgId,
        commit,
      ) as unknown as Promise<CommitAnswer>,
  );
}

/** Has the org's ledger sign a checkpoint over everything appended so far (stored before it returns). */
export function anchorNow(env: Env, orgId: string) {
  return reachLedger(() => ledgerOf(env, orgId).anchor(orgId));
}

/** Calls the org's ledger object, naming its database outage a 503 (read paths use it too). */
export async function reachLedger<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // Our own answer (no ledger binding: `ledger_unavailable`) passes through as it is.
    if (error instanceof ApiError) throw error;
    // Errors lose their class across RPC; the ledger names a database outage in the message.
    if (error instanceof Error && error.message.startsWith(LEDGER_UNAVAILABLE)) {
      throw new ApiError("database_unavailable", undefined, { cause: error });
    }
    // The ledger object's own ApiErrors (its signing key unusable) arrive as their code.
    if (error instanceof Error && Object.hasOwn(errorStatus, error.message)) {
      throw new ApiError(error.message as ErrorCode, undefined, { cause: error });
    }
    throw error;
  }
}
