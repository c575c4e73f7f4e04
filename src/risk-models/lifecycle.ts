import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { decodeIdCursor, mapPage, type Page, page } from "../db/pagination";
import { riskModels } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { type Committer, commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import {
  type CreateRiskModel,
  DEFAULT_DENY_PRECISION,
  DEFAULT_LABEL_DELAY_SECONDS,
  DEFAULT_REVIEW_PRECISION,
  DEFAULT_TRAINING_WINDOW_SECONDS,
  type ListRiskModelsQuery,
  type RiskModel,
  type RiskModelParams,
} from "../schemas/risk-models";
import type { RiskModelStatus } from "../schemas/vocabulary";
import { clockTimeQuery } from "../test-clocks/clocks";
import { withCard } from "./card";
import { modelColumns, type RiskModelRow, toRiskModel } from "./records";
import type { TrainingOutcome } from "./training-outcome";
import { enqueueTraining } from "./training-queue";

// A risk model's lifecycle (docs/risk-model.md, "The API"): created in `training`, trained to
// `ready` or `failed` by the Queue consumer (training-job.ts), then `active`, `shadow` or
// `retired`. Each step is one ledger entry whose payload is the model object with the card
// signed for that step. Models are per mode: every read and write names the caller's.

/** The statuses a model has been trained in: the ones it can be activated or shadowed from. */
const TRAINED: readonly RiskModelStatus[] = ["ready", "active", "shadow", "retired"];

/** One lifecycle step's ledger change: the model as it stands after it, card included. */
export function lifecycleChange(type: string, row: RiskModelRow) {
  return { type, subject: { type: "risk_model", id: row.id }, payload: toRiskModel(row) };
}

function selectModel(db: Database, livemode: boolean, id: string) {
  return db
    .select(modelColumns)
    .from(riskModels)
    .where(and(eq(riskModels.id, id), eq(riskModels.livemode, livemode)));
}

function selectStatus(db: Database, livemode: boolean, status: RiskModelStatus) {
  return db
    .select(modelColumns)
    .from(riskModels)
    .where(and(eq(riskModels.status, status), eq(riskModels.livemode, livemode)));
}

/** The org's highest model version so far, across modes (0 before any activation). */
function maxVersion(db: Database) {
  return db
    .select({ max: sql<number>`coalesce(max(${riskModels.version}), 0)::int` })
    .from(riskModels);
}

async function readModel(tenant: Tenant, id: string): Promise<RiskModelRow | undefined> {
  const [rows] = await tenant.batch((db) => [selectModel(db, tenant.livemode, id)]);
  return rows[0];
}

/** The instant a training request names: `as_of`, a test clock's frozen time, or now. */
async function trainingInstant(tenant: Tenant, body: CreateRiskModel): Promise<Date> {
  const now = Date.now();
  if (body.test_clock !== undefined) {
    if (tenant.livemode) throw invalid("test_clock", "test clocks are for test keys only");
    const clockId = body.test_clock;
    const [clocks] = await tenant.batch((db) => [clockTimeQuery(db, clockId)]);
    const clock = clocks[0];
    if (!clock) throw invalid("test_clock", "no such test clock");
    return clock.frozenTime;
  }
  if (body.as_of === undefined) return new Date(now);
  const asOf = new Date(body.as_of);
  if (asOf.getTime() > now) throw invalid("as_of", "must not be in the future");
  return asOf;
}

function invalid(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message }]);
}

/**
 * Starts training a model of the caller's mode: the row in `training` with its entry
 * (`risk_model.created`), then one message to the training queue. A queue that cannot take it
 * marks the model `failed` (with its entry) and answers 503: no model waits for a message that
 * was never sent.
 */
export async function createRiskModel(tenant: Tenant, body: CreateRiskModel): Promise<RiskModel> {
  const asOf = await trainingInstant(tenant, body);
  const { orgId } = await tenant.caller();
  const created = await withCard(tenant.env, orgId, {
    id: newId(),
    livemode: tenant.livemode,
    status: "training",
    version: null,
    asOf,
    testClockId: body.test_clock ?? null,
    labelDelaySeconds: body.label_delay ?? DEFAULT_LABEL_DELAY_SECONDS,
    trainingWindowSeconds: body.training_window ?? DEFAULT_TRAINING_WINDOW_SECONDS,
    targets: {
      review_precision: body.review_precision ?? DEFAULT_REVIEW_PRECISION,
      deny_precision: body.deny_precision ?? DEFAULT_DENY_PRECISION,
    },
    counts: null,
    features: null,
    metrics: null,
    paramsDigest: null,
    card: null,
    failureReason: null,
    createdAt: new Date(),
    trainedAt: null,
    activatedAt: null,
  });
  await commit(tenant, lifecycleChange("risk_model.created", created), (db) => [
    db.insert(riskModels).values(created),
  ]);
  const queued = await enqueueTraining(tenant.env, {
    model_id: created.id,
    org_id: orgId,
  });
  if (!queued) {
    await completeTraining(tenant, orgId, created, {
      status: "failed",
      reason: "the training queue could not take the model",
    });
    throw new ApiError("training_queue_unavailable");
  }
  return toRiskModel(created);
}

/**
 * Ends a model's training, once: `ready` with its numbers and parameters, or `failed` with
 * the reason, each with its entry (`risk_model.trained`, `risk_model.failed`) and the card of
 * that step. The write is conditional on the model still training, which the caller has just
 * read: a duplicate delivery racing this one leaves at most an entry whose change did not land
 * (docs/architecture.md, "Recording a change"). Answers whether this call's change landed.
 */
export async function completeTraining(
  committer: Committer,
  orgId: string,
  current: RiskModelRow,
  outcome: TrainingOutcome,
): Promise<boolean> {
  const now = new Date();
  const settled = await withCard(committer.env, orgId, {
    ...current,
    status: outcome.status,
    counts: outcome.counts ?? null,
    ...(outcome.status === "ready"
      ? {
          features: outcome.features,
          metrics: outcome.metrics,
          paramsDigest: outcome.paramsDigest,
          trainedAt: now,
          failureReason: null,
        }
      : { failureReason: outcome.reason }),
  });
  const type = outcome.status === "ready" ? "risk_model.trained" : "risk_model.failed";
  const { results } = await commit(committer, lifecycleChange(type, settled), (db) => [
    db
      .update(riskModels)
      .set({
        status: settled.status,
        counts: settled.counts,
        features: settled.features,
        metrics: settled.metrics,
        paramsDigest: settled.paramsDigest,
        params: outcome.status === "ready" ? outcome.params : null,
        trainedAt: settled.trainedAt,
        failureReason: settled.failureReason,
        card: settled.card,
      })
      .where(and(eq(riskModels.id, current.id), eq(riskModels.status, "training")))
      .returning({ id: riskModels.id }),
  ]);
  return results[0].length === 1;
}

const UNIQUE_VIOLATION = "23505";

function isUniqueViolation(error: unknown): boolean {
  const own = (error as { code?: string } | null)?.code;
  const cause = (error as { cause?: { code?: string } } | null)?.cause?.code;
  return own === UNIQUE_VIOLATION || cause === UNIQUE_VIOLATION;
}

function conflict(code: "risk_model_activation_conflict" | "risk_model_shadow_conflict") {
  return (error: unknown): never => {
    if (isUniqueViolation(error)) {
      throw new ApiError(code, [{ path: "id", message: "another change won the race; retry" }]);
    }
    throw error;
  };
}

function notTrained(): ApiError {
  return new ApiError("risk_model_not_trained", [
    { path: "id", message: "the model has no trained parameters (training or failed)" },
  ]);
}

/**
 * Makes a trained model (ready, shadow or retired) the mode's one active model: the active
 * one (if another) is retired, with an entry of its own, and this one takes the org's next
 * version, read first. Rolling back is activating an earlier, retired model: it gets a new
 * version. Both writes are conditional on what was read; the unique indexes on the active
 * model and on the version decide a race, whose loser answers 409 and can retry. The active
 * model answers unchanged and records nothing.
 */
export async function activateRiskModel(tenant: Tenant, id: string): Promise<RiskModel> {
  const livemode = tenant.livemode;
  const [rows, actives, versions] = await tenant.batch((db) => [
    selectModel(db, livemode, id),
    selectStatus(db, livemode, "active"),
    maxVersion(db),
  ]);
  const current = orNotFound(rows[0]);
  if (current.status === "active") return toRiskModel(current);
  if (!TRAINED.includes(current.status)) throw notTrained();
  const { orgId } = await tenant.caller();
  const version = Number(versions[0]?.max ?? 0) + 1;
  const activated = await withCard(tenant.env, orgId, {
    ...current,
    status: "active",
    version,
    activatedAt: new Date(),
  });
  const previous = actives[0];
  const retired = previous
    ? await withCard(tenant.env, orgId, { ...previous, status: "retired" })
    : undefined;
  const change = lifecycleChange("risk_model.activated", activated);
  const { results } = await commit(
    tenant,
    {
      ...change,
      once: [`risk_model.activated:${id}:${version}`],
      also: retired ? [lifecycleChange("risk_model.retired", retired)] : [],
    },
    (db) => [
      db
        .update(riskModels)
        .set({ status: "retired", card: retired?.card ?? null })
        .where(
          and(
            eq(riskModels.id, previous?.id ?? id),
            eq(riskModels.status, "active"),
            // Only while this model is there to take its place (a race may have taken it).
            sql`exists (select 1 from risk_models d where d.id = ${id}
                          and d.status = ${current.status})`,
          ),
        ),
      db
        .update(riskModels)
        .set({
          status: "active",
          version,
          activatedAt: activated.activatedAt,
          card: activated.card,
        })
        .where(and(eq(riskModels.id, id), eq(riskModels.status, current.status)))
        .returning(modelColumns),
    ],
  ).catch(conflict("risk_model_activation_conflict"));
  // A twin activating this very model landed first: the model as it left it. Anything else
  // took the model between the read and the write: the loser retries.
  const landed = results[1][0] ?? (await readModel(tenant, id));
  if (landed?.status === "active" && landed.version === version) return toRiskModel(landed);
  return conflict("risk_model_activation_conflict")({ code: UNIQUE_VIOLATION });
}

/**
 * Makes a trained model (ready or retired) the mode's one shadow model: scored on every
 * assessment beside the active one, its decision recorded and never acted on. The previous
 * shadow (if another) returns to `ready`, with an entry of its own. The active model cannot be
 * the shadow (409); the shadow model answers unchanged and records nothing.
 */
export async function shadowRiskModel(tenant: Tenant, id: string): Promise<RiskModel> {
  const livemode = tenant.livemode;
  const [rows, shadows] = await tenant.batch((db) => [
    selectModel(db, livemode, id),
    selectStatus(db, livemode, "shadow"),
  ]);
  const current = orNotFound(rows[0]);
  if (current.status === "shadow") return toRiskModel(current);
  if (current.status === "active") throw shadowOfActive();
  if (!TRAINED.includes(current.status)) throw notTrained();
  const { orgId } = await tenant.caller();
  const shadowing = await withCard(tenant.env, orgId, { ...current, status: "shadow" });
  const previous = shadows[0];
  const unshadowed = previous
    ? await withCard(tenant.env, orgId, { ...previous, status: "ready" })
    : undefined;
  const { results } = await commit(
    tenant,
    {
      ...lifecycleChange("risk_model.shadowed", shadowing),
      also: unshadowed ? [lifecycleChange("risk_model.unshadowed", unshadowed)] : [],
    },
    (db) => [
      db
        .update(riskModels)
        .set({ status: "ready", card: unshadowed?.card ?? null })
        .where(
          and(
            eq(riskModels.id, previous?.id ?? id),
            eq(riskModels.status, "shadow"),
            sql`exists (select 1 from risk_models d where d.id = ${id}
                          and d.status = ${current.status})`,
          ),
        ),
      db
        .update(riskModels)
        .set({ status: "shadow", card: shadowing.card })
        .where(and(eq(riskModels.id, id), eq(riskModels.status, current.status)))
        .returning(modelColumns),
    ],
  ).catch(conflict("risk_model_shadow_conflict"));
  const written = results[1][0];
  if (written) return toRiskModel(written);
  // A twin made it the shadow first: as it left it; activated meanwhile: the active one decides.
  const now = orNotFound(await readModel(tenant, id));
  if (now.status === "active") throw shadowOfActive();
  if (now.status === "shadow") return toRiskModel(now);
  return conflict("risk_model_shadow_conflict")({ code: UNIQUE_VIOLATION });
}

function shadowOfActive(): ApiError {
  return new ApiError("risk_model_active", [
    { path: "id", message: "the active model decides; shadow a ready or retired model" },
  ]);
}

/** One model of the caller's org and mode (404 otherwise). */
export async function getRiskModel(tenant: Tenant, id: string): Promise<RiskModel> {
  return toRiskModel(orNotFound(await readModel(tenant, id)));
}

/** A page of the caller's mode's models, newest first, by status if asked. */
export async function listRiskModels(
  tenant: Tenant,
  query: ListRiskModelsQuery,
): Promise<Page<RiskModel>> {
  const after = decodeIdCursor(query.cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select(modelColumns)
      .from(riskModels)
      .where(
        and(
          eq(riskModels.livemode, tenant.livemode),
          after ? lt(riskModels.id, after) : undefined,
          query.status ? eq(riskModels.status, query.status) : undefined,
        ),
      )
      .orderBy(desc(riskModels.id))
      .limit(query.limit + 1),
  ]);
  return mapPage(
    page(rows, query.limit, (row) => row.id),
    toRiskModel,
  );
}

/** A trained model's parameters and their digest (a model without them: 409). */
export async function riskModelParams(tenant: Tenant, id: string): Promise<RiskModelParams> {
  const [rows] = await tenant.batch((db) => [
    db
      .select({
        id: riskModels.id,
        params: riskModels.params,
        paramsDigest: riskModels.paramsDigest,
      })
      .from(riskModels)
      .where(and(eq(riskModels.id, id), eq(riskModels.livemode, tenant.livemode))),
  ]);
  const row = orNotFound(rows[0]);
  if (row.params === null || row.paramsDigest === null) throw notTrained();
  return {
    object: "risk_model_params" as const,
    model_id: row.id,
    params_digest: row.paramsDigest,
    params: row.params as RiskModelParams["params"],
  };
}
