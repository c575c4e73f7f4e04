/**
 * An organization with data in it, for the console's accessibility and load tests
 * (docs/console.md, "Load times"; docs/browser-tests.md).
 *
 * `seedTemplates(tab)` makes a small, real test-mode data set through the public API, as an
 * integration would: an active policy with a deny and an approve rule, a principal and an agent
 * with a key, an assessment of each decision (the `review` one opens a review item), 2,000
 * payments of imported history with fraud labels (fewer when asked: the accessibility test
 * needs a trained model, not the load test's training data), a risk model trained on them by
 * the service's own queue consumer, and a webhook endpoint.
 *
 * `multiply(sqlEndpoint, seeded, counts)` then grows that org in one database transaction, in
 * seconds rather than 10,000 HTTP calls: it copies the real rows the API wrote with
 * `INSERT … SELECT … FROM generate_series`, each copy with a new UUIDv7 id (its time in the
 * leading 48 bits, as `newId` makes them, so keyset pages follow creation order), its own time,
 * amount, payee digest and content hash. It goes through the dev server's SQL-over-HTTP endpoint
 * (the one the Worker uses, `support/service.ts`) as the database owner, with `app.org_id` set
 * for row-level security, and through every trigger of the tables (each assessment copy also
 * becomes a payment of the org's history, `payments_from_assessment`).
 *
 * What the copies do not have, by construction: an audit entry of their own (they name their
 * template's `audit_entry_id` and `audit_sequence`: the ledger's hash chain is written by the
 * org's Durable Object, whose sequence a raw insert would fork), a mandate row, and a Risk
 * Payload signed for them (the `jws` is the template's, so the console's in-browser check of a
 * copy says `claims_mismatch`). The load test therefore opens a real assessment's page, and the
 * audit page's "Verify now" covers only the entries the API wrote.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, inject } from "vitest";
import type { BrowserTab } from "./browser";
import { fromPage } from "./console-api";
import { withKey } from "./console-b";
import { REPO } from "./service";

/** What the API made, with the ids the pages are opened on. */
export interface Seeded {
  orgId: string;
  /** A test key with `assess:*`, `policy:*` and `review:read`. */
  key: string;
  policyId: string;
  agentId: string;
  modelId: string;
  webhookId: string;
  /** A real assessment of each decision; `review` opened `reviewId`. */
  assessments: { approve: string; review: string; deny: string };
  reviewId: string;
}

const PAYMENT = JSON.parse(
  readFileSync(join(REPO, "test/fixtures/ap2/payment_mandate.json"), "utf8"),
) as Record<string, unknown>;

/** A call from the signed-in page in test mode, failing the test unless it is a 2xx. */
async function session(tab: BrowserTab, method: string, path: string, body?: unknown) {
  const answer = await fromPage(tab, path, { method, body, mode: "test" });
  if (answer.status >= 300) {
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}

async function keyCall(key: string, method: string, path: string, body?: unknown) {
  const answer = await withKey(key, method, path, body);
  if (answer.status >= 300) {
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}

/** An AP2 payment to `payee` of `amount` cents, by `agentId` when given. */
function payment(payee: string, amount: number, agentId?: string) {
  return {
    kind: "ap2_payment",
    ...(agentId ? { agent_id: agentId } : {}),
    mandate: {
      ...PAYMENT,
      transaction_id: `tx-${randomUUID()}`,
      payee: { id: payee, name: `Shop ${payee}` },
      payment_amount: { amount, currency: "USD" },
    },
  };
}

const DAY_MS = 86_400_000;

/**
 * `count` payments of the agent to 50 payees between 7.5 and 13.5 days ago (the default training
 * window, a week ending a week's label delay ago), 5 of the payees with fraud on every other
 * payment: 6 % fraud. The trainer's minimums (docs/risk-model.md, "Too little data": 100 rows
 * and 10 frauds before the held-out quarter, 5 frauds in it) need about 350; MIN_HISTORY keeps
 * a margin.
 */
function history(agentId: string, count: number) {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    const at = now - 7.5 * DAY_MS - (i / count) * 6 * DAY_MS;
    const payee = i % 50;
    return {
      id: `hist-${i}`,
      occurred_at: new Date(at).toISOString(),
      agent_id: agentId,
      payee: { id: `m-${payee}`, name: `Shop m-${payee}` },
      amount: { amount: 500 + ((i * 7919) % 90_000), currency: "USD" },
      ...(payee < 5 && i % 2 === 0
        ? { label: { label: "fraud", labeled_at: new Date(at + 3_600_000).toISOString() } }
        : {}),
    };
  });
}

/**
 * GET /v1/risk-models/{id} with `key`, asked once more when unanswered after 15 s: a poll that
 * `wrangler dev` left hanging while the queue consumer trained held a run's seed for over 100 s
 * (service.log: the training's `QUEUE risk-model-training 1/1 (5482ms)`, then nothing), the
 * dev server's stall of docs/browser-tests.md, which `getFromDevServer` handles the same way.
 */
async function readModel(key: string, id: string) {
  const url = `${inject("browserOrigin")}/v1/risk-models/${id}`;
  const get = (ms?: number) =>
    fetch(url, { headers: { "x-api-key": key }, signal: ms ? AbortSignal.timeout(ms) : null });
  let response: Response;
  try {
    response = await get(15_000);
  } catch (error) {
    if (!(error instanceof DOMException && error.name === "TimeoutError")) throw error;
    process.stderr.write(
      `[browser] seed: GET ${url} unanswered after 15000 ms; asking once more\n`,
    );
    response = await get();
  }
  const body = await response.json();
  if (response.status !== 200)
    throw new Error(`GET ${url}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** Payments of history enough for a model to train, with a margin (fewer: it fails, saying why). */
export const MIN_HISTORY = 500;

/**
 * The small real data set, through the API (about 10 s with 2,000 payments of history, most of
 * it the model's training). `history` payments are imported for the model (default 2,000, the
 * load test's org).
 */
export async function seedTemplates(
  tab: BrowserTab,
  { history: payments = 2_000 }: { history?: number } = {},
): Promise<Seeded> {
  const me = await session(tab, "GET", "/v1/me");
  const { key } = await session(tab, "POST", "/v1/api-keys", {
    name: "seed",
    mode: "test",
    scopes: ["assess:write", "assess:read", "policy:write", "policy:read", "review:read"],
  });
  const policy = await session(tab, "POST", "/v1/policies", {
    name: "Seeded rules",
    activate: true,
    rules: {
      grammar: 1,
      rules: [
        {
          id: "blocked-payee",
          action: "deny",
          description: "a payee we never pay",
          when: { attr: "payee.id", op: "eq", value: "m-blocked" },
        },
        {
          id: "routine",
          action: "approve",
          description: "a known agent's payment under 1,000.00",
          when: {
            all: [
              { attr: "agent.identified", op: "eq", value: true },
              { attr: "amount", op: "lt", value: 100_000 },
            ],
          },
        },
      ],
    },
  });
  const principal = await session(tab, "POST", "/v1/principals", {
    type: "individual",
    name: "Ada Lovelace",
  });
  const agent = await session(tab, "POST", "/v1/agents", {
    principal_id: principal.id,
    name: "Shopping agent",
  });
  const { publicKey } = generateKeyPairSync("ed25519");
  const { kty, crv, x } = publicKey.export({ format: "jwk" });
  await session(tab, "POST", `/v1/agents/${agent.id}/keys`, { jwk: { kty, crv, x } });

  const decided = async (body: unknown, decision: string) => {
    const answer = await keyCall(key, "POST", "/v1/assess", body);
    expect(answer.decision, JSON.stringify(answer)).toBe(decision);
    return answer.assessmentId as string;
  };
  const assessments = {
    approve: await decided(payment("m-1", 4_599, agent.id), "approve"),
    // No agent: `agent_unknown` bars the approve rule; the decision is review.
    review: await decided(payment("m-2", 19_900), "review"),
    deny: await decided(payment("m-blocked", 12_000, agent.id), "deny"),
  };
  const reviews = await keyCall(key, "GET", "/v1/reviews?status=open");
  const reviewId = reviews.data.find(
    (r: { assessment_id: string }) => r.assessment_id === assessments.review,
  )?.id as string;
  expect(reviewId).toBeTruthy();

  await keyCall(key, "POST", "/v1/history/transactions", { records: history(agent.id, payments) });
  const trained = await keyCall(key, "POST", "/v1/risk-models", {});
  const until = Date.now() + 60_000;
  let model = trained;
  while (model.status === "training" && Date.now() < until) {
    await new Promise((tick) => setTimeout(tick, 500));
    model = await readModel(key, trained.id);
  }
  expect(model.status, JSON.stringify(model.failure_reason)).toBe("ready");

  const webhook = await session(tab, "POST", "/v1/webhook-endpoints", {
    url: "https://hooks.example.com/agent-risk",
    description: "the fraud team's queue",
  });
  return {
    orgId: me.orgId,
    key,
    policyId: policy.id,
    agentId: agent.id,
    modelId: model.id,
    webhookId: webhook.id,
    assessments,
    reviewId,
  };
}

/** One request to the SQL endpoint as the database owner: the statements run in one transaction. */
async function ownerBatch(
  endpoint: string,
  queries: { query: string; params: (string | number)[] }[],
): Promise<{ rowCount: number | null }[]> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: {
      // The endpoint's own role ("owner": no SET ROLE), as migrations run; scripts/sql-endpoint.
      "Neon-Connection-String": "postgresql://owner:local@localhost/agent_risk",
      "Neon-Raw-Text-Output": "true",
      "Neon-Array-Mode": "true",
      "content-type": "application/json",
    },
    body: JSON.stringify({ queries: queries.map((q) => ({ ...q, params: q.params.map(String) })) }),
  });
  const body = (await response.json()) as { results?: { rowCount: number | null }[] };
  if (response.status !== 200 || !body.results) {
    throw new Error(`SQL endpoint: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.results;
}

/** A UUIDv7 of the millisecond `ms` (an SQL bigint expression), its random bits from `r` (hex). */
const uuidv7 = (ms: string, r: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(${r}, 1, 3) || '8' || substr(${r}, 4, 15))::uuid`;

const ASSESSMENT_COLUMNS = `id, org_id, created_at, livemode, kind, mandate_type, mandate_id,
  content_hash, idempotency_key, agent_id, agent, decision, risk_level, risk_score, reason,
  policy_version, confidences, signals, rejection_reasons, jws, kid, verify_url, audit_entry_id,
  audit_sequence, a2a, latency_ms, amount, currency, counterparty, inputs, credential, shadow,
  model, shadow_model`;

/**
 * Copies of the templates: `assessments` in all, the first `openReviews` of them copies of the
 * `review` assessment made within the last 20 hours (each with an open review item, due a day
 * after it opened, the default SLA), the rest spread over 30 days, one in ten a deny and the
 * others approvals; and `models - 1` copies of the trained model (one in ten `failed`).
 */
export async function multiply(
  endpoint: string,
  seeded: Seeded,
  counts: { assessments: number; openReviews: number; models: number },
): Promise<{ assessments: number; reviews: number; models: number; ms: number }> {
  const started = Date.now();
  const { approve, review, deny } = seeded.assessments;
  const results = await ownerBatch(endpoint, [
    { query: "select set_config('app.org_id', $1, true)", params: [seeded.orgId] },
    {
      query: `
        with g as (
          select n, md5(random()::text || n) as r,
            (extract(epoch from now()) * 1000)::bigint - case
              when n <= $2 then (n::bigint * 72000000 / $2) + 60000
              else (n::bigint * 7919 % 2592000) * 1000 + 60000 end as ms
          from generate_series(1, $1) as n
        )
        insert into assessments (${ASSESSMENT_COLUMNS})
        select ${uuidv7("g.ms", "g.r")}, t.org_id, to_timestamp(g.ms / 1000.0), t.livemode,
          t.kind, t.mandate_type, gen_random_uuid(), 'seed:' || g.r, null, t.agent_id, t.agent,
          t.decision, t.risk_level, t.risk_score, t.reason, t.policy_version, t.confidences,
          t.signals, t.rejection_reasons, t.jws, t.kid, t.verify_url, t.audit_entry_id,
          t.audit_sequence, t.a2a, 4 + g.n % 60,
          case when t.amount is null then null else 100 + (g.n * 7919) % 95000 end, t.currency,
          case when t.counterparty is null then null
            else 'sha256:' || encode(sha256(convert_to(t.counterparty || ':' || (g.n % 200), 'UTF8')), 'hex') end,
          t.inputs, t.credential, t.shadow, t.model, t.shadow_model
        from g join assessments t on t.id = (case
          when g.n <= $2 then $3 when g.n % 10 = 0 then $4 else $5 end)::uuid`,
      params: [counts.assessments, counts.openReviews, review, deny, approve],
    },
    {
      query: `
        insert into reviews (id, org_id, assessment_id, livemode, agent_id, created_at,
          expires_at, status, spend, recheck)
        select ${uuidv7("(extract(epoch from a.created_at) * 1000)::bigint + 1", "md5(a.id::text)")},
          a.org_id, a.id, a.livemode, a.agent_id, a.created_at + interval '1 millisecond',
          a.created_at + interval '1 day', 'open', t.spend, t.recheck
        from assessments a join reviews t on t.id = $1::uuid
        where a.org_id = $2::uuid and a.decision = 'review' and a.content_hash like 'seed:%'`,
      params: [seeded.reviewId, seeded.orgId],
    },
    {
      query: `
        with g as (
          select n, md5(random()::text || n) as r,
            (extract(epoch from now()) * 1000)::bigint - n::bigint * 3600000 as ms
          from generate_series(1, $1) as n
        )
        insert into risk_models (id, org_id, livemode, status, version, as_of, test_clock_id,
          label_delay_seconds, training_window_seconds, targets, counts, features, metrics,
          params, params_digest, card, failure_reason, created_at, trained_at, activated_at)
        select ${uuidv7("g.ms", "g.r")}, t.org_id, t.livemode,
          case when g.n % 10 = 0 then 'failed' else 'ready' end, null,
          to_timestamp(g.ms / 1000.0), null, t.label_delay_seconds, t.training_window_seconds,
          t.targets, t.counts,
          case when g.n % 10 = 0 then null else t.features end,
          case when g.n % 10 = 0 then null else t.metrics end,
          case when g.n % 10 = 0 then null else t.params end,
          case when g.n % 10 = 0 then null else t.params_digest end,
          case when g.n % 10 = 0 then null else t.card end,
          case when g.n % 10 = 0 then 'too few labelled payments to train (a seeded copy)' end,
          to_timestamp(g.ms / 1000.0),
          case when g.n % 10 = 0 then null else to_timestamp(g.ms / 1000.0 + 20) end, null
        from g cross join (select * from risk_models where id = $2::uuid) t`,
      params: [counts.models - 1, seeded.modelId],
    },
    // As autovacuum would after this many rows: PGlite runs none, and without statistics the
    // planner took the 10,000-row mode for 50 rows and sorted it all for a page of 25
    // (assessments list: 38 ms before, 0.1 ms after; docs/console.md, "Load times").
    { query: "analyze assessments, payments, reviews, risk_models", params: [] },
  ]);
  return {
    assessments: results[1]?.rowCount ?? 0,
    reviews: results[2]?.rowCount ?? 0,
    models: results[3]?.rowCount ?? 0,
    ms: Date.now() - started,
  };
}
