import { beforeAll, describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import { assessOk, type Json, orgWithKey, payment } from "./support/assess";
import { provenAgentOrg, reasonOf } from "./support/credentials";
import { errorBody } from "./support/errors";
import { newAgent, newPrincipal } from "./support/identity";
import { model, paymentTo } from "./support/models";

// docs/assess.md, "Listing assessments": the summary's transaction and names, who decided, the
// search box and the range filters of GET /v1/assessments, and the same summary on review items.

function list(key: string, query = "") {
  return call(`/v1/assessments?${query}`, { key });
}

const ids = (res: { json: Json }) => res.json.data.map((s: Json) => s.id);

/** A payment to `payee` for `amount` minor units of `currency`. */
function paying(payee: { id: string; name: string }, amount: number, currency = "USD") {
  return payment({ payee, payment_amount: { amount, currency } });
}

describe("GET /v1/assessments: what a summary shows", () => {
  it("the transaction, the agent and its principal by name, the model and who decided", async () => {
    const { org, key } = await orgWithKey();
    const principalId = await newPrincipal(org, { name: "Grace Hopper" });
    const agent = (await call("/v1/agents", {
      method: "POST",
      token: org.token,
      body: { principal_id: principalId, name: "Travel booker" },
    })) as { json: Json };
    const mandate = paying({ id: "acct_kyoto_inn", name: "Kyoto Inn" }, 48000, "JPY");
    const body = await assessOk(key, { mandate, agent_id: agent.json.id });
    const res = await list(key);
    expect(res.status).toBe(200);
    const o = body.outcome;
    expect(res.json).toEqual({
      object: "list",
      data: [
        {
          id: body.assessmentId,
          object: "assessment",
          created: o.created,
          kind: "ap2_payment",
          livemode: true,
          decision: o.outcome.decision,
          risk_level: o.outcome.risk_level,
          risk_score: o.outcome.risk_score,
          reason: o.outcome.reason,
          agent_id: agent.json.id,
          a2a: null,
          amount: 48000,
          currency: "JPY",
          payee: { id: "acct_kyoto_inn", name: "Kyoto Inn" },
          transaction_id: mandate.transaction_id,
          agent: { id: agent.json.id, name: "Travel booker" },
          principal: { id: principalId, name: "Grace Hopper", erased: false },
          model: null,
          credential: null,
          decided_by: { type: "score", rule: null, reviewer: null },
          review:
            o.outcome.decision === "review"
              ? { id: o.refinement?.review_id, status: "open", decision: null }
              : null,
        },
      ],
      has_more: false,
      next_cursor: null,
    });
  });

  it("names no payee, transaction, agent or principal where there are none", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { kind: "custom", mandate: { amount: 125, currency: "KWD" } });
    const summary = (await list(key)).json.data[0] as Json;
    expect(summary).toMatchObject({
      id: body.assessmentId,
      amount: 125,
      currency: "KWD",
      payee: null,
      transaction_id: null,
      agent_id: null,
      agent: null,
      principal: null,
      credential: null,
    });
  });

  it("says `erased` and no name once the principal is erased", async () => {
    const { org, key } = await orgWithKey();
    const agent = await newAgent(org, { name: "Erasable" });
    await assessOk(key, { mandate: payment(), agent_id: agent.id });
    const erased = await call(`/v1/principals/${agent.principal_id}/erase`, {
      method: "POST",
      key,
    });
    expect(erased.status).toBe(200);
    const summary = (await list(key)).json.data[0] as Json;
    expect(summary.principal).toEqual({ id: agent.principal_id, name: null, erased: true });
    expect(summary.agent).toEqual({ id: agent.id, name: "Erasable" });
  });

  it("says what a credential proved: verified, or refused with its reason's words", async () => {
    const proven = await provenAgentOrg();
    const verified = await assessOk(proven.key, await proven.body());
    expect(verified.decision).toBe("approve");
    const presented = await proven.body();
    const refused = await assessOk(proven.key, {
      ...presented,
      presentation: { ...presented.presentation, nonce: "another-nonce" },
    });
    expect(refused.decision).toBe("deny");
    const words = reasonOf(refused.outcome, "credential_nonce_mismatch")?.description;
    expect(typeof words).toBe("string");
    const byId = new Map((await list(proven.key)).json.data.map((s: Json) => [s.id, s.credential]));
    expect(byId.get(verified.assessmentId)).toEqual({
      status: "verified",
      failure: null,
      reason: null,
    });
    expect(byId.get(refused.assessmentId)).toEqual({
      status: "refused",
      failure: "nonce_mismatch",
      reason: words,
    });
  });

  it("an assessment the active model scored is `model`, with its probability", async () => {
    const { org, key } = await orgWithKey("test");
    const agent = await newAgent(org);
    const modelId = await model(org.id, false, "active");
    const body = await assessOk(key, paymentTo("acct_model", agent.id));
    expect(body.outcome.outcome.model?.id).toBe(modelId);
    const summary = (await list(key)).json.data[0] as Json;
    expect(summary.model).toEqual(body.outcome.outcome.model);
    expect(summary.decided_by).toEqual({ type: "model", rule: null, reviewer: null });
  });

  it("a policy limit that denies is `rule`, with the limit's rejection key", async () => {
    const { org, key } = await orgWithKey();
    const policy = await call("/v1/policies", {
      method: "POST",
      token: org.token,
      body: { name: "cap", rules: { max_amount: 100000 }, activate: true },
    });
    expect(policy.status).toBe(201);
    const body = await assessOk(key, {
      mandate: paying({ id: "m1", name: "Big Store" }, 250000),
    });
    expect(body.decision).toBe("deny");
    const summary = (await list(key)).json.data[0] as Json;
    expect(summary.decided_by).toEqual({
      type: "rule",
      rule: "max_amount_exceeded",
      reviewer: null,
    });
  });

  it("a resolved review is `person`, naming who resolved it", async () => {
    const { org, key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    expect(body.decision).toBe("review");
    const reviewId = body.outcome.refinement?.review_id;
    const resolved = await call(`/v1/reviews/${reviewId}/resolve`, {
      method: "POST",
      token: org.token,
      body: { decision: "deny" },
    });
    expect(resolved.status).toBe(200);
    const me = (await call("/v1/me", { token: org.token })).json;
    const summary = (await list(key)).json.data[0] as Json;
    expect(summary.decided_by).toEqual({ type: "person", rule: null, reviewer: me.actor.id });
    expect(summary.review).toEqual({ id: reviewId, status: "resolved", decision: "deny" });
    // The resolve's answer carries the summary as it stands after the resolution.
    expect(resolved.json.assessment).toEqual(summary);
  });
});

describe("GET /v1/assessments: search and ranges", () => {
  let org: TestOrg;
  let key: string;
  let agent: Json;
  const made: Record<string, { id: string; mandate: Json; score: number }> = {};

  beforeAll(async () => {
    ({ org, key } = await orgWithKey());
    agent = await newAgent(org, { name: "Acme Procurement" });
    const plan: [string, Json, string | null][] = [
      ["books", paying({ id: "acct_books", name: "Book_Shop 100%" }, 1500), null],
      ["cafe", paying({ id: "acct_cafe", name: "Café Lumière" }, 450, "EUR"), agent.id],
      ["yen", paying({ id: "acct_ryokan", name: "Ryokan Sato" }, 30000, "JPY"), agent.id],
      ["big", paying({ id: "acct_books", name: "Book_Shop 100%" }, 990000), null],
    ];
    for (const [name, mandate, agentId] of plan) {
      const body = await assessOk(key, { mandate, ...(agentId ? { agent_id: agentId } : {}) });
      made[name] = { id: body.assessmentId, mandate, score: body.outcome.outcome.risk_score };
    }
  });

  const of = (...names: string[]) => names.map((name) => made[name]!.id);

  it("q finds an assessment by its id, exactly", async () => {
    expect(ids(await list(key, `q=${made.cafe!.id}`))).toEqual(of("cafe"));
    expect(ids(await list(key, `q=${made.cafe!.id.toUpperCase()}`))).toEqual(of("cafe"));
    expect(ids(await list(key, `q=${made.cafe!.id.slice(0, 8)}`))).toEqual([]);
  });

  it("q finds by transaction_id and payee id, exactly", async () => {
    const tx = made.yen!.mandate.transaction_id as string;
    expect(ids(await list(key, `q=${encodeURIComponent(tx)}`))).toEqual(of("yen"));
    expect(ids(await list(key, `q=${encodeURIComponent(tx.slice(0, -1))}`))).toEqual([]);
    expect(ids(await list(key, "q=acct_books"))).toEqual(of("big", "books"));
    expect(ids(await list(key, "q=acct_book"))).toEqual([]);
  });

  it("q finds by payee name prefix, case-insensitive, wildcards taken literally", async () => {
    expect(ids(await list(key, `q=${encodeURIComponent("café lu")}`))).toEqual(of("cafe"));
    expect(ids(await list(key, "q=RYOKAN"))).toEqual(of("yen"));
    expect(ids(await list(key, `q=${encodeURIComponent("Book_Shop 100%")}`))).toEqual(
      of("big", "books"),
    );
    // `_` and `%` are characters, not LIKE's wildcards.
    expect(ids(await list(key, "q=Book%25"))).toEqual([]);
    expect(ids(await list(key, "q=B_ok"))).toEqual([]);
    expect(ids(await list(key, "q=Lumi"))).toEqual([]);
  });

  it("q finds by agent name prefix and agent id", async () => {
    expect(ids(await list(key, "q=acme%20pro"))).toEqual(of("yen", "cafe"));
    expect(ids(await list(key, `q=${agent.id}`))).toEqual(of("yen", "cafe"));
  });

  it("payee filters by payee id exactly; currency in any case", async () => {
    expect(ids(await list(key, "payee=acct_books"))).toEqual(of("big", "books"));
    expect(ids(await list(key, "payee=Book_Shop"))).toEqual([]);
    expect(ids(await list(key, "currency=jpy"))).toEqual(of("yen"));
    expect(ids(await list(key, "currency=USD"))).toEqual(of("big", "books"));
  });

  it("amount_gte and amount_lte are inclusive, in minor units", async () => {
    expect(ids(await list(key, "amount_gte=1500"))).toEqual(of("big", "yen", "books"));
    expect(ids(await list(key, "amount_lte=1500"))).toEqual(of("cafe", "books"));
    expect(ids(await list(key, "amount_gte=450&amount_lte=450"))).toEqual(of("cafe"));
    expect(ids(await list(key, "currency=usd&amount_gte=2000"))).toEqual(of("big"));
  });

  it("score_gte and score_lte bound risk_score, inclusive", async () => {
    const scores = Object.values(made).map((m) => m.score);
    const top = Math.max(...scores);
    const expected = Object.entries(made)
      .filter(([, m]) => m.score === top)
      .map(([, m]) => m.id)
      .reverse();
    expect(ids(await list(key, `score_gte=${top}`))).toEqual(expected);
    expect(ids(await list(key, `score_gte=${top}&score_lte=${top}`))).toEqual(expected);
    expect(ids(await list(key, "score_gte=0&score_lte=100"))).toHaveLength(4);
  });

  it("keeps every filter across keyset pages", async () => {
    const first = await list(key, "payee=acct_books&limit=1");
    expect(ids(first)).toEqual(of("big"));
    expect(first.json.has_more).toBe(true);
    const cursor = encodeURIComponent(first.json.next_cursor as string);
    const second = await list(key, `payee=acct_books&limit=1&cursor=${cursor}`);
    expect(ids(second)).toEqual(of("books"));
    expect(second.json).toMatchObject({ has_more: false, next_cursor: null });
    const q = await list(key, "q=acme&limit=1");
    const rest = await list(
      key,
      `q=acme&limit=1&cursor=${encodeURIComponent(q.json.next_cursor as string)}`,
    );
    expect([...ids(q), ...ids(rest)]).toEqual(of("yen", "cafe"));
  });

  it("refuses a range whose lower bound is above its upper bound, naming both", async () => {
    const res = await list(key, "amount_gte=500&amount_lte=100&score_gte=90&score_lte=10");
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: "amount_gte", message: "must not be above amount_lte (100)", code: "custom" },
        { path: "score_gte", message: "must not be above score_lte (10)", code: "custom" },
      ]),
    );
  });

  it.each([
    ["amount_gte=-1", "amount_gte"],
    ["amount_gte=1.5", "amount_gte"],
    ["amount_lte=1e3", "amount_lte"],
    ["amount_lte=", "amount_lte"],
    ["amount_gte=abc", "amount_gte"],
    ["amount_gte=99999999999999999", "amount_gte"],
    ["score_lte=101", "score_lte"],
    ["score_gte=%2010", "score_gte"],
    ["currency=US", "currency"],
    ["currency=US1", "currency"],
    ["q=", "q"],
    [`q=${"x".repeat(201)}`, "q"],
    ["q=a%00b", "q"],
    ["payee=", "payee"],
  ])("refuses %s with 400 naming %s", async (query, path) => {
    const res = await list(key, query);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect((res.error.details as Json[]).map((d) => d.path)).toEqual([path]);
  });

  it("needs assess:read with the new filters too", async () => {
    const { key: writer } = await org.key(["assess:write"]);
    expect((await list(writer, "q=acme")).status).toBe(403);
    expect((await call("/v1/assessments?q=acme&amount_gte=1")).status).toBe(401);
    const { key: reader } = await org.key(["assess:read"]);
    expect(ids(await list(reader, "q=acme"))).toEqual(of("yen", "cafe"));
  });

  it("never matches another org's payee, agent or assessment", async () => {
    const other = await orgWithKey();
    const theirs = await newAgent(other.org, { name: "Acme Procurement" });
    const body = await assessOk(other.key, {
      mandate: paying({ id: "acct_books", name: "Book_Shop 100%" }, 1500),
      agent_id: theirs.id,
    });
    expect(ids(await list(key, "q=acme"))).toEqual(of("yen", "cafe"));
    expect(ids(await list(key, "payee=acct_books"))).toEqual(of("big", "books"));
    expect(ids(await list(key, `q=${body.assessmentId}`))).toEqual([]);
    expect(ids(await list(key, `q=${theirs.id}`))).toEqual([]);
    expect(ids(await list(other.key, "q=acme"))).toEqual([body.assessmentId]);
    expect(ids(await list(other.key, `q=${made.books!.id}`))).toEqual([]);
  });

  it("keeps test and live apart: a test key finds only test assessments", async () => {
    const { key: testKey } = await org.key(undefined, "test");
    const body = await assessOk(testKey, {
      mandate: paying({ id: "acct_books", name: "Book_Shop 100%" }, 1500),
    });
    expect(ids(await list(testKey, "payee=acct_books"))).toEqual([body.assessmentId]);
    expect(ids(await list(testKey, "q=book"))).toEqual([body.assessmentId]);
    expect(ids(await list(testKey, `q=${made.books!.id}`))).toEqual([]);
    expect(ids(await list(key, `q=${body.assessmentId}`))).toEqual([]);
    expect(ids(await list(key, "payee=acct_books"))).toEqual(of("big", "books"));
  });
});

describe("review items carry the assessment's summary", () => {
  it("in the list and by id, equal to the assessments list's", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: paying({ id: "acct_x", name: "X Shop" }, 777) });
    expect(body.decision).toBe("review");
    const summary = (await list(key)).json.data[0] as Json;
    const items = await call("/v1/reviews", { key });
    expect(items.status).toBe(200);
    expect(items.json.data.map((r: Json) => r.assessment)).toEqual([summary]);
    const one = await call(`/v1/reviews/${items.json.data[0]?.id}`, { key });
    expect(one.json.assessment).toEqual(summary);
    expect(summary).toMatchObject({
      amount: 777,
      currency: "USD",
      payee: { id: "acct_x", name: "X Shop" },
    });
  });
});
