import { and, eq, sql } from "drizzle-orm";
import {
  type AnchorRow,
  activeIssuers,
  anchorsOf,
  type RootHeader,
} from "../ap2-credentials/issuers";
import type { Tenant } from "../auth/tenant";
import { spendStateOf } from "../billing/guard";
import { type Placeholders, preparedOnce } from "../db/prepared";
import { assessments, reviews } from "../db/schema";
import { type NetworkQuery, networkCountsOf, networkRead } from "../network/assess";
import {
  type HttpSignatureQuery,
  httpSignatureRead,
  httpSignatureReadOf,
} from "./http-signature/read";
import type { AgentRowView, AssessContext, ModelContext, ModelRow } from "./input";
import { recordJson } from "./outcome";
import { refinementColumns } from "./refinement";
import type { TelemetryDigests, TelemetrySeenRow } from "./telemetry";
import { telemetryRead } from "./telemetry-store";

/** What the request itself says about who acts and with whom. */
export interface ContextQuery {
  contentHash: string;
  idempotencyKey: string | null;
  /** The mode of the credential: idempotency keys are kept apart per mode. */
  livemode: boolean;
  /** RFC 7638 thumbprint of the open mandate's `cnf.jwk`. */
  thumbprint: string | null;
  cardRef: string | null;
  agentId: string | null;
  currency: string | null;
  counterparty: string | null;
  /**
   * The header of the root of the request's AP2 credential: the org's trust anchors are read
   * too, in the same batch (a `kid` the anchors lack may refresh an issuer's JWKS URL).
   */
  credentialRoot?: RootHeader | null;
  /** The request's test clock (test mode only; refused for a live key before this read). */
  testClock?: string | null;
  /** The risk models whose parameters this isolate holds already (none are sent again). */
  modelsHeld?: string | null;
  /**
   * What the network is asked about this request (src/network/assess.ts): one more statement
   * of the same batch. Null or absent without network keys: no statement.
   */
  network?: NetworkQuery | null;
  /** The digests of the request's checkout telemetry: one more statement; none without. */
  telemetry?: TelemetryDigests | null;
  /**
   * The agent's HTTP signature (docs/http-signatures.md): the key its `keyid` names, and its
   * nonce remembered, as one more statement of the same batch. Absent without a signature.
   */
  httpSignature?: HttpSignatureQuery | null;
}

/**
 * One batch of three statements after authentication's two: the replay lookup with its review
 * item (for the refinement), the idempotency key's owner, and one statement for the rest: the
 * agent named by each piece of evidence, the agent's history, the window aggregates the active
 * and shadow rule lists read, the active and shadow policies (a shadow adds no round trip and
 * no statement), and the spend guard's state (plan, cap, meter). The
 * agent chosen is the key's, else the card's, else the explicit one; the history is that
 * agent's. For a replay that last statement answers NULL; the anchoring frontier, which only
 * a replay's answer needs, rides in the replay lookup. With network keys, the network's counts
 * for the request's identifiers come in the same batch (`network_context`); with a credential,
 * the org's active issuers' keys too (both in either order: each is one statement).
 */
export async function loadContext(tenant: Tenant, q: ContextQuery): Promise<AssessContext> {
  const network = q.network ?? null;
  const signature = q.httpSignature ?? null;
  const [replay, keyOwner, identity, ...rest] = await tenant.batch((db) => [
    replayOf(db, { contentHash: q.contentHash }),
    keyOwnerOf(db, { livemode: q.livemode, idempotencyKey: q.idempotencyKey ?? "" }),
    identityAndHistory(db, {
      contentHash: q.contentHash,
      livemode: q.livemode,
      thumbprint: q.thumbprint,
      cardRef: q.cardRef,
      agentId: q.agentId,
      currency: q.currency,
      counterparty: q.counterparty,
      testClock: q.testClock ?? null,
      modelsHeld: q.modelsHeld ?? null,
    }),
    ...(network ? [networkRead(db, network, q.livemode, q.testClock ?? null)] : []),
    ...(q.credentialRoot ? [activeIssuers(db)] : []),
    ...(signature
      ? [
          httpSignatureRead(db, {
            ...signature,
            livemode: q.livemode,
            testClock: q.testClock ?? null,
          }),
        ]
      : []),
    ...(q.telemetry ? [telemetryRead(db, q.telemetry, q.livemode)] : []),
  ]);
  // The optional statements answer in the order they were added.
  const networkResult = network ? rest.shift() : undefined;
  const issuers = (q.credentialRoot ? rest.shift() : undefined) as AnchorRow[] | undefined;
  const signatureResult = signature ? rest.shift() : undefined;
  const telemetry = q.telemetry
    ? { digests: q.telemetry, rows: (rest.shift() as unknown as { rows: TelemetrySeenRow[] }).rows }
    : null;
  const rows = (identity as unknown as { rows: { context: Record<string, unknown> }[] }).rows;
  const row = rows[0]?.context ?? {};
  type PolicyRow = { id: string; version: number | null; rules: unknown };
  const active = row.policy as PolicyRow | null;
  const shadow = row.shadow_policy as PolicyRow | null;
  return {
    replay: replay[0]?.assessment ?? null,
    replayReview: replay[0]?.review ?? null,
    keyOwner: keyOwner[0]?.contentHash ?? null,
    policy: active?.version
      ? { id: active.id, version: active.version, rules: active.rules }
      : null,
    shadow: shadow
      ? {
          id: shadow.id,
          version: shadow.version,
          rules: shadow.rules,
          window_count: Number(row.shadow_window_count ?? 0),
          aggregates: (row.shadow_aggregates as Record<string, unknown> | null) ?? null,
        }
      : null,
    keyHit: (row.key_hit as AssessContext["keyHit"]) ?? null,
    cardHit: (row.card_hit as AssessContext["cardHit"]) ?? null,
    explicit: (row.explicit as AgentRowView | null) ?? null,
    agent: (row.agent as AgentRowView | null) ?? null,
    history: (row.history as AssessContext["history"]) ?? null,
    aggregates: (row.aggregates as Record<string, unknown> | null) ?? null,
    // Only a replay's stored entry can be anchored already: a fresh one is sequenced after
    // this read, past any checkpoint it could see.
    anchoredThrough: Number(replay[0]?.anchored ?? 0),
    spend: spendStateOf((row.spend as Record<string, unknown> | null) ?? undefined),
    ...(row.as_of && q.testClock ? { asOf: new Date(row.as_of as string).toISOString() } : {}),
    ...(row.test_clock_missing ? { testClockMissing: true } : {}),
    ...(row.model || row.shadow_model ? { models: modelsOf(row) } : {}),
    ...(network ? { network: networkCountsOf(networkResult) } : {}),
    ...(telemetry ? { telemetry } : {}),
    ...(signature ? { httpSignature: httpSignatureReadOf(signatureResult) } : {}),
    ...(q.credentialRoot && !replay[0]
      ? {
          anchors: await anchorsOf(tenant, tenant.env, issuers ?? [], q.credentialRoot),
        }
      : {}),
  };
}

type IdentityValues = Pick<
  ContextQuery,
  "contentHash" | "livemode" | "thumbprint" | "cardRef" | "agentId" | "currency" | "counterparty"
> & { testClock: string | null; modelsHeld: string | null };

function modelsOf(row: Record<string, unknown>): ModelContext {
  return {
    active: (row.model as ModelRow | null) ?? null,
    shadow: (row.shadow_model as ModelRow | null) ?? null,
    agentPast: (row.model_agent as ModelContext["agentPast"] | null) ?? [],
    payeePast: (row.model_payee as ModelContext["payeePast"] | null) ?? [],
  };
}

/** The stored assessment of the same request, with its review item (for the refinement). */
const replayOf = preparedOnce((db, q: Placeholders<{ contentHash: string }>) =>
  db
    .select({
      // What the answer is made of, and no more, as one value (see recordJson).
      assessment: recordJson,
      review: refinementColumns,
      // A replay's answer says whether its entry is anchored; the identity statement reads
      // nothing for a replay, so the frontier rides here.
      anchored: sql<number | string | null>`(select max(c.tree_size) from audit_checkpoints c)`,
    })
    .from(assessments)
    .leftJoin(reviews, eq(reviews.assessmentId, assessments.id))
    .where(eq(assessments.contentHash, q.contentHash)),
);

/** The assessment holding the caller's idempotency key in this mode, if any. */
const keyOwnerOf = preparedOnce(
  (db, q: Placeholders<{ livemode: boolean; idempotencyKey: string }>) =>
    db
      .select({ contentHash: assessments.contentHash })
      .from(assessments)
      .where(
        and(eq(assessments.livemode, q.livemode), eq(assessments.idempotencyKey, q.idempotencyKey)),
      ),
);

/**
 * The agent named by each piece of evidence, its history, the rule lists' window aggregates,
 * the active and shadow policies and the spend guard's state, as one JSON value: the database
 * function `assess_context` (drizzle/0011_assess_context.sql), whose plan each database session
 * keeps, where the same statement sent as text was planned again on every request. NULL for a
 * replay, which needs none of it.
 */
const identityAndHistory = preparedOnce((db, q: Placeholders<IdentityValues>) =>
  db.execute(sql`select assess_context(${q.contentHash}, ${q.livemode}, ${q.thumbprint},
    ${q.cardRef}, ${q.agentId}::uuid, ${q.currency}, ${q.counterparty}, ${q.testClock}::uuid,
    ${q.modelsHeld}) as context`),
);
