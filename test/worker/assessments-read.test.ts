import { beforeAll, describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import {
  agentOf,
  assessOk,
  examples,
  type Json,
  jcs,
  MANDATE_TYPES,
  orgWithKey,
  payment,
  sha256Hex,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { errorBody } from "./support/errors";
import { anchor } from "./support/ledger";

// Spec: GET /v1/assessments/{id} (the Outcome, identical to the POST's), GET /v1/assessments
// (list envelope of AssessmentSummary, filters, keyset pagination), GET /v1/mandates[/{id}].

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function list(key: string, query = "") {
  return call(`/v1/assessments?${query}`, { key });
}

function summaryOf(body: Json) {
  const o = body.outcome;
  return {
    id: o.id,
    object: "assessment",
    created: o.created,
    kind: o.kind,
    livemode: o.livemode,
    decision: o.outcome.decision,
    risk_level: o.outcome.risk_level,
    risk_score: o.outcome.risk_score,
    reason: o.outcome.reason,
    agent_id: o.agent?.id ?? null,
  };
}

/** Follows next_cursor to the end; returns every page. */
async function pages(key: string, query: string) {
  const all: Json[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await list(key, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(res.status).toBe(200);
    all.push(res.json);
    if (!res.json.has_more) {
      expect(res.json.next_cursor).toBeNull();
      return all;
    }
    expect(typeof res.json.next_cursor).toBe("string");
    cursor = res.json.next_cursor;
  }
  throw new Error("pagination never ended");
}

describe("GET /v1/assessments/{id}", () => {
  it.each(MANDATE_TYPES)(
    "answers the %s assessment deep-equal to the POST's outcome",
    async (t) => {
      const { key } = await orgWithKey();
      const body = await assessOk(key, { mandate: examples[t]() });
      const res = await call(`/v1/assessments/${body.assessmentId}`, { key });
      expect(res.status).toBe(200);
      expect(res.json).toEqual(body.outcome);
    },
  );

  it("also for an identified agent, a policy, A2A and the other kinds", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await call("/v1/policies", {
      method: "POST",
      token: org.token,
      body: { name: "p", rules: { max_amount: 100000, geo: { allow: ["US"] } }, activate: true },
    });
    const bodies = [
      await assessOk(key, { mandate: payment(), agent_id: agent.id }),
      await assessOk(key, { mandate: payment(), a2a: { task_id: "t", agent_card_ref: "x" } }),
      await assessOk(key, { kind: "voice_call", mandate: { phone: "555" }, agent_id: agent.id }),
      await assessOk(key, { kind: "custom", mandate: { amount: 10, currency: "USD" } }),
    ];
    for (const body of bodies) {
      const res = await call(`/v1/assessments/${body.assessmentId}`, { key });
      expect(res.json).toEqual(body.outcome);
    }
  });

  it("shows the agent as it stood when assessed, whatever happened to it since", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const body = await assessOk(key, { mandate: payment(), agent_id: agent.id });
    const patched = await call(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "suspended" },
    });
    expect(patched.status).toBe(200);
    const res = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(res.json).toEqual(body.outcome);
  });

  it("differs only in audit.status once a checkpoint covers the entry", async () => {
    const { org, key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    expect(body.outcome.audit.status).toBe("pending");
    await anchor(org.id);
    const res = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(res.json).toEqual({
      ...body.outcome,
      audit: { ...body.outcome.audit, status: "anchored" },
    });
    // A replay answers the same, now anchored.
    const replay = await assessOk(key, { mandate: body.mandate });
    expect(replay.outcome).toEqual(res.json);
  });

  it("a non-uuid id is a 404", async () => {
    const { key } = await orgWithKey();
    for (const id of ["not-a-uuid", "1", "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6", "%27%20or%201=1"]) {
      const res = await call(`/v1/assessments/${id}`, { key });
      expect(res.status, id).toBe(404);
      expect(res.error.error).toBe("not_found");
    }
  });

  it("an unknown uuid is a 404", async () => {
    const { key } = await orgWithKey();
    const res = await call(`/v1/assessments/${crypto.randomUUID()}`, { key });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });

  it("needs assess:read", async () => {
    const { org, key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const { key: writer } = await org.key(["assess:write"]);
    const res = await call(`/v1/assessments/${body.assessmentId}`, { key: writer });
    expect(res.status).toBe(403);
    expect((await call(`/v1/assessments/${body.assessmentId}`)).status).toBe(401);
    const { key: reader } = await org.key(["assess:read"]);
    expect((await call(`/v1/assessments/${body.assessmentId}`, { key: reader })).status).toBe(200);
  });
});

describe("GET /v1/assessments", () => {
  let org: TestOrg;
  let key: string;
  let agentId: string;
  const made = {} as Record<"approve" | "review" | "deny" | "custom", Json>;

  beforeAll(async () => {
    // The approved one's agent is proven by a verified credential (a claim earns no trust).
    const proven = await provenAgentOrg();
    ({ org, key, agentId } = proven);
    // Oldest first: approve (known agent), review (no agent), deny (expired), custom (review).
    made.approve = await assessOk(key, await proven.body());
    made.review = await assessOk(key, { mandate: payment() });
    made.deny = await assessOk(key, { mandate: examples.open_payment() });
    made.custom = await assessOk(key, { kind: "custom", mandate: { op: "x" } });
    expect(made.approve.decision).toBe("approve");
    expect(made.review.decision).toBe("review");
    expect(made.deny.decision).toBe("deny");
  });

  const ids = (res: { json: Json }) => res.json.data.map((s: Json) => s.id);

  it("answers the list envelope of summaries, newest first", async () => {
    const res = await list(key);
    expect(res.status).toBe(200);
    // The spec's AssessmentSummary fields, each with the value the outcome gave. (The service
    // also answers an `a2a` field the spec and docs/assess.md do not list; extra fields are
    // allowed, so only the documented ones are compared.)
    const expected = [made.custom, made.deny, made.review, made.approve].map(summaryOf);
    const documented = Object.keys(expected[0]!);
    expect({
      ...res.json,
      data: res.json.data.map((s: Json) => Object.fromEntries(documented.map((k) => [k, s[k]]))),
    }).toEqual({ object: "list", data: expected, has_more: false, next_cursor: null });
    for (const s of res.json.data) {
      expect(s.id).toMatch(UUID);
      for (const k of documented) expect(s, k).toHaveProperty(k);
    }
  });

  it.each([
    ["approve", "approve"],
    ["approved", "approve"],
    ["review", "review"],
    ["deny", "deny"],
    ["denied", "deny"],
  ])("filters status=%s", async (status, decision) => {
    const res = await list(key, `status=${status}`);
    expect(res.status).toBe(200);
    expect(res.json.data.length).toBeGreaterThan(0);
    for (const s of res.json.data) expect(s.decision).toBe(decision);
    if (decision === "approve" || decision === "deny") {
      expect(ids(res)).toEqual([made[decision].assessmentId]);
    }
  });

  it("filters by agent", async () => {
    expect(ids(await list(key, `agent=${agentId}`))).toEqual([made.approve.assessmentId]);
    expect(ids(await list(key, `agent=${crypto.randomUUID()}`))).toEqual([]);
  });

  it("filters by kind", async () => {
    expect(ids(await list(key, "kind=custom"))).toEqual([made.custom.assessmentId]);
    expect(ids(await list(key, "kind=ap2_payment"))).toEqual(
      [made.deny, made.review, made.approve].map((b) => b.assessmentId),
    );
    expect(ids(await list(key, "kind=voice_call"))).toEqual([]);
  });

  it("filters by from and to, inclusive", async () => {
    const at = made.review.outcome.created as string;
    expect(ids(await list(key, `from=${encodeURIComponent(at)}`))).toEqual(
      [made.custom, made.deny, made.review].map((b) => b.assessmentId),
    );
    expect(ids(await list(key, `to=${encodeURIComponent(at)}`))).toEqual(
      [made.review, made.approve].map((b) => b.assessmentId),
    );
    expect(
      ids(await list(key, `from=${encodeURIComponent(at)}&to=${encodeURIComponent(at)}`)),
    ).toEqual([made.review.assessmentId]);
    // The same instant with an offset.
    const shifted = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    expect(ids(await list(key, `to=${encodeURIComponent(shifted)}`))).toEqual(
      [made.review, made.approve].map((b) => b.assessmentId),
    );
  });

  it("combines filters", async () => {
    expect(ids(await list(key, "status=review&kind=custom"))).toEqual(
      made.custom.decision === "review" ? [made.custom.assessmentId] : [],
    );
    expect(ids(await list(key, `status=deny&agent=${agentId}`))).toEqual([]);
  });

  it.each([
    "status=approving",
    "status=",
    "status=APPROVE",
    "agent=not-a-uuid",
    "kind=wire",
    "from=yesterday",
    "to=2026-13-01T00:00:00Z",
    "from=1700000000",
    // Beyond what Postgres stores: years 1 to 9999.
    "from=0000-01-01T00:00:00Z",
    `to=${encodeURIComponent("9999-12-31T23:59:59-01:00")}`,
    "limit=0",
    "limit=101",
    "limit=-1",
    "limit=abc",
    "limit=1.5",
    "limit=",
  ])("refuses %s with 400", async (query) => {
    const res = await list(key, query);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it.each(["garbage", "eyJpZCI6Im5vcGUifQ", crypto.randomUUID()])(
    "refuses the cursor %s with 400",
    async (cursor) => {
      const res = await list(key, `cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_cursor");
    },
  );

  it("accepts limit 1 and 100", async () => {
    const one = await list(key, "limit=1");
    expect(one.status).toBe(200);
    expect(one.json.data).toHaveLength(1);
    expect(one.json.has_more).toBe(true);
    const hundred = await list(key, "limit=100");
    expect(hundred.json.data).toHaveLength(4);
    expect(hundred.json.has_more).toBe(false);
  });

  it("needs assess:read", async () => {
    const { key: writer } = await org.key(["assess:write"]);
    expect((await list(writer)).status).toBe(403);
    expect((await call("/v1/assessments")).status).toBe(401);
  });
});

describe("pagination", () => {
  it("limit defaults to 25", async () => {
    const { key } = await orgWithKey();
    const bodies = [];
    for (let i = 0; i < 26; i++) bodies.push(assessOk(key, { kind: "custom", mandate: { i } }));
    await Promise.all(bodies);
    const res = await list(key);
    expect(res.json.data).toHaveLength(25);
    expect(res.json.has_more).toBe(true);
    const rest = await list(key, `cursor=${encodeURIComponent(res.json.next_cursor!)}`);
    expect(rest.json.data).toHaveLength(1);
    expect(rest.json.has_more).toBe(false);
  });

  it("5 assessments with limit 2: pages of 2, 2, 1, newest first, each exactly once", async () => {
    const { key } = await orgWithKey();
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await assessOk(key, { mandate: payment() })).assessmentId);
    const all = await pages(key, "limit=2");
    expect(all.map((p) => p.data.length)).toEqual([2, 2, 1]);
    expect(all.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(all.flatMap((p) => p.data.map((s: Json) => s.id))).toEqual([...made].reverse());
  });

  it("an exact multiple of the limit ends without an empty page promised", async () => {
    const { key } = await orgWithKey();
    for (let i = 0; i < 4; i++) await assessOk(key, { mandate: payment() });
    const all = await pages(key, "limit=2");
    expect(all.map((p) => p.data.length)).toEqual([2, 2]);
    expect(all[1]!.has_more).toBe(false);
  });

  it("is stable while new assessments are inserted between pages", async () => {
    const { key } = await orgWithKey();
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await assessOk(key, { mandate: payment() })).assessmentId);
    const first = await list(key, "limit=2");
    // Two newer assessments arrive while the client pages.
    await assessOk(key, { mandate: payment() });
    await assessOk(key, { mandate: payment() });
    const seen = first.json.data.map((s: Json) => s.id);
    let cursor = first.json.next_cursor;
    while (cursor) {
      const page = await list(key, `limit=2&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.json.data.map((s: Json) => s.id));
      cursor = page.json.next_cursor;
    }
    expect(seen).toEqual([...made].reverse());
  });

  it("keeps the filter across pages", async () => {
    const { key } = await orgWithKey();
    for (let i = 0; i < 3; i++) {
      await assessOk(key, { mandate: payment() });
      await assessOk(key, { kind: "custom", mandate: { i } });
    }
    const all = await pages(key, "limit=2&kind=custom");
    const data = all.flatMap((p) => p.data);
    expect(data).toHaveLength(3);
    for (const s of data) expect(s.kind).toBe("custom");
  });
});

describe("GET /v1/mandates", () => {
  it("lists the stored mandates as submitted, and reads each by id", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({ risk_data: { device: "d-1" } });
    const body = await assessOk(key, { mandate });
    const custom = await assessOk(key, { kind: "custom", mandate: { op: "x" } });
    const res = await call("/v1/mandates", { key });
    expect(res.status).toBe(200);
    expect(res.json.object).toBe("list");
    expect(res.json.data.map((m: Json) => m.id)).toEqual([custom.mandateId, body.mandateId]);

    const one = await call(`/v1/mandates/${body.mandateId}`, { key });
    expect(one.status).toBe(200);
    expect(one.json).toEqual({
      object: "mandate",
      id: body.mandateId,
      assessment_id: body.assessmentId,
      kind: "ap2_payment",
      mandate_type: "payment",
      vct: "mandate.payment.1",
      content_hash: expect.any(String),
      mandate_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      mandate,
      livemode: true,
      created: expect.any(String),
      erased_at: null,
      erased_fields: [],
    });
    const contentHash = await sha256Hex(
      jcs({ kind: "ap2_payment", mandateType: "payment", mandate }),
    );
    expect(one.json.content_hash).toContain(contentHash);
    expect(res.json.data[1]).toEqual(one.json);
  });

  it.each([
    ["payment", "mandate.payment.1"],
    ["open_payment", "mandate.payment.open.1"],
    ["checkout", "mandate.checkout.1"],
    ["open_checkout", "mandate.checkout.open.1"],
  ] as const)("records the %s type and its vct", async (type, vct) => {
    const { key } = await orgWithKey();
    const mandate = examples[type]();
    const body = await assessOk(key, { mandate });
    const res = await call(`/v1/mandates/${body.mandateId}`, { key });
    expect(res.json).toMatchObject({ kind: "ap2_payment", mandate_type: type, vct, mandate });
  });

  it("records a non-AP2 mandate with no type", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { kind: "voice_call", mandate: { phone: "+15551234567" } });
    const res = await call(`/v1/mandates/${body.mandateId}`, { key });
    expect(res.json).toMatchObject({ kind: "voice_call", mandate_type: null, vct: null });
  });

  it("filters by kind", async () => {
    const { key } = await orgWithKey();
    await assessOk(key, { mandate: payment() });
    const custom = await assessOk(key, { kind: "custom", mandate: { op: "x" } });
    const res = await call("/v1/mandates?kind=custom", { key });
    expect(res.json.data.map((m: Json) => m.id)).toEqual([custom.mandateId]);
  });

  it("a non-uuid or unknown id is a 404", async () => {
    const { key } = await orgWithKey();
    for (const id of ["nope", crypto.randomUUID()]) {
      expect((await call(`/v1/mandates/${id}`, { key })).status).toBe(404);
    }
  });

  it("needs assess:read", async () => {
    const { org } = await orgWithKey();
    const { key } = await org.key(["assess:write"]);
    expect((await call("/v1/mandates", { key })).status).toBe(403);
  });
});

describe("a test key's records", () => {
  it("are livemode false in the outcome, the summary and the mandate", async () => {
    const { key } = await orgWithKey("test");
    const body = await assessOk(key, { mandate: payment() });
    expect(body.outcome.livemode).toBe(false);
    expect((await list(key)).json.data[0]!.livemode).toBe(false);
    expect((await call(`/v1/mandates/${body.mandateId}`, { key })).json.livemode).toBe(false);
  });
});

describe("cross-tenant", () => {
  it("an assessment of org A is a 404 for org B on every read route", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const agent = await agentOf(a.org);
    const body = await assessOk(a.key, { mandate: payment(), agent_id: agent.id });
    await assessOk(b.key, { mandate: payment() });

    const one = await call(`/v1/assessments/${body.assessmentId}`, { key: b.key });
    expect(one.status).toBe(404);
    expect(one.error).toEqual(errorBody("not_found"));
    const mandate = await call(`/v1/mandates/${body.mandateId}`, { key: b.key });
    expect(mandate.status).toBe(404);
    expect(mandate.error).toEqual(errorBody("not_found"));

    const theirs = await list(b.key);
    expect(theirs.json.data).toHaveLength(1);
    expect(theirs.json.data[0]!.id).not.toBe(body.assessmentId);
    expect((await list(b.key, `agent=${agent.id}`)).json.data).toEqual([]);
    const mandates = await call("/v1/mandates", { key: b.key });
    expect(mandates.json.data.map((m: Json) => m.id)).not.toContain(body.mandateId);

    // With a session of org B too.
    expect(
      (await call(`/v1/assessments/${body.assessmentId}`, { token: b.org.token })).status,
    ).toBe(404);
    // And org A still reads it.
    expect((await call(`/v1/assessments/${body.assessmentId}`, { key: a.key })).status).toBe(200);
  });

  it("a cursor from org A reveals nothing to org B", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    for (let i = 0; i < 3; i++) await assessOk(a.key, { mandate: payment() });
    await assessOk(b.key, { mandate: payment() });
    const page = await list(a.key, "limit=1");
    const res = await list(b.key, `limit=5&cursor=${encodeURIComponent(page.json.next_cursor!)}`);
    if (res.status === 200) {
      const aIds = (await list(a.key)).json.data.map((s: Json) => s.id);
      for (const s of res.json.data) expect(aIds).not.toContain(s.id);
    } else {
      expect(res.status).toBe(400);
    }
  });
});
