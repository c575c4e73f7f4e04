import { env } from "cloudflare:test";
import { calculateJwkThumbprint } from "jose";
import { describe, expect, it } from "vitest";
import { type NetworkKind, networkDigest, networkKeys } from "../../src/network/keys";
import type { RiskModelRow } from "../../src/risk-models/records";
import { readModelHistory } from "../../src/risk-models/training-job";
import { INSTRUMENT, MERCHANT } from "../support/ap2-chains";
import { call } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey } from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { newAgent } from "./support/identity";
import { clock, DAY, fraudInHistory, payeeKey, paymentTo } from "./support/models";
import { createEndpoint, eventually, received, receiver } from "./support/webhooks";

// Network signals on POST /v1/assess (issue 41; docs/architecture.md, "ADR: the learned model
// and network signals on the assess path", point 7 as built): the counts other orgs contributed,
// read in the context round trip, shown as `outcome.network` (and as `data.network` on the
// assessment's webhook events), raising signals and read by rules.

const key = networkKeys(env)?.[0];
if (!key) throw new Error("the test run has no NETWORK_KEYS");
const today = () => new Date().toISOString().slice(0, 10);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Contribution {
  kind: NetworkKind;
  /** The raw identifier: digested here under the read key, as the contributor does. */
  value: string;
  day?: string;
  fraud?: boolean;
  legitimate?: boolean;
}

/** An org of its own that contributes `rows` to the mode's network, as the consumer writes them. */
async function contributor(livemode: boolean, rows: Contribution[]) {
  const user = crypto.randomUUID();
  const org = crypto.randomUUID();
  await ownerSql`insert into users (id, idp_subject) values (${user}, ${`network-${user}`})`;
  await ownerSql`insert into organizations (id, name, founder_user_id)
                 values (${org}, 'Other org', ${user})`;
  await contributeAs(org, livemode, rows, false);
}

/** `org` contributes `rows` to the mode's network (and consumes it when `consume`). */
async function contributeAs(
  org: string,
  livemode: boolean,
  rows: Contribution[],
  consume: boolean,
) {
  const sent = rows.map((r) => ({
    kind: r.kind,
    key_id: key?.kid,
    digest: networkDigest(key as never, r.kind, r.value),
    day: r.day ?? today(),
    seen: true,
    fraud: r.fraud ?? false,
    legitimate: r.legitimate ?? false,
  }));
  const [, , written] = await ownerSql.transaction((sql) => [
    sql`select set_config('app.org_id', ${org}, true)`,
    sql`select network_settings_write(${livemode}, true, ${consume})`,
    sql`select network_contribute(${livemode}, ${JSON.stringify(sent)}::json, null, null) as n`,
  ]);
  expect(written?.[0]?.n).toBe(rows.length);
}

/** The org consumes (and so contributes to) the network in one mode. */
async function consume(orgId: string, livemode: boolean) {
  await ownerSql.transaction((sql) => [
    sql`select set_config('app.org_id', ${orgId}, true)`,
    sql`select network_settings_write(${livemode}, true, true)`,
  ]);
}

const ZERO = {
  payee_fraud_orgs: 0,
  payee_legitimate_orgs: 0,
  agent_key_fraud_orgs: 0,
  agent_key_legitimate_orgs: 0,
  issuer_fraud_orgs: 0,
  issuer_legitimate_orgs: 0,
  instrument_fraud_orgs: 0,
  instrument_legitimate_orgs: 0,
  window_days: 30,
  k: 3,
};

/** A test-mode org consuming the test network, its agent and a payment to a payee of its own. */
async function testModeOrg() {
  const { org, key: apiKey } = await orgWithKey("test");
  const agent = await newAgent(org);
  await consume(org.id, false);
  const payee = `payee-${crypto.randomUUID()}`;
  return { org, apiKey, agentId: agent.id as string, payee, payeeRaw: await payeeKey(payee) };
}

/** The Outcome of an assessment that must answer 200. */
async function assessed(apiKey: string, body: Json): Promise<Json> {
  return (await assessOk(apiKey, body as never)).outcome as Json;
}

const types = (outcome: Json) => (outcome.signals as Json[]).map((s) => s.type);

describe("outcome.network", () => {
  it("counts what three other orgs confirmed about the payee, agent key, issuer key and instrument, and GET answers the same", async () => {
    const { org, key: apiKey, body } = await provenAgentOrg("live");
    await consume(org.id, true);
    const fingerprint = `fp-${crypto.randomUUID()}`;
    const request = await body({ payment_instrument: { ...INSTRUMENT, fingerprint } });
    const res = await assessed(apiKey, request);
    // The credential's identifiers, as the network knows them.
    const [row] = await ownerSql`select network_ids from assessments where id = ${res.id}`;
    const ids = row?.network_ids as Json;
    expect(ids).toEqual({
      agent_key: expect.any(String),
      issuer_key: expect.any(String),
      instrument: fingerprint,
    });
    // Three other orgs: what each sent about each identifier today.
    const payee = await payeeKey(MERCHANT.id);
    const sent = (payeeLabel: "fraud" | "legitimate", agentFraud: boolean, cardFraud: boolean) => [
      { kind: "payee" as const, value: payee, [payeeLabel]: true },
      { kind: "agent_key" as const, value: ids.agent_key, fraud: agentFraud },
      { kind: "issuer" as const, value: ids.issuer_key, fraud: true },
      { kind: "instrument" as const, value: fingerprint, fraud: cardFraud },
    ];
    await contributor(true, sent("fraud", true, false));
    await contributor(true, sent("fraud", false, false));
    await contributor(true, sent("legitimate", false, true));
    const again = await body({ payment_instrument: { ...INSTRUMENT, fingerprint } });
    const outcome = await assessed(apiKey, again);
    expect(outcome.outcome.network).toEqual({
      ...ZERO,
      payee_fraud_orgs: 2,
      payee_legitimate_orgs: 1,
      agent_key_fraud_orgs: 1,
      issuer_fraud_orgs: 3,
      instrument_fraud_orgs: 1,
    });
    expect(outcome.signals).toEqual(
      expect.arrayContaining([
        { category: "network", type: "network_payee_fraud", severity: "high" },
        { category: "network", type: "network_agent_key_fraud", severity: "medium" },
        { category: "network", type: "network_issuer_fraud", severity: "low" },
        { category: "network", type: "network_instrument_fraud", severity: "medium" },
      ]),
    );
    expect(outcome.outcome.reason).toContain(
      "mainly because the payee was confirmed in fraud at 2 other organizations this month.",
    );
    const read = await call(`/v1/assessments/${outcome.id}`, { key: apiKey });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(outcome);
    // Before the contributions, the same org read zeros: consuming, nothing known.
    expect(res.outcome.network).toEqual(ZERO);
  });

  it("reads 0 for an identifier fewer than k orgs, the reader included, sent anything about", async () => {
    const { apiKey, agentId, payee, payeeRaw } = await testModeOrg();
    await contributor(false, [{ kind: "payee", value: payeeRaw, fraud: true }]);
    await contributor(false, [{ kind: "payee", value: payeeRaw, fraud: true }]);
    const outcome = await assessed(apiKey, paymentTo(payee, agentId));
    expect(outcome.outcome.network).toEqual(ZERO);
    expect(types(outcome)).not.toContain("network_payee_fraud");
  });

  it("counts the reader in the crowd of k, never in what it reads: two others and itself release 2", async () => {
    const { org, apiKey, agentId, payee, payeeRaw } = await testModeOrg();
    await contributor(false, [{ kind: "payee", value: payeeRaw, fraud: true }]);
    await contributor(false, [{ kind: "payee", value: payeeRaw, fraud: true }]);
    // The reader sent something about the payee too (a payment it saw): the crowd is 3.
    await contributeAs(org.id, false, [{ kind: "payee", value: payeeRaw }], true);
    const outcome = await assessed(apiKey, paymentTo(payee, agentId));
    expect(outcome.outcome.network).toEqual({ ...ZERO, payee_fraud_orgs: 2 });
    expect(types(outcome)).toContain("network_payee_fraud");
  });

  it("is absent when the org does not consume, and the payment's identifiers are still recorded", async () => {
    const { org, key: apiKey } = await orgWithKey("test");
    const agent = await newAgent(org);
    const payee = `payee-${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      await contributor(false, [{ kind: "payee", value: await payeeKey(payee), fraud: true }]);
    }
    const body = paymentTo(payee, agent.id) as Json;
    body.mandate.payment_instrument.fingerprint = "fp-absent";
    const outcome = await assessed(apiKey, body);
    expect(outcome.outcome).not.toHaveProperty("network");
    expect(types(outcome)).not.toContain("network_payee_fraud");
    const [row] = await ownerSql`select network, network_ids from assessments
                                 where id = ${outcome.id}`;
    expect(row).toEqual({
      network: null,
      network_ids: { agent_key: null, issuer_key: null, instrument: "fp-absent" },
    });
  });

  it("counts the 30 days to the test clock's time, and test mode never sees live counts", async () => {
    const { org, apiKey, agentId, payee, payeeRaw } = await testModeOrg();
    const at = Date.now() - 20 * DAY;
    const testClock = await clock(org.id, at);
    const fraud = (day: string): Contribution[] => [
      { kind: "payee", value: payeeRaw, day, fraud: true },
    ];
    // Live: never counted in test mode.
    for (let i = 0; i < 3; i++) await contributor(true, fraud(dayOf(at)));
    // Test mode: three orgs in the window, and a fourth's fraud after the clock's time.
    for (let i = 0; i < 3; i++) await contributor(false, fraud(dayOf(at - 2 * DAY)));
    await contributor(false, fraud(dayOf(at + 5 * DAY)));
    const outcome = await assessed(apiKey, paymentTo(payee, agentId, testClock));
    expect(outcome.outcome.network).toEqual({ ...ZERO, payee_fraud_orgs: 3 });
    expect(outcome.signals).toContainEqual({
      category: "network",
      type: "network_payee_fraud",
      severity: "high",
    });
  });
});

const ASSESSMENT_EVENTS = [
  "assessment.completed",
  "assessment.denied",
  "assessment.flagged",
] as const;

/** A receiver of the key's mode's assessment events. */
async function assessmentHook(apiKey: string) {
  const hook = await receiver();
  await createEndpoint(apiKey, { url: hook.url, eventTypes: [...ASSESSMENT_EVENTS] });
  return hook.name;
}

/**
 * The bodies delivered for an assessment, in type order: `assessment.completed`, and
 * `assessment.denied` or `assessment.flagged` when it decided so.
 */
async function eventsOf(hookName: string, outcome: Json): Promise<Json[]> {
  const decided = { deny: ["assessment.denied"], review: ["assessment.flagged"] } as Json;
  const expected = ["assessment.completed", ...(decided[outcome.outcome.decision] ?? [])];
  const bodies = await eventually(
    async () => {
      const { arrivals } = await received(hookName);
      const mine = arrivals.filter((a) => a.body.data?.assessment_id === outcome.id);
      return mine.length >= expected.length ? mine.map((a) => a.body) : undefined;
    },
    20_000,
    `the events of ${outcome.id}`,
  );
  const sorted = bodies.sort((a, b) => String(a.type).localeCompare(String(b.type)));
  expect(sorted.map((b) => b.type)).toEqual(expected);
  return sorted;
}

/** An assessment event's data as every org's: the verdict, its agent, its kind. */
function eventData(outcome: Awaited<ReturnType<typeof assessed>>, agentId: string) {
  return {
    assessment_id: outcome.id,
    decision: outcome.outcome.decision,
    risk_level: outcome.outcome.risk_level,
    risk_score: outcome.outcome.risk_score,
    agent_id: agentId,
    kind: "ap2_payment",
  };
}

describe("the assessment's webhook events", () => {
  it("carry outcome.network as data.network when the org consumes", async () => {
    const { apiKey, agentId, payee, payeeRaw } = await testModeOrg();
    const hookName = await assessmentHook(apiKey);
    for (let i = 0; i < 3; i++) {
      await contributor(false, [{ kind: "payee", value: payeeRaw, fraud: true }]);
    }
    const outcome = await assessed(apiKey, paymentTo(payee, agentId));
    expect(outcome.outcome.network).toEqual({ ...ZERO, payee_fraud_orgs: 3 });
    for (const body of await eventsOf(hookName, outcome)) {
      expect(body.data).toStrictEqual({
        ...eventData(outcome, agentId),
        network: outcome.outcome.network,
      });
    }
  });

  it("have no network member when the org does not consume", async () => {
    const { org, key: apiKey } = await orgWithKey("test");
    const agent = await newAgent(org);
    const hookName = await assessmentHook(apiKey);
    const payee = `payee-${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      await contributor(false, [{ kind: "payee", value: await payeeKey(payee), fraud: true }]);
    }
    const outcome = await assessed(apiKey, paymentTo(payee, agent.id));
    expect(outcome.outcome).not.toHaveProperty("network");
    for (const body of await eventsOf(hookName, outcome)) {
      expect(body.data).toStrictEqual(eventData(outcome, agent.id));
    }
  });
});

describe("network attributes in policy rules", () => {
  it("a rule on network.payee_fraud_orgs denies, naming its rule", async () => {
    const { org, apiKey, agentId, payee, payeeRaw } = await testModeOrg();
    await createPolicy(org, {
      grammar: 1,
      rules: [
        {
          id: "network-payee",
          action: "deny",
          when: { attr: "network.payee_fraud_orgs", op: "gte", value: 1 },
        },
      ],
    });
    const clean = await assessed(apiKey, paymentTo(payee, agentId));
    expect(clean.rejection_reasons).toEqual([]);
    for (const fraud of [true, false, false]) {
      await contributor(false, [{ kind: "payee", value: payeeRaw, fraud }]);
    }
    const outcome = await assessed(apiKey, paymentTo(payee, agentId));
    expect(outcome.outcome.decision).toBe("deny");
    expect(outcome.rejection_reasons).toEqual([
      {
        key: "policy_rule_denied",
        category: "policy",
        description: 'policy rule "network-payee" matched',
      },
    ]);
  });
});

describe("the issuer's network digests", () => {
  it("are written with the issuer's keys, so the context read can ask about the key a root names", async () => {
    const { org, issuerId } = await provenAgentOrg("test");
    const [row] = await ownerSql`select jwks, network_digests from credential_issuers
                                 where id = ${issuerId} and org_id = ${org.id}`;
    const jwk = (row?.jwks as Json[] | undefined)?.[0] as Json;
    const print = await calculateJwkThumbprint(jwk);
    expect(row?.network_digests).toEqual([
      { key_id: key?.kid, kid: "issuer-1", digest: networkDigest(key as never, "issuer", print) },
    ]);
  });
});

describe("a training run", () => {
  it("reads, for each payment trained on, the network's counts of the day before it", async () => {
    const { org, agentId, payee, payeeRaw } = await testModeOrg();
    const asOf = Date.now() - DAY;
    const paidAt = asOf - 3 * DAY;
    await fraudInHistory(org.id, agentId, payee, paidAt, asOf + DAY);
    for (const fraud of [true, true, false]) {
      await contributor(false, [
        { kind: "payee", value: payeeRaw, day: dayOf(paidAt - DAY), fraud },
      ]);
    }
    // The day of the payment itself is not read: a label learnt later that day was not known.
    await contributor(false, [{ kind: "payee", value: payeeRaw, day: dayOf(paidAt), fraud: true }]);
    const row = {
      livemode: false,
      asOf: new Date(asOf),
      labelDelaySeconds: 7 * 86_400,
      trainingWindowSeconds: 7 * 86_400,
    } as RiskModelRow;
    const events = await readModelHistory(env as never, org.id, row);
    expect(events.map((e) => e.network)).toEqual([
      {
        payee_fraud_orgs: 2,
        payee_legitimate_orgs: 0,
        agent_key_fraud_orgs: 0,
        agent_key_legitimate_orgs: 0,
        issuer_fraud_orgs: 0,
        instrument_fraud_orgs: 0,
      },
    ]);
  });
});
