import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import worker from "../../workers/main";
import { call, newOrg } from "./support/api";
import { assessOk, examples, type Json, orgWithKey, payment } from "./support/assess";
import { addMember, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { createEndpoint, eventually, received, receiver } from "./support/webhooks";

// docs/reviews.md: every `review` assessment opens one review item; a person (or a key with
// review:write) resolves it once, with a new signed Risk Payload; past the org's SLA the Cron
// sweep denies it (`review.expired`).

/** An assessment of an unknown agent: `review` (docs/risk-model.md), opening an item. */
async function reviewed(key: string, mandate: Json = payment()) {
  const body = await assessOk(key, { mandate });
  expect(body.decision).toBe("review");
  return { body, mandate };
}

async function itemOf(token: { key?: string; token?: string }, assessmentId: string) {
  const res = await call("/v1/reviews?order=desc&limit=100", token);
  expect(res.status).toBe(200);
  return res.json.data.find((r) => r.assessment_id === assessmentId) as Json;
}

function resolve(id: string, auth: { key?: string; token?: string }, body: Json) {
  return call(`/v1/reviews/${id}/resolve`, { method: "POST", ...auth, raw: true, body });
}

async function keySet(): Promise<JSONWebKeySet> {
  return (await call("/.well-known/jwks.json")).json as JSONWebKeySet;
}

async function sweep() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

async function ledgerEntries(orgId: string, reviewId: string) {
  return ownerSql`select type, actor_type, actor_id from audit_entries
    where org_id = ${orgId} and subject_type = 'review' and subject_id = ${reviewId}`;
}

describe("opening review items", () => {
  it("opens one item per review assessment, named by the Outcome's refinement", async () => {
    const { org, key } = await orgWithKey();
    const { body } = await reviewed(key);
    const item = await itemOf({ key }, body.assessmentId);
    expect(item).toMatchObject({
      object: "review",
      assessment_id: body.assessmentId,
      livemode: true,
      status: "open",
      original_decision: "review",
      decision: null,
      reason: null,
      note: null,
      resolved_by: null,
      risk_payload: null,
      credential_backed: false,
    });
    // The default SLA: a day after the assessment.
    expect(Date.parse(item.expires_at) - Date.parse(item.created)).toBe(86_400_000);
    expect(item.created).toBe(body.outcome.created);
    expect(body.outcome.refinement).toEqual({
      status: "open",
      review_id: item.id,
      decision: null,
      reason: null,
      resolved_at: null,
      resolved_by: null,
      risk_payload: null,
    });
    const rows = await ownerSql`select count(*)::int as n from reviews where org_id = ${org.id}`;
    expect(rows[0]?.n).toBe(1);
  });

  it("opens no second item on a replay, and the replay shows the same Outcome as GET", async () => {
    const { org, key } = await orgWithKey();
    const { body, mandate } = await reviewed(key);
    const again = await assessOk(key, { mandate });
    expect(again.assessmentId).toBe(body.assessmentId);
    const got = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(got.status).toBe(200);
    const { audit: _a, ...replayed } = again.outcome;
    const { audit: _b, ...read } = got.json;
    expect(replayed).toEqual(read);
    expect(read.refinement!.status).toBe("open");
    const rows = await ownerSql`select count(*)::int as n from reviews where org_id = ${org.id}`;
    expect(rows[0]?.n).toBe(1);
  });

  it("opens none for a denial", async () => {
    const { org, key } = await orgWithKey();
    // The reference open payment mandate expired: its own bound denies it.
    const denied = await assessOk(key, { mandate: examples.open_payment() });
    expect(denied.decision).toBe("deny");
    expect(denied.outcome.refinement).toBeNull();
    const rows = await ownerSql`select count(*)::int as n from reviews where org_id = ${org.id}`;
    expect(rows[0]?.n).toBe(0);
  });
});

describe("GET /v1/reviews", () => {
  it("lists oldest first by default, newest first on request, with a cursor", async () => {
    const { key } = await orgWithKey();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { body } = await reviewed(key);
      ids.push(body.assessmentId);
    }
    const first = await call("/v1/reviews?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json.data.map((r: Json) => r.assessment_id)).toEqual(ids.slice(0, 2));
    expect(first.json.has_more).toBe(true);
    const next = await call(`/v1/reviews?limit=2&cursor=${first.json.next_cursor}`, { key });
    expect(next.json.data.map((r: Json) => r.assessment_id)).toEqual(ids.slice(2));
    expect(next.json.has_more).toBe(false);
    const desc = await call("/v1/reviews?order=desc", { key });
    expect(desc.json.data.map((r: Json) => r.assessment_id)).toEqual([...ids].reverse());
  });

  it("filters by status, agent and time", async () => {
    const { org, key } = await orgWithKey();
    const a = (await reviewed(key)).body;
    const b = (await reviewed(key)).body;
    const itemA = await itemOf({ key }, a.assessmentId);
    expect((await resolve(itemA.id, { token: org.token }, { decision: "deny" })).status).toBe(200);
    const open = await call("/v1/reviews?status=open", { key });
    expect(open.json.data.map((r: Json) => r.assessment_id)).toEqual([b.assessmentId]);
    const resolved = await call("/v1/reviews?status=resolved", { key });
    expect(resolved.json.data.map((r: Json) => r.assessment_id)).toEqual([a.assessmentId]);
    const expired = await call("/v1/reviews?status=expired", { key });
    expect(expired.json.data).toEqual([]);
    const agent = await call(`/v1/reviews?agent=${crypto.randomUUID()}`, { key });
    expect(agent.json.data).toEqual([]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await call(`/v1/reviews?from=${future}`, { key })).json.data).toEqual([]);
    const to = encodeURIComponent(a.outcome.created);
    const until = await call(`/v1/reviews?to=${to}`, { key });
    expect(until.json.data.map((r: Json) => r.assessment_id)).toEqual([a.assessmentId]);
  });

  it("keeps test and live items apart", async () => {
    const org = await newOrg();
    const live = (await org.key(undefined, "live")).key;
    const test = (await org.key(undefined, "test")).key;
    const liveReview = (await reviewed(live)).body;
    const testReview = (await reviewed(test)).body;
    const liveItem = await itemOf({ key: live }, liveReview.assessmentId);
    const testItem = await itemOf({ key: test }, testReview.assessmentId);
    expect(testItem.livemode).toBe(false);
    const testList = await call("/v1/reviews", { key: test });
    expect(testList.json.data.map((r: Json) => r.id)).toEqual([testItem.id]);
    expect((await call(`/v1/reviews/${liveItem.id}`, { key: test })).status).toBe(404);
    expect((await call(`/v1/reviews/${testItem.id}`, { key: live })).status).toBe(404);
    const cross = await resolve(liveItem.id, { key: test }, { decision: "approve" });
    expect(cross.status).toBe(404);
    // A test key resolves its own mode's item.
    const own = await resolve(testItem.id, { key: test }, { decision: "approve" });
    expect(own.status).toBe(200);
    expect(own.json.livemode).toBe(false);
    expect(decodeJwt(own.json.risk_payload!.jws).livemode).toBe(false);
    // Its event is a test event, delivered to test endpoints only.
    const events = await ownerSql`select livemode from events
      where type = 'assessment.resolved' and data->>'review_id' = ${testItem.id}`;
    expect(events).toEqual([{ livemode: false }]);
  });
});

describe("POST /v1/reviews/{id}/resolve", () => {
  it("resolves as the session's person, with a new signed payload verifiable offline", async () => {
    const { org, key } = await orgWithKey();
    const { body, mandate } = await reviewed(key);
    const item = await itemOf({ key }, body.assessmentId);
    const me = (await call("/v1/me", { token: org.token })).json;
    const res = await resolve(item.id, { token: org.token }, { decision: "approve", note: "ok" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id: item.id,
      status: "resolved",
      decision: "approve",
      reason: "review.resolved",
      note: "ok",
      resolved_by: { type: "user", id: me.actor.id },
    });
    const { jws, kid, alg, verify_url } = res.json.risk_payload!;
    expect(alg).toBe("EdDSA");
    expect(verify_url).toBe(body.outcome.risk_payload.verify_url);
    const original = decodeJwt(body.outcome.risk_payload.jws);
    // Offline: the key set alone, as a downstream party holding the first verdict would.
    const verified = await jwtVerify(jws, createLocalJWKSet(await keySet()), {
      issuer: original.iss as string,
      typ: "risk-payload+jwt",
    });
    expect(verified.protectedHeader.kid).toBe(kid);
    const claims = verified.payload as Json;
    expect(claims).toMatchObject({
      sub: body.assessmentId,
      assessment_id: body.assessmentId,
      mandate_id: original.mandate_id,
      mandate_hash: original.mandate_hash,
      log_id: original.log_id,
      livemode: true,
      decision: "approve",
      resolution: {
        review_id: item.id,
        status: "resolved",
        reason: "review.resolved",
        resolved_by: "person",
        resolver: { type: "user", id: me.actor.id },
        resolved_at: res.json.resolved_at,
        original_decision: "review",
        original_jti: original.jti,
      },
    });
    expect(claims.jti).not.toBe(original.jti);
    // The original assessment and its JWS are unchanged; its refinement names the resolution.
    const got = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(got.json.outcome.decision).toBe("review");
    expect(got.json.risk_payload.jws).toBe(body.outcome.risk_payload.jws);
    expect(got.json.refinement).toEqual({
      status: "resolved",
      review_id: item.id,
      decision: "approve",
      reason: "review.resolved",
      resolved_at: res.json.resolved_at,
      resolved_by: { type: "user", id: me.actor.id },
      risk_payload: res.json.risk_payload,
    });
    // A replay of the original request shows the same Outcome.
    const replay = await assessOk(key, { mandate });
    const { audit: _a, ...replayed } = replay.outcome;
    const { audit: _b, ...read } = got.json;
    expect(replayed).toEqual(read);
    // In the ledger once, by the person.
    const entries = await ledgerEntries(org.id, item.id);
    expect(entries).toEqual([
      { type: "review.resolved", actor_type: "user", actor_id: me.actor.id },
    ]);
    expect(res.json.audit_entry_id).toEqual(expect.any(String));
  });

  it("answers 409 to a second resolve, and changes nothing", async () => {
    const { org, key } = await orgWithKey();
    const item = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    const first = await resolve(item.id, { token: org.token }, { decision: "deny" });
    expect(first.status).toBe(200);
    const second = await resolve(item.id, { token: org.token }, { decision: "approve" });
    expect(second.status).toBe(409);
    expect(second.json).toEqual(
      errorBody("review_already_resolved", {
        status: "resolved",
        decision: "deny",
        resolved_at: first.json.resolved_at,
      }),
    );
    const now = await call(`/v1/reviews/${item.id}`, { key });
    expect(now.json).toEqual(first.json);
  });

  it("lets exactly one of concurrent resolves win", async () => {
    const { org, key } = await orgWithKey();
    const item = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    const decisions = ["approve", "deny", "approve", "deny", "approve", "deny"];
    const answers = await Promise.all(
      decisions.map((decision) => resolve(item.id, { key }, { decision })),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(decisions.length - 1);
    for (const lost of answers.filter((a) => a.status === 409)) {
      expect(lost.error.error).toBe("review_already_resolved");
    }
    const stored = await call(`/v1/reviews/${item.id}`, { key });
    expect(stored.json.decision).toBe(won[0]?.json.decision);
    expect(stored.json.risk_payload).toEqual(won[0]?.json.risk_payload);
    expect(await ledgerEntries(org.id, item.id)).toHaveLength(1);
    const events = await ownerSql`select count(*)::int as n from events
      where org_id = ${org.id} and type = 'assessment.resolved'`;
    expect(events[0]?.n).toBe(1);
  });

  it("records a key as the resolver, and lets admins decide but not members", async () => {
    const { org, key } = await orgWithKey();
    const reviewKey = await org.key(["review:read", "review:write"]);
    const one = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    const byKey = await resolve(one.id, { key: reviewKey.key }, { decision: "deny" });
    expect(byKey.status).toBe(200);
    expect(byKey.json.resolved_by).toEqual({ type: "api_key", id: reviewKey.id });
    expect(decodeJwt(byKey.json.risk_payload!.jws).resolution).toMatchObject({
      resolved_by: "api_key",
    });
    const readOnly = await org.key(["review:read"]);
    const two = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    const refused = await resolve(two.id, { key: readOnly.key }, { decision: "deny" });
    expect(refused.status).toBe(403);
    expect(refused.error).toEqual(errorBody("insufficient_scope", { required: "review:write" }));
    const admin = await newOrg();
    const member = await newOrg();
    await addMember(org.id, admin.subject, "admin");
    await addMember(org.id, member.subject, "member");
    const headers = { "x-org-id": org.id };
    const asMember = await call(`/v1/reviews/${two.id}/resolve`, {
      method: "POST",
      token: member.token,
      headers,
      body: { decision: "approve" },
    });
    expect(asMember.status).toBe(403);
    const asAdmin = await call(`/v1/reviews/${two.id}/resolve`, {
      method: "POST",
      token: admin.token,
      headers,
      body: { decision: "approve" },
    });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.json.resolved_by!.type).toBe("user");
  });

  it("refuses a bad body with 400 and an unknown item with 404", async () => {
    const { org, key } = await orgWithKey();
    const item = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    for (const body of [{}, { decision: "maybe" }, { decision: "approve", extra: 1 }]) {
      const res = await resolve(item.id, { token: org.token }, body);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
    const long = await resolve(
      item.id,
      { token: org.token },
      {
        decision: "deny",
        note: "x".repeat(1001),
      },
    );
    expect(long.status).toBe(400);
    const missing = await resolve(crypto.randomUUID(), { token: org.token }, { decision: "deny" });
    expect(missing.status).toBe(404);
    expect((await call(`/v1/reviews/${item.id}`, { key })).json.status).toBe("open");
  });
});

describe("the review SLA", () => {
  async function overdue(key: string) {
    const { body } = await reviewed(key);
    const item = await itemOf({ key }, body.assessmentId);
    await ownerSql`update reviews set expires_at = now() - interval '1 second'
      where id = ${item.id}`;
    return { body, item };
  }

  it("is a day by default and configurable per org; open items keep their due time", async () => {
    const { org, key } = await orgWithKey();
    const first = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    expect((await call("/v1/review-settings", { key })).json).toEqual({
      object: "review_settings",
      sla_seconds: 86_400,
      default: true,
    });
    const set = await call("/v1/review-settings", {
      method: "POST",
      token: org.token,
      body: { sla_seconds: 3600 },
    });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ object: "review_settings", sla_seconds: 3600, default: false });
    expect((await call("/v1/review-settings", { key })).json.sla_seconds).toBe(3600);
    const later = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    expect(Date.parse(later.expires_at) - Date.parse(later.created)).toBe(3_600_000);
    const unchanged = await call(`/v1/reviews/${first.id}`, { key });
    expect(unchanged.json.expires_at).toBe(first.expires_at);
    for (const sla_seconds of [59, 2_592_001, "3600", 1.5]) {
      const bad = await call("/v1/review-settings", {
        method: "POST",
        token: org.token,
        raw: true,
        body: { sla_seconds },
      });
      expect(bad.status).toBe(400);
      expect(bad.error.error).toBe("invalid_request");
    }
  });

  it("refuses to resolve an item past its SLA, even before the sweep", async () => {
    const { org, key } = await orgWithKey();
    const { item } = await overdue(key);
    const res = await resolve(item.id, { token: org.token }, { decision: "approve" });
    expect(res.status).toBe(409);
    expect(res.error.error).toBe("review_expired");
    expect((await call(`/v1/reviews/${item.id}`, { key })).json.status).toBe("open");
  });

  it("refuses in the ledger object a close that reaches it after the SLA: nothing is sequenced and the sweep still denies", async () => {
    const { org, key } = await orgWithKey();
    const { item } = await overdue(key);
    // What a resolve that passed the arrival check hands the ledger object once the SLA is over
    // (src/reviews/close.ts): the item's one key, with the item's deadline.
    const input = {
      type: "review.resolved",
      actor: { type: "user", id: "late-resolver" },
      subject: { type: "review", id: item.id as string },
      digest: `sha256:${"cd".repeat(32)}`,
      once: [`review:${item.id}`],
      attachment: "{}",
      // The deadline `overdue` set: a second ago.
      notAfter: Date.now() - 1000,
    };
    const ledger = ledgerOf(env, org.id);
    expect(
      await ledger.appendDeferred(org.id, input, { kind: "before", notAfter: input.notAfter }),
    ).toEqual({ late: true });
    const spend = {
      root: "root",
      transaction: "tx",
      amount: 100,
      currency: "USD",
      budgets: [],
      maxOccurrences: null,
    };
    const rule = { kind: "spending", spend, livemode: false, notAfter: input.notAfter } as const;
    expect(await ledger.appendDeferred(org.id, input, rule)).toEqual({
      late: true,
    });
    await sweep();
    const swept = await call(`/v1/reviews/${item.id}`, { key });
    expect(swept.json).toMatchObject({ status: "expired", decision: "deny" });
    const entries = await ledgerEntries(org.id, item.id as string);
    expect(entries.map((e) => e.actor_id)).not.toContain("late-resolver");
    expect(entries).toHaveLength(1);
  });

  it("expires an overdue item through the Cron sweep as deny, audited and signed", async () => {
    const { org, key } = await orgWithKey();
    const { body, item } = await overdue(key);
    const fresh = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    await sweep();
    const expired = await call(`/v1/reviews/${item.id}`, { key });
    expect(expired.json).toMatchObject({
      status: "expired",
      decision: "deny",
      reason: "review.expired",
      resolved_by: { type: "system", id: "review-sla" },
    });
    const verified = await jwtVerify(
      expired.json.risk_payload!.jws,
      createLocalJWKSet(await keySet()),
    );
    expect(verified.payload).toMatchObject({
      assessment_id: body.assessmentId,
      decision: "deny",
      resolution: { status: "expired", reason: "review.expired", resolved_by: "sla" },
    });
    expect(await ledgerEntries(org.id, item.id)).toEqual([
      { type: "review.resolved", actor_type: "system", actor_id: "review-sla" },
    ]);
    const events = await ownerSql`select data from events
      where org_id = ${org.id} and type = 'assessment.resolved'`;
    expect(events.map((e) => e.data.review_id)).toEqual([item.id]);
    expect(events[0]?.data).toMatchObject({ decision: "deny", reason: "review.expired" });
    // An expired review is never approved.
    const late = await resolve(item.id, { token: org.token }, { decision: "approve" });
    expect(late.status).toBe(409);
    expect(late.error.error).toBe("review_expired");
    const got = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(got.json.refinement).toMatchObject({ status: "expired", decision: "deny" });
    // The one not yet due stays open; a second sweep changes nothing.
    await sweep();
    expect((await call(`/v1/reviews/${fresh.id}`, { key })).json.status).toBe("open");
    expect(await ledgerEntries(org.id, item.id)).toHaveLength(1);
  });
});

describe("the assessment.resolved webhook", () => {
  it("is delivered, signed, to an endpoint subscribed to it", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    await createEndpoint(key, { url: hook.url, event_types: ["assessment.resolved"] });
    const item = await itemOf({ key }, (await reviewed(key)).body.assessmentId);
    const res = await resolve(item.id, { token: org.token }, { decision: "deny", note: "fraud" });
    expect(res.status).toBe(200);
    const log = await eventually(
      async () => {
        const got = await received(hook.name);
        return got.arrivals.length > 0 ? got : undefined;
      },
      20_000,
      "the assessment.resolved delivery",
    );
    expect(log.arrivals).toHaveLength(1);
    const arrival = log.arrivals[0];
    expect(arrival?.type).toBe("assessment.resolved");
    expect(arrival?.verified).toBe(true);
    expect(arrival?.body.data).toEqual({
      assessment_id: item.assessment_id,
      review_id: item.id,
      status: "resolved",
      decision: "deny",
      original_decision: "review",
      reason: "review.resolved",
      resolved_by: res.json.resolved_by,
      resolved_at: res.json.resolved_at,
      agent_id: null,
      risk_payload: { jws: res.json.risk_payload!.jws, kid: res.json.risk_payload!.kid },
    });
  });
});
