import { createLocalJWKSet, jwtVerify } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { FEATURE_NAMES } from "../../src/model/features";
import { historyRecords } from "../support/payment-history";
import { call, newOrg, type TestOrg } from "./support/api";
import { assessOk, fetchWith } from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";
import { entriesOf, seedHistory, settled, TRAINING, trainModel } from "./support/risk-models";
import { assessOnce } from "./support/routes";

// docs/risk-model.md, "The API: training, activating, shadowing a model".

const DAY_MS = 86_400_000;
const AS_OF = Date.parse("2026-10-01T00:00:00.000Z");

async function verifiedCard(card: string | null) {
  if (card === null) throw new Error("the model has no card");
  const jwks = await call("/.well-known/jwks.json");
  const { payload, protectedHeader } = await jwtVerify(
    card,
    createLocalJWKSet(jwks.json as never),
    {
      typ: "risk-model-card+jwt",
    },
  );
  return { payload, protectedHeader };
}

/** An org with 30 days of live history before AS_OF, and an owner's session to call with. */
async function orgWithHistory(seed = 1) {
  const org = await newOrg();
  const history = await seedHistory(org.id, true, { asOf: AS_OF, seed });
  return { org, history, as: { token: org.token } };
}

describe("POST /v1/risk-models", () => {
  let org: TestOrg;
  let model: any;

  beforeAll(async () => {
    ({ org } = await orgWithHistory());
    model = await trainModel({ token: org.token }, { as_of: new Date(AS_OF).toISOString() });
  });

  it("answers 202 with the model in training, then the consumer trains it to ready", async () => {
    const res = await call("/v1/risk-models", {
      method: "POST",
      token: org.token,
      body: { ...TRAINING, as_of: new Date(AS_OF).toISOString(), review_precision: 0.3 },
    });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: "risk_model",
      livemode: true,
      status: "training",
      version: null,
      created: expect.any(String),
      as_of: "2026-10-01T00:00:00.000Z",
      test_clock: null,
      label_delay: TRAINING.label_delay,
      training_window: TRAINING.training_window,
      targets: { review_precision: 0.3, deny_precision: 0.9 },
      counts: null,
      features: null,
      metrics: null,
      failure_reason: null,
      trained_at: null,
      activated_at: null,
      card: expect.any(String),
    });
    const done = await settled({ token: org.token }, res.json.id);
    expect(done.status).toBe("ready");
  });

  it("stores counts, features and held-out metrics with thresholds", () => {
    expect(model.status).toBe("ready");
    expect(model.failure_reason).toBeNull();
    expect(model.trained_at).toEqual(expect.any(String));
    expect(model.counts.rows).toBeGreaterThan(500);
    expect(model.counts.positives).toBeGreaterThan(40);
    expect(model.counts.held_out.rows).toBeGreaterThan(100);
    expect(model.features?.map((f: { name: string }) => f.name).sort()).toEqual(
      [...FEATURE_NAMES].sort(),
    );
    expect(model.features[0].importance).toBeGreaterThan(0);
    const { metrics } = model;
    // The seeded frauds are learnable (compromised payees, large amounts).
    expect(metrics.auc_roc).toBeGreaterThan(0.8);
    expect(metrics.average_precision).toBeGreaterThan(0.4);
    expect(metrics.brier_score).toBeLessThan(0.2);
    expect(metrics.calibration.length).toBeGreaterThan(0);
    for (const level of ["review", "deny"] as const) {
      expect(metrics.thresholds[level]).toEqual({
        probability: expect.any(Number),
        precision: expect.toBeOneOf([null, expect.any(Number)]),
        recall: expect.any(Number),
        fire_rate: expect.any(Number),
      });
    }
    expect(metrics.thresholds.deny.probability).toBeGreaterThanOrEqual(
      metrics.thresholds.review.probability,
    );
    // The pictures: the curves, and the money each threshold would have caught, in the
    // history's one currency.
    expect(metrics.roc.length).toBeGreaterThan(1);
    expect(metrics.roc.length).toBeLessThanOrEqual(100);
    expect(metrics.pr.length).toBeGreaterThan(1);
    expect(metrics.caught.slice).toMatchObject({
      payments: model.counts.held_out.rows,
      frauds: model.counts.held_out.positives,
      amounts: [{ currency: "USD", fraud: expect.any(Number), good: expect.any(Number) }],
    });
    expect(metrics.caught.slice.amounts[0].fraud).toBeGreaterThan(0);
    expect(metrics.caught.thresholds.map((t: { probability: number }) => t.probability)).toContain(
      metrics.thresholds.review.probability,
    );
  });

  it("stores the parameters the assess path reads, served with the card's digest", async () => {
    const res = await call(`/v1/risk-models/${model.id}/params`, { token: org.token });
    expect(res.status).toBe(200);
    expect(res.json.params.kind).toBe("boosted_trees");
    expect(res.json.params.width).toBe(FEATURE_NAMES.length);
    expect(res.json.params.trees.length).toBeGreaterThan(0);
    const { payload } = await verifiedCard(model.card);
    expect(res.json.params_digest).toBe(payload.params_digest);
    expect(res.json.params_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const [row] = await ownerSql`select metrics->'thresholds' as thresholds, params->>'kind' as kind
      from risk_models where id = ${model.id}`;
    expect(row?.thresholds).toEqual(model.metrics.thresholds);
    expect(row?.kind).toBe("boosted_trees");
  });

  it("signs a model card over the trained model, verifiable with the service's key set", async () => {
    const { payload } = await verifiedCard(model.card);
    expect(payload).toEqual({
      model_id: model.id,
      org_id: org.id,
      livemode: true,
      status: "ready",
      version: null,
      as_of: "2026-10-01T00:00:00.000Z",
      label_delay: TRAINING.label_delay,
      training_window: TRAINING.training_window,
      params_digest: expect.stringMatching(/^sha256:/),
      counts: model.counts,
      metrics: {
        auc_roc: model.metrics.auc_roc,
        average_precision: model.metrics.average_precision,
        card_precision_at_100: model.metrics.card_precision_at_100,
        brier_score: model.metrics.brier_score,
        thresholds: model.metrics.thresholds,
      },
      iat: expect.any(Number),
    });
  });

  it("records the creation and the training as ledger entries, the training by the system", async () => {
    expect(await entriesOf(org.id, model.id)).toEqual([
      { type: "risk_model.created", actor_type: "user", actor_id: expect.any(String) },
      { type: "risk_model.trained", actor_type: "system", actor_id: "risk-model-training" },
    ]);
  });

  it("does not return the parameters with the model, and lists the mode's models", async () => {
    const one = await call(`/v1/risk-models/${model.id}`, { token: org.token });
    expect(one.status).toBe(200);
    expect(one.json).not.toHaveProperty("params");
    const list = await call("/v1/risk-models?limit=1&status=ready", { token: org.token });
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.has_more).toBe(true);
    const rest = await call(`/v1/risk-models?status=ready&cursor=${list.json.next_cursor}`, {
      token: org.token,
    });
    const ids = [...list.json.data, ...rest.json.data].map((m) => m.id);
    expect(ids).toContain(model.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ends failed with the reason when the history is too small", async () => {
    const empty = await newOrg();
    const failed = await trainModel({ token: empty.token });
    expect(failed.status).toBe("failed");
    expect(failed.failure_reason).toMatch(/^too few labelled payments to train/);
    expect(failed.counts).toMatchObject({ rows: 0, positives: 0 });
    expect(failed.metrics).toBeNull();
    expect((await verifiedCard(failed.card)).payload.status).toBe("failed");
    expect((await entriesOf(empty.id, failed.id)).map((e) => e.type)).toEqual([
      "risk_model.created",
      "risk_model.failed",
    ]);
    const params = await call(`/v1/risk-models/${failed.id}/params`, { token: empty.token });
    expect(params.status).toBe(409);
    expect(params.error).toEqual(errorBody("risk_model_not_trained", expect.anything()));
  });

  it("trains only on what was known as of as_of: labels known later do not exist", async () => {
    // The same history, every label known a year after the payment: no fraud is known yet.
    const late = await newOrg();
    await seedHistory(late.id, true, { asOf: AS_OF, labelAfterMs: 365 * DAY_MS });
    const failed = await trainModel(
      { token: late.token },
      { as_of: new Date(AS_OF).toISOString() },
    );
    expect(failed.status).toBe("failed");
    expect(failed.counts?.positives).toBe(0);
    expect(failed.counts?.rows).toBeGreaterThan(500);
  });

  it("marks the model failed and answers 503 when the training queue cannot take it", async () => {
    const res = await fetchWith({ TRAINING_QUEUE: undefined }, "/v1/risk-models", {
      method: "POST",
      headers: { authorization: `Bearer ${org.token}`, "content-type": "application/json" },
      body: JSON.stringify(TRAINING),
    });
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("training_queue_unavailable"));
    const [row] = await ownerSql`select id, status, failure_reason from risk_models
      where org_id = ${org.id} order by created_at desc, id desc limit 1`;
    expect(row).toMatchObject({
      status: "failed",
      failure_reason: "the training queue could not take the model",
    });
    expect((await entriesOf(org.id, row?.id)).map((e) => e.type)).toEqual([
      "risk_model.created",
      "risk_model.failed",
    ]);
  });

  it("refuses a bad request with the field named", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ as_of: new Date(Date.now() + DAY_MS).toISOString() }, "as_of"],
      [{ as_of: new Date(AS_OF).toISOString(), test_clock: crypto.randomUUID() }, "test_clock"],
      [{ label_delay: -1 }, "label_delay"],
      [{ training_window: 0 }, "training_window"],
      [{ review_precision: 0 }, "review_precision"],
      [{ deny_precision: 1.5 }, "deny_precision"],
      [{ surprise: true }, ""],
    ];
    for (const [body, path] of cases) {
      const res = await call("/v1/risk-models", {
        method: "POST",
        token: org.token,
        raw: true,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.error).toBe("invalid_request");
      if (path) expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });
});

describe("test clocks and modes", () => {
  it("trains as of a test clock's frozen time with a test key; a live key gets 400", async () => {
    const org = await newOrg();
    const test = await org.key(["policy:read", "policy:write"], "test");
    const live = await org.key(["policy:read", "policy:write"], "live");
    const clock = crypto.randomUUID();
    await ownerSql`insert into test_clocks (id, org_id, frozen_time, created_at)
      values (${clock}, ${org.id}, ${new Date(AS_OF).toISOString()}, now())`;
    await seedHistory(org.id, false, { asOf: AS_OF, seed: 2 });

    const refused = await call("/v1/risk-models", {
      method: "POST",
      key: live.key,
      body: { test_clock: clock },
    });
    expect(refused.status).toBe(400);
    expect(refused.error.details).toEqual([{ path: "test_clock", message: expect.any(String) }]);

    const unknown = await call("/v1/risk-models", {
      method: "POST",
      key: test.key,
      body: { test_clock: crypto.randomUUID() },
    });
    expect(unknown.status).toBe(400);

    const model = await trainModel({ key: test.key }, { test_clock: clock });
    expect(model).toMatchObject({
      livemode: false,
      status: "ready",
      as_of: "2026-10-01T00:00:00.000Z",
      test_clock: clock,
    });

    // A test model is never the live mode's: not listed, not found, not activated.
    const listed = await call("/v1/risk-models", { key: live.key });
    expect(listed.json.data).toEqual([]);
    expect((await call(`/v1/risk-models/${model.id}`, { key: live.key })).status).toBe(404);
    const activated = await call(`/v1/risk-models/${model.id}/activate`, {
      method: "POST",
      key: live.key,
    });
    expect(activated.status).toBe(404);
    // The live history is empty: a live model fails, the test history is not read.
    expect(
      (await trainModel({ key: live.key }, { as_of: new Date(AS_OF).toISOString() })).status,
    ).toBe("failed");
  });

  it("answers 404 for another org's model", async () => {
    const org = await newOrg();
    const other = await newOrg();
    const model = await trainModel({ token: org.token });
    for (const path of ["", "/params", "/shadow-report"]) {
      const res = await callAny(`/v1/risk-models/${model.id}${path}`, other.token);
      expect(res.status, path).toBe(404);
    }
    for (const step of ["activate", "shadow"]) {
      const res = await call(`/v1/risk-models/${model.id}/${step as "activate"}`, {
        method: "POST",
        token: other.token,
      });
      expect(res.status, step).toBe(404);
    }
  });
});

function callAny(path: string, token: string) {
  return call(path as `/v1/risk-models/${string}`, { token });
}

describe("activation, shadowing and rollback", () => {
  let org: TestOrg;
  let a: any;
  let b: any;
  let failed: any;

  beforeAll(async () => {
    ({ org } = await orgWithHistory(3));
    const asOf = new Date(AS_OF).toISOString();
    [a, b] = await Promise.all([
      trainModel({ token: org.token }, { as_of: asOf }),
      trainModel({ token: org.token }, { as_of: asOf, deny_precision: 0.95 }),
    ]);
    failed = await trainModel(
      { token: org.token },
      { as_of: new Date(AS_OF - 40 * DAY_MS).toISOString() },
    );
  });

  const activate = (id: string) =>
    call(`/v1/risk-models/${id}/activate`, { method: "POST", token: org.token });
  const shadow = (id: string) =>
    call(`/v1/risk-models/${id}/shadow`, { method: "POST", token: org.token });
  const statuses = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await ownerSql`select id, status, version from risk_models where org_id = ${org.id}`).map(
        (r) => [r.id, `${r.status}:${r.version}`],
      ),
    );

  it("activates, retires the previous one, and rolls back with a new version", async () => {
    expect([a.status, b.status, failed.status]).toEqual(["ready", "ready", "failed"]);
    const first = await activate(a.id);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ status: "active", version: 1 });
    expect(first.json.activated_at).toEqual(expect.any(String));
    expect((await verifiedCard(first.json.card)).payload).toMatchObject({
      status: "active",
      version: 1,
    });

    // Activating the active model changes nothing.
    const again = await activate(a.id);
    expect(again.json).toEqual(first.json);

    const second = await activate(b.id);
    expect(second.json).toMatchObject({ status: "active", version: 2 });
    expect(await statuses()).toMatchObject({ [a.id]: "retired:1", [b.id]: "active:2" });
    const retired = await call(`/v1/risk-models/${a.id}`, { token: org.token });
    expect((await verifiedCard(retired.json.card)).payload.status).toBe("retired");

    // Rollback: the earlier model again, with the next version.
    const rollback = await activate(a.id);
    expect(rollback.json).toMatchObject({ status: "active", version: 3 });
    expect(await statuses()).toMatchObject({ [a.id]: "active:3", [b.id]: "retired:2" });

    expect((await entriesOf(org.id, a.id)).map((e) => e.type)).toEqual([
      "risk_model.created",
      "risk_model.trained",
      "risk_model.activated",
      "risk_model.retired",
      "risk_model.activated",
    ]);
  });

  it("refuses to activate or shadow a model that is training or failed (409)", async () => {
    for (const step of [activate, shadow]) {
      const res = await step(failed.id);
      expect(res.status).toBe(409);
      expect(res.error.error).toBe("risk_model_not_trained");
    }
    const training = await call("/v1/risk-models", {
      method: "POST",
      token: org.token,
      body: TRAINING,
    });
    const res = await activate(training.json.id);
    // Training is quick; while it lasts the model cannot be activated.
    if (res.status !== 200) expect(res.error.error).toBe("risk_model_not_trained");
    await settled({ token: org.token }, training.json.id);
  });

  it("shadows a trained model beside the active one; the active one cannot be shadowed", async () => {
    const current = await call(`/v1/risk-models/${a.id}`, { token: org.token });
    const active = current.json.status === "active" ? a : b;
    const other = active === a ? b : a;
    const refused = await shadow(active.id);
    expect(refused.status).toBe(409);
    expect(refused.error.error).toBe("risk_model_active");

    const shadowed = await shadow(other.id);
    expect(shadowed.status).toBe(200);
    expect(shadowed.json.status).toBe("shadow");
    expect((await verifiedCard(shadowed.json.card)).payload.status).toBe("shadow");
    expect((await shadow(other.id)).json).toEqual(shadowed.json);

    // Another shadow takes the slot: the previous one returns to ready.
    const third = await trainModel({ token: org.token }, { as_of: new Date(AS_OF).toISOString() });
    const next = await shadow(third.id);
    expect(next.json.status).toBe("shadow");
    expect(await statuses()).toMatchObject({
      [other.id]: `ready:${other.id === a.id ? "3" : "2"}`,
      [third.id]: "shadow:null",
    });
    expect((await entriesOf(org.id, other.id)).map((e) => e.type).slice(-2)).toEqual([
      "risk_model.shadowed",
      "risk_model.unshadowed",
    ]);

    // The shadow model can be activated: it leaves the shadow slot.
    const promoted = await activate(third.id);
    expect(promoted.json.status).toBe("active");
    expect(Object.values(await statuses()).filter((s) => s.startsWith("shadow"))).toEqual([]);
  });

  it("leaves exactly one active model when activations race", async () => {
    const answers = await Promise.all([activate(a.id), activate(b.id), activate(a.id)]);
    for (const res of answers) {
      expect([200, 409]).toContain(res.status);
      if (res.status === 409) expect(res.error.error).toBe("risk_model_activation_conflict");
    }
    const rows = await ownerSql`select id, version from risk_models
      where org_id = ${org.id} and livemode and status = 'active'`;
    expect(rows).toHaveLength(1);
  });
});

describe("GET /v1/risk-models/{id}/shadow-report", () => {
  it("counts agreement and what the model and the decisions would have caught", async () => {
    const { org } = await orgWithHistory(4);
    const model = await trainModel({ token: org.token }, { as_of: new Date(AS_OF).toISOString() });
    expect(
      (await call(`/v1/risk-models/${model.id}/shadow`, { method: "POST", token: org.token }))
        .status,
    ).toBe(200);
    // Assessments the shadow model scored (as the assess path records it), two labelled.
    const made = [];
    for (const [decision, probability, label] of [
      ["deny", 0.95, "fraud"],
      ["approve", 0.05, "legitimate"],
      ["review", 0.6, null],
    ] as const) {
      const { assessmentId } = await assessOnce(org);
      made.push({ assessmentId, decision, probability, label });
    }
    for (const m of made) {
      const verdict = {
        id: model.id,
        version: null,
        probability: m.probability,
        risk_score: Math.round(m.probability * 100),
        decision: m.decision,
      };
      await ownerSql`update assessments set shadow_model = ${JSON.stringify(verdict)}::jsonb
        where id = ${m.assessmentId}`;
      if (m.label) {
        await ownerSql`insert into payment_labels (id, org_id, payment_id, livemode, label,
            known_at, source)
          values (${crypto.randomUUID()}, ${org.id}, ${m.assessmentId}, true, ${m.label}, now(),
            'import')`;
      }
    }
    const actual = await ownerSql`select id, decision from assessments
      where id = any(${made.map((m) => m.assessmentId)}::uuid[])`;
    const decisionOf = new Map(actual.map((r) => [r.id, r.decision as string]));
    const agreed = made.filter((m) => decisionOf.get(m.assessmentId) === m.decision).length;

    const res = await call(`/v1/risk-models/${model.id}/shadow-report?samples=10`, {
      token: org.token,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: "risk_model_shadow_report",
      model: { id: model.id, status: "shadow", version: null },
      livemode: true,
      shadowed: 3,
      agreed,
      disagreed: 3 - agreed,
      labels: { fraud: 1, legitimate: 1, unlabeled: 1 },
      model_catch: {
        review: { alerts: 2, labeled_alerts: 1, frauds: 1, precision: 1, recall: 1 },
        deny: { alerts: 1, labeled_alerts: 1, frauds: 1, precision: 1, recall: 1 },
      },
    });
    expect(res.json.samples).toHaveLength(3 - agreed);
    const test = await org.key(["policy:read"], "test");
    const other = await call(`/v1/risk-models/${model.id}/shadow-report`, { key: test.key });
    expect(other.status).toBe(404);
  });
});

describe("a trained model on the assess path", () => {
  it("scores every assessment once active; the shadow's verdicts feed its report", async () => {
    const { org } = await orgWithHistory(5);
    const { key } = await org.key();
    const asOf = new Date(AS_OF).toISOString();
    const [active, shadow] = await Promise.all([
      trainModel({ token: org.token }, { as_of: asOf }),
      trainModel({ token: org.token }, { as_of: asOf, review_precision: 0.5 }),
    ]);
    const step = (id: string, name: "activate" | "shadow") =>
      call(`/v1/risk-models/${id}/${name}`, { method: "POST", token: org.token });
    expect((await step(active.id, "activate")).status).toBe(200);
    expect((await step(shadow.id, "shadow")).status).toBe(200);

    const agent = await newAgent(org);
    const assessed = await assessOk(key, {
      mandate: {
        vct: "mandate.payment.1",
        transaction_id: `tx-${crypto.randomUUID()}`,
        payee: { id: "payee-5-1", name: "Payee" },
        payment_amount: { amount: 5000, currency: "USD" },
        payment_instrument: { id: "stub", type: "card", description: "Card" },
      },
      agent_id: agent.id,
    } as never);
    const outcome = (assessed as { outcome: any }).outcome;
    expect(outcome.outcome.model).toEqual({
      id: active.id,
      version: 1,
      probability: expect.any(Number),
    });
    const [row] = await ownerSql`select shadow_model from assessments where id = ${outcome.id}`;
    expect(row?.shadow_model).toMatchObject({ id: shadow.id, version: null });

    const report = await call(`/v1/risk-models/${shadow.id}/shadow-report`, { token: org.token });
    expect(report.json).toMatchObject({
      shadowed: 1,
      labels: { fraud: 0, legitimate: 0, unlabeled: 1 },
    });
    // The active model shadowed nothing.
    const none = await call(`/v1/risk-models/${active.id}/shadow-report`, { token: org.token });
    expect(none.json.shadowed).toBe(0);
  });
});

describe("the retro study through the API", () => {
  it("imports history, trains as of a test clock, activates, and scores at the clock", async () => {
    const org = await newOrg();
    const { key } = await org.key(undefined, "test");
    const agents: string[] = [];
    for (let i = 0; i < 8; i++) agents.push((await newAgent(org)).id);
    const records = historyRecords(agents, { asOf: AS_OF, seed: 9 });
    const imported = await call("/v1/history/transactions", {
      method: "POST",
      key,
      body: { records },
    });
    expect(imported.status).toBe(201);
    const clock = await call("/v1/test-clocks", {
      method: "POST",
      key,
      body: { frozen_time: new Date(AS_OF).toISOString() },
    });
    expect(clock.status).toBe(201);

    const model = await trainModel({ key }, { test_clock: clock.json.id });
    expect(model).toMatchObject({ status: "ready", livemode: false, test_clock: clock.json.id });
    expect(model.counts?.events_considered).toBe(records.length);
    expect(model.counts?.positives).toBeGreaterThan(40);
    const activated = await call(`/v1/risk-models/${model.id}/activate`, { method: "POST", key });
    expect(activated.json.status).toBe("active");

    const assessed = await assessOk(key, {
      mandate: {
        vct: "mandate.payment.1",
        transaction_id: `tx-${crypto.randomUUID()}`,
        payee: { id: "payee-9-0", name: "Payee" },
        payment_amount: { amount: 5000, currency: "USD" },
        payment_instrument: { id: "stub", type: "card", description: "Card" },
      },
      agent_id: agents[0],
      test_clock: clock.json.id,
    } as never);
    const outcome = (assessed as { outcome: any }).outcome;
    expect(outcome.created).toBe(new Date(AS_OF).toISOString());
    expect(outcome.outcome.model).toEqual({
      id: model.id,
      version: activated.json.version,
      probability: expect.any(Number),
    });
    // payee-9-0 is one of the compromised payees of the history: its known frauds count.
    expect(outcome.outcome.model.probability).toBeGreaterThan(
      model.metrics?.thresholds.review.probability ?? 1,
    );
  });
});
