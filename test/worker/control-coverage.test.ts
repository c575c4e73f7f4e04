import { runInDurableObject } from "cloudflare:test";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CAPTURE, decide } from "./support/action";
import { call, callRaw, newOrg } from "./support/api";
import { jcs, jwks, orgWithKey } from "./support/assess";
import {
  actionSetup,
  assessment,
  decision,
  deniedAssessment,
  digestOf,
  effect,
  gap,
  type Json,
  ofEffect,
  redeemed,
  reportEffect,
  reportEffectRaw,
  verifyCompact,
} from "./support/coverage";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { ledger, sequenceOnly } from "./support/ledger";

/** The ledger object's store, reached into to expire attachments as a day would. */
interface Pruning {
  store: { pruneAttachments(before: number): void };
}

// docs/control-coverage.md: observers report effects; each is matched to the gate
// it names; the coverage lists every gap; the report signs it with its disclosures.

/** What every report discloses, word for word (docs/control-coverage.md#the-signed-report). */
const DISCLOSURES = {
  observed:
    "Effects are what executors and observers reported through POST /v1/control-coverage/effects; " +
    "that they happened, when, and their references are the observers' statements, not the service's.",
  gated:
    "An effect is gated when it names a gate this service holds, every check below passes, and no " +
    "earlier effect claimed the same gate. Gated by assessment: an assessment of the same mode that " +
    "decided approve, made no later than the second in which the effect occurred; when the assessment " +
    "has an amount, the effect states the same amount and currency (the payee is not compared). " +
    "Gated by redemption: an ALLOW decision whose grant was redeemed before it expired, by the " +
    "credential the grant names, in the effect's mode, no later than the second in which the effect " +
    "occurred; the effect states the decision's action and resource, and its amount and currency " +
    "when the decision has them, all equal to the decision's, as the redemption does.",
  cannot_prove: [
    "A valid signature proves what the service signed; it does not prove that an external payment rail executed the effect.",
    "Only a matching, unexpired grant redemption proves that a connected executor accepted the gate: only effects.gated_by_redemption and redemption_coverage_ratio count such proof; an approved assessment (effects.gated_by_assessment, included in coverage_ratio) proves only that the service approved the request.",
    "Effects no observer reported are not in this report: a side effect that bypassed every observer cannot appear in it.",
    "An ungated effect is not proof of a violation, and a gated one is not proof of compliance beyond the checks named: observers can omit or mistake a gate.",
    "Effects reported after generated_at, when this computation began, may be absent from this report even if they occurred in the period.",
    "Action decisions and grants have no test or live mode of their own: the grant counts and gate_never_redeemed cover both modes, a grant's single use is checked across both, and its mode is the redeeming credential's.",
  ],
};

/** The effect counts when nothing is gated. */
const ungatedOnly = (n: number) => ({
  observed: n,
  gated: 0,
  gated_by_redemption: 0,
  gated_by_assessment: 0,
  ungated: n,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function auditEntry(orgId: string, id: string) {
  const [row] = (await ownerSql`
    select type, subject_type, subject_id, digest, sequence::int as sequence from audit_entries
    where org_id = ${orgId} and id = ${id}`) as Record<string, any>[];
  return row;
}

describe("POST /v1/control-coverage/effects", () => {
  it("records an effect, in the ledger in the same write, and answers 201 with the record", async () => {
    const org = await newOrg();
    const { id: keyId, key } = await org.key();
    const body = effect({
      occurred_at: "2026-01-02T03:04:05.678+01:00",
      action: "payment.capture",
      resource: "merchant:acme/order-1",
      amount: 1000,
      currency: "USD",
      gate: { grant_id: "0190B7D2-8C5E-7C4A-9D3E-1F2A3B4C5D6E" },
      metadata: { order: "1" },
    });
    const res = await reportEffect(key, body);
    expect(res.status).toBe(201);
    const { audit, ...payload } = res.json;
    expect(res.json).toEqual({
      object: "control_effect",
      id: expect.stringMatching(UUID),
      effect: "payment.executed",
      observer: "stripe-webhook",
      reference: body.reference,
      occurred_at: "2026-01-02T02:04:05.678Z",
      action: "payment.capture",
      resource: "merchant:acme/order-1",
      amount: 1000,
      currency: "USD",
      gate: { grant_id: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e" },
      metadata: { order: "1" },
      reported_by: { type: "api_key", id: keyId },
      created: expect.stringMatching(/Z$/),
      livemode: true,
      audit: { entry_id: expect.stringMatching(UUID), sequence: expect.any(Number) },
    });
    expect(await auditEntry(org.id, audit.entry_id)).toEqual({
      type: "control_effect.observed",
      subject_type: "control_effect",
      subject_id: res.json.id,
      digest: digestOf(payload),
      sequence: audit.sequence,
    });
    const got = await call(`/v1/control-coverage/effects/${res.json.id}`, { key });
    expect(got.status).toBe(200);
    const { match, ...record } = got.json;
    expect(record).toEqual(res.json);
    expect(match.status).toBe("ungated");
  });

  it("answers a repeat of the same observer and reference with 200 and the first record", async () => {
    const { org, key } = await orgWithKey();
    const body = effect();
    const first = await reportEffect(key, body);
    expect(first.status).toBe(201);
    const again = await reportEffect(key, {
      ...body,
      effect: "message.sent",
      amount: 5,
      currency: "EUR",
    });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    const other = await reportEffect(key, { ...body, observer: "ledger-reconciler" });
    expect(other.status).toBe(201);
    const [row] = (await ownerSql`
      select count(*)::int as effects,
        (select count(*)::int from audit_entries
          where org_id = ${org.id} and type = 'control_effect.observed') as entries
      from control_effects where org_id = ${org.id}`) as Record<string, number>[];
    expect(row).toEqual({ effects: 2, entries: 2 });
  });

  it("records concurrent duplicates once", async () => {
    const { org, key } = await orgWithKey();
    const body = effect();
    const answers = await Promise.all([1, 2, 3, 4].map(() => reportEffect(key, body)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(answers.map((a) => JSON.stringify(a.json))).size).toBe(1);
    const rows = await ownerSql`select id from control_effects where org_id = ${org.id}`;
    expect(rows).toHaveLength(1);
  });

  it.each([
    ["an unknown field", { colour: "red" }, ""],
    ["a bad effect name", { effect: "Payment" }, "effect"],
    ["an amount without currency", { amount: 5 }, "currency"],
    ["a lowercase currency", { amount: 5, currency: "usd" }, "currency"],
    ["a negative amount", { amount: -1, currency: "USD" }, "amount"],
    [
      "two gates at once",
      { gate: { grant_id: crypto.randomUUID(), assessment_id: crypto.randomUUID() } },
      "gate",
    ],
    ["a gate id that is no uuid", { gate: { decision_id: "d-1" } }, "gate.decision_id"],
    ["an empty gate", { gate: {} }, "gate"],
    ["a time without offset", { occurred_at: "2026-01-02T03:04:05" }, "occurred_at"],
    ["an empty observer", { observer: " " }, "observer"],
  ])("answers 400 to %s", async (_, changes, path) => {
    const { org, key } = await orgWithKey();
    const res = await reportEffectRaw(key, { ...effect(), ...changes });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: any) => d.path)).toContain(path);
    expect(await ownerSql`select id from control_effects where org_id = ${org.id}`).toEqual([]);
  });

  it("answers 400 with one detail to an amount beyond 2^53 − 1", async () => {
    const { key } = await orgWithKey();
    const res = await reportEffectRaw(key, effect({ amount: 2 ** 53, currency: "USD" }));
    expect(res.status).toBe(400);
    expect(res.error.details.map((d: any) => d.path)).toEqual(["amount"]);
  });

  it("answers 400 to an effect more than a minute in the future", async () => {
    const { key } = await orgWithKey();
    const later = new Date(Date.now() + 120_000).toISOString();
    const res = await reportEffect(key, effect({ occurred_at: later }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "occurred_at", message: "must not be in the future" }]),
    );
  });
});

describe("GET /v1/control-coverage/effects", () => {
  it("lists the mode's effects newest first, with filters and pages", async () => {
    const { org, key } = await orgWithKey();
    const a = (await reportEffect(key, effect())).json;
    const b = (await reportEffect(key, effect({ gate: { assessment_id: crypto.randomUUID() } })))
      .json;
    const c = (await reportEffect(key, effect({ effect: "message.sent", observer: "smtp" }))).json;
    const test = await org.key(undefined, "test");
    await reportEffect(test.key, effect());

    const all = await call("/v1/control-coverage/effects?limit=2", { key });
    expect(all.status).toBe(200);
    expect(all.json.data).toEqual([c, b]);
    expect(all.json.has_more).toBe(true);
    const next = await call(`/v1/control-coverage/effects?limit=2&cursor=${all.json.next_cursor}`, {
      key,
    });
    expect(next.json).toEqual({ object: "list", data: [a], has_more: false, next_cursor: null });

    const withoutGate = await call("/v1/control-coverage/effects?has_gate=false", { key });
    expect(withoutGate.json.data).toEqual([c, a]);
    const withGate = await call("/v1/control-coverage/effects?has_gate=true", { key });
    expect(withGate.json.data).toEqual([b]);
    const smtp = await call("/v1/control-coverage/effects?observer=smtp", { key });
    expect(smtp.json.data).toEqual([c]);
    const byRef = await call(`/v1/control-coverage/effects?reference=${a.reference}`, { key });
    expect(byRef.json.data).toEqual([a]);
  });

  it("keeps test and live apart: another mode's effect is not found", async () => {
    const { org, key } = await orgWithKey();
    const test = await org.key(undefined, "test");
    const body = effect();
    const live = await reportEffect(key, body);
    const inTest = await reportEffect(test.key, body);
    // The same observer and reference in the other mode is another effect, not a repeat.
    expect([live.status, inTest.status]).toEqual([201, 201]);
    expect(inTest.json.livemode).toBe(false);
    const missing = await call(`/v1/control-coverage/effects/${live.json.id}`, { key: test.key });
    expect(missing.status).toBe(404);
    const list = await call("/v1/control-coverage/effects", { key: test.key });
    expect(list.json.data).toEqual([inTest.json]);
  });
});

describe("GET /v1/control-coverage", () => {
  it("matches every effect to its gate and lists exactly the gaps of a known world", async () => {
    const { org, key } = await orgWithKey();
    const period = { from: new Date(Date.now() - 7_200_000).toISOString() };

    // Gates: two approved assessments and a denied one; ALLOWs with grants (three redeemed,
    // one never), a DENY.
    const a1 = await assessment(org, key);
    const a3 = await assessment(org, key);
    const a2 = await deniedAssessment(org, key);
    expect([a1.decision, a3.decision, a2.decision]).toEqual(["approve", "approve", "deny"]);
    const setup = await actionSetup(org);
    const d1 = await decision(setup, "merchant:acme/order-1");
    const r1 = await redeemed(setup, d1);
    const d2 = await decision(setup, "merchant:acme/order-2");
    const d3 = await decision(setup, "merchant:acme/order-3", { amount: 6000 });
    expect(d3.decision).toBe("DENY");
    const d4 = await decision(setup, "merchant:acme/order-4");
    const r4 = await redeemed(setup, d4);
    const d5 = await decision(setup, "merchant:acme/order-5");
    const r5 = await redeemed(setup, d5);
    // Unredeemed but not yet expired: not a gap (yet).
    await decision(setup, "merchant:acme/order-6");
    // Seeded as an insider could: d2's grant has expired unredeemed, d5's grant "expired" a
    // second before its redemption (the service refuses that; the evidence check must not
    // trust it did).
    const d2Expiry = new Date(Date.now() - 60_000).toISOString();
    const d5Expiry = new Date(Date.parse(r5!.redeemed_at) - 1000).toISOString();
    await ownerSql`update action_decisions set grant_expires_at = ${d2Expiry} where id = ${d2.id}`;
    await ownerSql`update action_decisions set grant_expires_at = ${d5Expiry} where id = ${d5.id}`;

    // Effects, a second apart, all after every gate but e10.
    const t0 = Date.now() + 1000;
    const at = (i: number) => new Date(t0 + i * 1000).toISOString();
    const capture = (o: number) => ({
      action: "payment.capture",
      resource: `merchant:acme/order-${o}`,
      amount: 1000,
      currency: "USD",
    });
    const report = async (changes: Record<string, unknown>) => {
      const res = await reportEffect(key, effect(changes));
      expect(res.status).toBe(201);
      return res.json;
    };
    const usd = { amount: 19900, currency: "USD" };
    const e10 = await report({
      occurred_at: new Date(Date.parse(a3.outcome.created) - 3_600_000).toISOString(),
      gate: { assessment_id: a3.assessmentId },
      ...usd,
    });
    const e1 = await report({
      occurred_at: at(1),
      gate: { assessment_id: a1.assessmentId },
      ...usd,
    });
    const e2 = await report({
      occurred_at: at(2),
      gate: { assessment_id: a2.assessmentId },
      ...usd,
    });
    const e3 = await report({
      occurred_at: at(3),
      gate: { grant_id: d1.grant!.id },
      ...capture(1),
    });
    const e4 = await report({ occurred_at: at(4), gate: { decision_id: d1.id }, ...capture(1) });
    const e5 = await report({
      occurred_at: at(5),
      gate: { grant_id: d2.grant!.id },
      ...capture(2),
    });
    const e6 = await report({
      occurred_at: at(6),
      gate: { decision_id: d3.id },
      ...capture(3),
      amount: 6000,
    });
    const e7 = await report({ occurred_at: at(7) });
    const missing = crypto.randomUUID();
    const e8 = await report({ occurred_at: at(8), gate: { assessment_id: missing } });
    const e9 = await report({
      occurred_at: at(9),
      gate: { grant_id: d4.grant!.id },
      ...capture(4),
      amount: 2000,
    });
    const e11 = await report({
      occurred_at: at(11),
      gate: { grant_id: d5.grant!.id },
      ...capture(5),
    });

    const to = new Date(t0 + 60_000).toISOString();
    const res = await call(`/v1/control-coverage?from=${period.from}&to=${to}`, { key });
    expect(res.status).toBe(200);
    const grant = (d: any) => ({ decision_id: d.id, grant_id: d.grant.id });
    expect(res.json).toEqual({
      object: "control_coverage",
      livemode: true,
      period: { from: period.from, to },
      effects: {
        observed: 11,
        gated: 2,
        gated_by_redemption: 1,
        gated_by_assessment: 1,
        ungated: 9,
      },
      gates: { approved_assessments: 2, grants_issued: 5, grants_redeemed: 3 },
      coverage_ratio: 2 / 11,
      redemption_coverage_ratio: 1 / 11,
      truncated: false,
      gaps: [
        gap("effect_before_gate", `assessed at ${a3.outcome.created}`, {
          ...ofEffect(e10),
          assessment_id: a3.assessmentId,
        }),
        gap("gate_not_approved", "the assessment decided deny", {
          ...ofEffect(e2),
          assessment_id: a2.assessmentId,
        }),
        gap("gate_reused", `the effect ${e3.id} claimed this gate first`, {
          ...ofEffect(e4),
          ...grant(d1),
        }),
        gap("grant_not_redeemed", "the grant was never redeemed", {
          ...ofEffect(e5),
          ...grant(d2),
        }),
        gap("gate_not_approved", "the decision was DENY", {
          ...ofEffect(e6),
          decision_id: d3.id,
        }),
        gap("effect_without_gate", "the effect names no gate", ofEffect(e7)),
        gap("gate_not_found", "no such assessment in this organization and mode", {
          ...ofEffect(e8),
          assessment_id: missing,
        }),
        gap("gate_mismatch", "amount 2000 ≠ 1000", { ...ofEffect(e9), ...grant(d4) }),
        gap("redeemed_after_expiry", `redeemed at ${r5!.redeemed_at}, expired at ${d5Expiry}`, {
          ...ofEffect(e11),
          ...grant(d5),
        }),
        gap(
          "gate_never_redeemed",
          `the grant expired at ${d2Expiry} without a redemption`,
          grant(d2),
        ),
      ],
      gaps_truncated: false,
    });

    // The signed report of the same period says exactly what the unsigned answer said.
    const [head] = (await ownerSql`
      select sequence::int as sequence, hash from audit_entries
      where org_id = ${org.id} order by sequence desc limit 1`) as Record<string, any>[];
    const signed = await call(`/v1/control-coverage/report?from=${period.from}&to=${to}`, { key });
    expect(signed.status).toBe(200);
    const keys = await jwks();
    const checked = verifyCompact(signed.json.jws, keys);
    expect(checked.valid).toBe(true);
    expect(checked.header).toEqual({ alg: "EdDSA", kid: keys[0]?.kid, typ: "coverage-report+jwt" });
    expect(checked.payload).toBe(jcs(signed.json.report));
    const {
      id,
      org_id,
      log_id,
      generated_at,
      ledger: stated,
      disclosures,
      ...coverage
    } = signed.json.report;
    expect(coverage).toEqual(res.json);
    expect({ id, org_id, log_id }).toEqual({
      id: signed.json.id,
      org_id: org.id,
      log_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(generated_at).toMatch(/Z$/);
    // Evaluated by occurrence: e10 first, then e1 to e11.
    const evaluated = [e10, e1, e2, e3, e4, e5, e6, e7, e8, e9, e11];
    expect(stated).toEqual({
      head_sequence: head?.sequence,
      head_hash: head?.hash,
      effects_digest: digestOf(evaluated.map((e) => [e.id, e.audit.sequence])),
      checkpoint: stated.checkpoint,
    });
    expect(disclosures).toEqual(DISCLOSURES);
    expect(signed.json.audit.sequence).toBe(head?.sequence + 1);

    // e1 and e3 are the gated ones, and say so one by one.
    for (const gated of [e1, e3]) {
      const one = await call(`/v1/control-coverage/effects/${gated.id}`, { key });
      expect(one.json.match).toEqual({ status: "gated", gaps: [] });
    }
    expect(r1!.grant_id).toBe(d1.grant!.id);
    expect(r4!.grant_id).toBe(d4.grant!.id);
  });

  it("covers the last 24 hours by default and only the caller's mode", async () => {
    const { org, key } = await orgWithKey();
    const test = await org.key(undefined, "test");
    await reportEffect(key, effect());
    await reportEffect(
      key,
      effect({ occurred_at: new Date(Date.now() - 25 * 3_600_000).toISOString() }),
    );
    await reportEffect(test.key, effect());
    await reportEffect(test.key, effect());
    const live = await call("/v1/control-coverage", { key });
    expect(live.status).toBe(200);
    expect(live.json.effects).toEqual(ungatedOnly(1));
    expect(Date.parse(live.json.period.to) - Date.parse(live.json.period.from)).toBe(86_400_000);
    const inTest = await call("/v1/control-coverage", { key: test.key });
    expect(inTest.json.livemode).toBe(false);
    expect(inTest.json.effects).toEqual(ungatedOnly(2));
    const report = await call("/v1/control-coverage/report", { key: test.key });
    expect(report.json.report).toMatchObject({ livemode: false, effects: ungatedOnly(2) });
  });

  it("does not let a test-mode effect claim a live assessment", async () => {
    const { org, key } = await orgWithKey();
    const test = await org.key(undefined, "test");
    const live = await assessment(org, key);
    const claimed = await reportEffect(
      test.key,
      effect({
        occurred_at: new Date(Date.now() + 1000).toISOString(),
        gate: { assessment_id: live.assessmentId },
      }),
    );
    expect(claimed.status).toBe(201);
    const res = await call(`/v1/control-coverage/effects/${claimed.json.id}`, { key: test.key });
    expect(res.json.match).toEqual({
      status: "ungated",
      gaps: [
        gap("gate_not_found", "no such assessment in this organization and mode", {
          ...ofEffect(claimed.json),
          assessment_id: live.assessmentId,
        }),
      ],
    });
  });

  it("evaluates at most 10,000 effects and lists at most 1,000 gaps, and says so", async () => {
    const { org, key } = await orgWithKey();
    const start = Date.now() - 3_600_000;
    await ownerSql`
      insert into control_effects (id, org_id, livemode, effect, observer, reference, occurred_at,
                                   reported_by_type, reported_by_id, created_at, audit_entry_id,
                                   audit_sequence)
      select gen_random_uuid(), ${org.id}, true, 'payment.executed', 'bulk', 'ref-' || n,
             to_timestamp(${start / 1000} + n / 1000.0), 'api_key', 'k1', now(),
             gen_random_uuid(), n
      from generate_series(1, 10001) as n`;
    const res = await call("/v1/control-coverage", { key });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      effects: ungatedOnly(10_000),
      truncated: true,
      gaps_truncated: true,
    });
    expect(res.json.gaps).toHaveLength(1000);
    // The oldest are the ones evaluated.
    expect(res.json.gaps[0]!.reference).toBe("ref-1");
  });

  it("answers an empty period with a null ratio", async () => {
    const { key } = await orgWithKey();
    const res = await call("/v1/control-coverage", { key });
    expect(res.json).toMatchObject({
      effects: ungatedOnly(0),
      coverage_ratio: null,
      redemption_coverage_ratio: null,
      gaps: [],
    });
  });

  it.each([
    ["from after to", "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from"],
    ["from equal to to", "from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", "from"],
    ["a span over 92 days", "from=2026-01-01T00:00:00Z&to=2026-04-03T00:00:01Z", "from"],
    ["a time that is no date", "from=yesterday", "from"],
    ["an unknown parameter", "since=2026-01-01T00:00:00Z", ""],
    // The default from (to − 24 h) would be in year 0: a 400, not a 500.
    ["a default from before year 1", "to=0001-01-01T00:00:00Z", "from"],
    ["a from before year 1", "from=0000-12-31T00:00:00Z&to=0001-01-01T00:00:00Z", "from"],
  ])("answers 400 to %s", async (_, query, path) => {
    const { key } = await orgWithKey();
    for (const route of ["/v1/control-coverage", "/v1/control-coverage/report"]) {
      const res = await callRaw(`${route}?${query}`, { key });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("invalid_request");
      if (path) expect(res.json.details.map((d: any) => d.path)).toContain(path);
    }
  });

  it("accepts a span of exactly 92 days", async () => {
    const { key } = await orgWithKey();
    const res = await call(
      "/v1/control-coverage?from=2026-01-01T00:00:00Z&to=2026-04-03T00:00:00Z",
      { key },
    );
    expect(res.status).toBe(200);
  });
});

describe("GET /v1/control-coverage/report", () => {
  it("signs the coverage with its disclosures, verifiable offline with node:crypto", async () => {
    const { org, key } = await orgWithKey();
    const recorded = await reportEffect(key, effect());
    const [head] = (await ownerSql`
      select sequence::int as sequence, hash from audit_entries
      where org_id = ${org.id} order by sequence desc limit 1`) as Record<string, any>[];
    // The ledger head it is computed at is the effect's entry; issuing it is the next entry.
    expect(head?.sequence).toBe(recorded.json.audit.sequence);
    const res = await call("/v1/control-coverage/report", { key });
    expect(res.status).toBe(200);
    const { report, jws } = res.json;
    const keys = await jwks();
    const checked = verifyCompact(jws, keys);
    expect(checked.valid).toBe(true);
    expect(checked.header).toEqual({
      alg: "EdDSA",
      kid: keys[0]?.kid,
      typ: "coverage-report+jwt",
    });
    // The payload is byte for byte the RFC 8785 form of the report beside it.
    expect(checked.payload).toBe(jcs(report));
    expect(report).toEqual({
      object: "control_coverage",
      livemode: true,
      period: { from: expect.any(String), to: expect.any(String) },
      effects: { ...ungatedOnly(1) },
      gates: { approved_assessments: 0, grants_issued: 0, grants_redeemed: 0 },
      coverage_ratio: 0,
      redemption_coverage_ratio: 0,
      truncated: false,
      gaps: [gap("effect_without_gate", "the effect names no gate", ofEffect(recorded.json))],
      gaps_truncated: false,
      id: res.json.id,
      org_id: org.id,
      log_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      generated_at: expect.stringMatching(/Z$/),
      ledger: {
        head_sequence: head?.sequence,
        head_hash: head?.hash,
        // Ties the report to the entries of the effects it evaluated, in order.
        effects_digest: digestOf([[recorded.json.id, recorded.json.audit.sequence]]),
        checkpoint: report.ledger.checkpoint,
      },
      disclosures: DISCLOSURES,
    });
    // No checkpoint is forced; one that exists is no newer than the head.
    if (report.ledger.checkpoint !== null) {
      expect(report.ledger.checkpoint.tree_size).toBeLessThanOrEqual(head?.sequence);
    }
    expect(res.json.audit.sequence).toBe(recorded.json.audit.sequence + 1);
    expect(await auditEntry(org.id, res.json.audit.entry_id)).toEqual({
      type: "control_coverage.report_issued",
      subject_type: "control_coverage_report",
      subject_id: res.json.id,
      digest: digestOf(report),
      sequence: res.json.audit.sequence,
    });
  });

  it("is not valid once its payload or signature is changed", async () => {
    const { key } = await orgWithKey();
    const res = await call("/v1/control-coverage/report", { key });
    const keys = await jwks();
    const [h, p, s] = res.json.jws.split(".");
    const forged = { ...res.json.report, coverage_ratio: 1 };
    const payload = Buffer.from(jcs(forged)).toString("base64url");
    expect(verifyCompact(`${h}.${payload}.${s}`, keys).valid).toBe(false);
    const flipped = `${s!.slice(0, 10)}${s![10] === "A" ? "B" : "A"}${s!.slice(11)}`;
    expect(verifyCompact(`${h}.${p}.${flipped}`, keys).valid).toBe(false);
    expect(verifyCompact(`${h}.${p}.${s}`, keys).valid).toBe(true);
  });

  it("answers 404 for another org's effect, even to a key with every scope", async () => {
    const { key } = await orgWithKey();
    const other = await newOrg();
    const { key: otherKey } = await other.key();
    const created = await reportEffect(key, effect());
    const res = await call(`/v1/control-coverage/effects/${created.json.id}`, { key: otherKey });
    expect(res.status).toBe(404);
    const list = await call("/v1/control-coverage/effects", { key: otherKey });
    expect(list.json.data).toEqual([]);
  });

  it("counts only the caller's org: another org's effect is in neither the coverage nor the report", async () => {
    const { org, key } = await orgWithKey();
    const { key: otherKey } = await orgWithKey();
    const own = await reportEffect(key, effect());
    // The same observer and reference in another org is that org's effect, not a repeat.
    const theirs = await reportEffect(otherKey, effect({ reference: own.json.reference }));
    expect([own.status, theirs.status]).toEqual([201, 201]);
    const only = gap("effect_without_gate", "the effect names no gate", ofEffect(own.json));
    const coverage = await call("/v1/control-coverage", { key });
    expect(coverage.status).toBe(200);
    expect(coverage.json).toMatchObject({
      effects: ungatedOnly(1),
      coverage_ratio: 0,
      gaps: [only],
    });
    const signed = await call("/v1/control-coverage/report", { key });
    expect(signed.status).toBe(200);
    expect(signed.json.report).toMatchObject({
      org_id: org.id,
      effects: ungatedOnly(1),
      coverage_ratio: 0,
      gaps: [only],
      ledger: { effects_digest: digestOf([[own.json.id, own.json.audit.sequence]]) },
    });
    // And the other org sees its own, alone.
    const other = await call("/v1/control-coverage", { key: otherKey });
    expect(other.json.effects).toEqual(ungatedOnly(1));
    expect(other.json.gaps.map((g: Json) => g.effect_id)).toEqual([theirs.json.id]);
  });
});

describe("matching an effect to its gate, one rule at a time over HTTP", () => {
  const soon = (ms = 1000) => new Date(Date.now() + ms).toISOString();
  const usd = { amount: 19900, currency: "USD" };
  const matchOf = async (key: string, record: Json) => {
    const res = await call(`/v1/control-coverage/effects/${record.id}`, { key });
    expect(res.status).toBe(200);
    return res.json.match;
  };
  const reported = async (key: string, changes: Json) => {
    const res = await reportEffect(key, effect(changes));
    expect(res.status).toBe(201);
    return res.json;
  };
  const ungated = (...gaps: Json[]) => ({ status: "ungated", gaps });

  it("does not let another org's assessment, grant or decision gate an effect", async () => {
    const { org, key } = await orgWithKey();
    const approved = await assessment(org, key);
    const setup = await actionSetup(org);
    const d = await decision(setup, CAPTURE.resource);
    await redeemed(setup, d);
    const { key: other } = await orgWithKey();
    const byAssessment = await reported(other, {
      occurred_at: soon(),
      gate: { assessment_id: approved.assessmentId },
      ...usd,
    });
    const byGrant = await reported(other, {
      occurred_at: soon(),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
    });
    const byDecision = await reported(other, {
      occurred_at: soon(),
      gate: { decision_id: d.id },
      ...CAPTURE,
    });
    expect(await matchOf(other, byAssessment)).toEqual(
      ungated(
        gap("gate_not_found", "no such assessment in this organization and mode", {
          ...ofEffect(byAssessment),
          assessment_id: approved.assessmentId,
        }),
      ),
    );
    expect(await matchOf(other, byGrant)).toEqual(
      ungated(
        gap("gate_not_found", "no such grant in this organization", {
          ...ofEffect(byGrant),
          grant_id: d.grant!.id,
        }),
      ),
    );
    expect(await matchOf(other, byDecision)).toEqual(
      ungated(
        gap("gate_not_found", "no such decision in this organization", {
          ...ofEffect(byDecision),
          decision_id: d.id,
        }),
      ),
    );
    // The org that holds them would have been gated by the grant.
    const own = await reported(key, {
      occurred_at: soon(),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, own)).toEqual({ status: "gated", gaps: [] });
  });

  it("finds an effect that occurred before its grant was redeemed", async () => {
    const { org, key } = await orgWithKey();
    const setup = await actionSetup(org);
    const d = await decision(setup, CAPTURE.resource);
    const r = await redeemed(setup, d);
    const early = await reported(key, {
      occurred_at: new Date(Date.parse(r!.redeemed_at) - 3_600_000).toISOString(),
      gate: { decision_id: d.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, early)).toEqual(
      ungated(
        gap("effect_before_gate", `redeemed at ${r!.redeemed_at}`, {
          ...ofEffect(early),
          decision_id: d.id,
          grant_id: d.grant!.id,
        }),
      ),
    );
  });

  it("finds an effect whose action and resource differ from the decision's, or are not stated", async () => {
    const { org, key } = await orgWithKey();
    const setup = await actionSetup(org);
    const d = await decision(setup, CAPTURE.resource);
    await redeemed(setup, d);
    const ids = { decision_id: d.id, grant_id: d.grant!.id };
    const other = await reported(key, {
      occurred_at: soon(),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
      action: "payment.refund",
      resource: "merchant:acme/order-9",
    });
    expect(await matchOf(key, other)).toEqual(
      ungated(
        gap(
          "gate_mismatch",
          'action "payment.refund" ≠ "payment.capture"; resource "merchant:acme/order-9" ≠ "merchant:acme/order-1"',
          { ...ofEffect(other), ...ids },
        ),
      ),
    );
    const silent = await reported(key, {
      occurred_at: soon(2000),
      gate: { grant_id: d.grant!.id },
    });
    expect(await matchOf(key, silent)).toEqual(
      ungated(
        gap(
          "gate_mismatch",
          "action not stated; resource not stated; amount not stated; currency not stated",
          { ...ofEffect(silent), ...ids },
        ),
        gap("gate_reused", `the effect ${other.id} claimed this gate first`, {
          ...ofEffect(silent),
          ...ids,
        }),
      ),
    );
  });

  it("finds an assessment's amount differing or unstated, and a second claim of it", async () => {
    const { org, key } = await orgWithKey();
    const approved = await assessment(org, key);
    const gate = { assessment_id: approved.assessmentId };
    const first = await reported(key, { occurred_at: soon(1000), gate, ...usd });
    const cheaper = await reported(key, { occurred_at: soon(2000), gate, ...usd, amount: 100 });
    const silent = await reported(key, { occurred_at: soon(3000), gate });
    expect(await matchOf(key, first)).toEqual({ status: "gated", gaps: [] });
    const fields = (record: Json) => ({ ...ofEffect(record), ...gate });
    const reuse = (record: Json) =>
      gap("gate_reused", `the effect ${first.id} claimed this gate first`, fields(record));
    expect(await matchOf(key, cheaper)).toEqual(
      ungated(gap("gate_mismatch", "amount 100 ≠ 19900", fields(cheaper)), reuse(cheaper)),
    );
    expect(await matchOf(key, silent)).toEqual(
      ungated(
        gap("gate_mismatch", "amount not stated; currency not stated", fields(silent)),
        reuse(silent),
      ),
    );
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const coverage = await call(`/v1/control-coverage?from=${from}&to=${to}`, { key });
    expect(coverage.json.effects).toEqual({
      observed: 3,
      gated: 1,
      gated_by_redemption: 0,
      gated_by_assessment: 1,
      ungated: 2,
    });
    expect(coverage.json.coverage_ratio).toBe(1 / 3);
    expect(coverage.json.redemption_coverage_ratio).toBe(0);
  });

  it("finds a redemption by another credential, or of other details, than the decision's", async () => {
    const { org, key } = await orgWithKey();
    const setup = await actionSetup(org);
    const d = await decision(setup, CAPTURE.resource);
    await redeemed(setup, d);
    const stranger = await org.key(["assess:write"]);
    // Seeded as an insider could: the service refuses both, the evidence check must not trust
    // that it did.
    await ownerSql`update action_redemptions
                   set executor_id = ${stranger.id}, amount = 999
                   where org_id = ${org.id} and grant_id = ${d.grant!.id}`;
    const named = await reported(key, {
      occurred_at: soon(),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, named)).toEqual(
      ungated(
        gap(
          "gate_mismatch",
          `redeemed by api_key ${stranger.id}, the grant's audience is "${setup.executor.id}"; redemption amount 999 ≠ 1000`,
          { ...ofEffect(named), decision_id: d.id, grant_id: d.grant!.id },
        ),
      ),
    );
  });

  it("does not count an ALLOW without a grant as gate proof", async () => {
    const { org, key } = await orgWithKey();
    const setup = await actionSetup(org);
    const res = await decide(setup.key, setup.mandate.id, { ...CAPTURE, grant: false });
    expect(res.status).toBe(201);
    expect([res.json.decision, res.json.grant]).toEqual(["ALLOW", null]);
    const named = await reported(key, {
      occurred_at: soon(),
      gate: { decision_id: res.json.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, named)).toEqual(
      ungated(
        gap("grant_not_redeemed", "the decision issued no grant: nothing was redeemed", {
          ...ofEffect(named),
          decision_id: res.json.id,
        }),
      ),
    );
  });

  it("lets one grant gate one effect across modes, in the redeeming credential's mode", async () => {
    const { org, key } = await orgWithKey();
    const test = await org.key(undefined, "test");
    const setup = await actionSetup(org);
    const d = await decision(setup, CAPTURE.resource);
    await redeemed(setup, d);
    const ids = { decision_id: d.id, grant_id: d.grant!.id };
    const live = await reported(key, {
      occurred_at: soon(1000),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
    });
    const inTest = await reported(test.key, {
      occurred_at: soon(2000),
      gate: { decision_id: d.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, live)).toEqual({ status: "gated", gaps: [] });
    expect(await matchOf(test.key, inTest)).toEqual(
      ungated(
        gap("gate_mode_mismatch", "redeemed by a live credential; the effect is test", {
          ...ofEffect(inTest),
          ...ids,
        }),
        gap("gate_reused", `the effect ${live.id} claimed this gate first`, {
          ...ofEffect(inTest),
          ...ids,
        }),
      ),
    );
  });

  it("does not let a test key's redemption gate a live effect", async () => {
    const { org, key } = await orgWithKey();
    const setup = await actionSetup(org);
    const testExecutor = await org.key(["assess:write"], "test");
    const byTest = { ...setup, executor: testExecutor };
    const d = await decision(byTest, CAPTURE.resource);
    const r = await redeemed(byTest, d);
    expect(r!.executor).toEqual({ type: "api_key", id: testExecutor.id });
    const live = await reported(key, {
      occurred_at: soon(),
      gate: { grant_id: d.grant!.id },
      ...CAPTURE,
    });
    expect(await matchOf(key, live)).toEqual(
      ungated(
        gap("gate_mode_mismatch", "redeemed by a test credential; the effect is live", {
          ...ofEffect(live),
          decision_id: d.id,
          grant_id: d.grant!.id,
        }),
      ),
    );
  });
});

describe("an orphaned first report", () => {
  it("is gone past: the effect is recorded after it, and the orphan entry stays", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const body = effect();
    // What a writer that died after its append left behind, its record expired a day later.
    const once = `control_effect.observed:${createHash("sha256")
      .update(jcs([true, body.observer, body.reference]), "utf8")
      .digest("hex")}`;
    const stub = ledger(org.id);
    const orphan = await sequenceOnly(org.id, {
      type: "control_effect.observed",
      actor: { type: "api_key", id: "k1" },
      subject: { type: "control_effect", id: crypto.randomUUID() },
      digest: `sha256:${"ab".repeat(32)}`,
      once: [once],
      attachment: "{}",
    });
    await runInDurableObject(stub, (object) => {
      (object as unknown as Pruning).store.pruneAttachments(Date.now() + 1);
    });
    const res = await reportEffect(key, body);
    expect(res.status).toBe(201);
    expect(res.json.audit.sequence).toBe(orphan.entry.sequence + 1);
    const again = await reportEffect(key, body);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
    const rows = await ownerSql`select id from control_effects where org_id = ${org.id}`;
    expect(rows.map((r) => r.id)).toEqual([res.json.id]);
    // The repeat's ledger answer still names the orphan under the first key.
    const replay = await sequenceOnly(org.id, {
      type: "control_effect.observed",
      actor: { type: "api_key", id: "k1" },
      subject: null,
      digest: `sha256:${"ab".repeat(32)}`,
      once: [once],
      attachment: "{}",
    });
    expect([replay.replayed, replay.entry.sequence]).toEqual([true, orphan.entry.sequence]);
  });
});
