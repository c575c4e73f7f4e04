import { describe, expect, it } from "vitest";
import { call } from "./support/api";
import {
  agentOf,
  assess,
  assessOk,
  assessRaw,
  countRows,
  examples,
  type Json,
  jcs,
  orgWithKey,
  payment,
  sha256Hex,
} from "./support/assess";
import { ownerSql } from "./support/db";

// docs/assess.md, Idempotency: the key of an assessment is the SHA-256 of the canonical
// {kind, mandateType, mandate, agent_id?, agent_card_ref?, audience?}, our namespace removed,
// prefixed `test:` in test mode; the same content answers the stored one.

/** The stored idempotency key (content_hash) of an assessment, read as the owner. */
async function storedContentHash(assessmentId: string): Promise<string> {
  const [row] = await ownerSql`select content_hash from assessments where id = ${assessmentId}`;
  return row?.content_hash as string;
}

describe("the hashed object, exactly as docs/assess.md writes it", () => {
  it("a live AP2 request with nothing optional: {kind, mandateType, mandate}", async () => {
    const { key } = await orgWithKey();
    const mandate = payment({ risk_data: { device: "d-1" } });
    const body = await assessOk(key, { mandate, idempotency_key: `k-${crypto.randomUUID()}` });
    const hashed = { kind: "ap2_payment", mandateType: "payment", mandate };
    expect(await storedContentHash(body.assessmentId)).toBe(await sha256Hex(jcs(hashed)));
  });

  it("with every optional member, in test mode: the members named, and the prefix test:", async () => {
    const { org, key: live } = await orgWithKey();
    const { key: test } = await org.key(undefined, "test");
    const agent = await agentOf(org);
    const mandate = payment();
    const request = {
      mandate,
      agent_id: agent.id,
      audience: "https://psp.example",
      a2a: { agent_card_ref: "https://agent.example/card.json", task_id: "t-1", context_id: "c" },
      idempotency_key: `k-${crypto.randomUUID()}`,
    };
    const body = await assessOk(test, request, { "A2A-Version": "1.0" });
    const hashed = {
      kind: "ap2_payment",
      mandateType: "payment",
      mandate,
      agent_id: agent.id,
      agent_card_ref: "https://agent.example/card.json",
      audience: "https://psp.example",
    };
    const hash = await sha256Hex(jcs(hashed));
    expect(await storedContentHash(body.assessmentId)).toBe(`test:${hash}`);
    // The same request in live mode: the same hash, without the prefix.
    const fromLive = await assessOk(live, { ...request, idempotency_key: undefined });
    expect(await storedContentHash(fromLive.assessmentId)).toBe(hash);
  });

  it("another kind: mandateType is null, and the mandate any object", async () => {
    const { key } = await orgWithKey();
    const mandate = { to: "+15550100", text: `hello ${crypto.randomUUID()}` };
    const body = await assessOk(key, { kind: "message_send", mandate });
    const hashed = { kind: "message_send", mandateType: null, mandate };
    expect(await storedContentHash(body.assessmentId)).toBe(await sha256Hex(jcs(hashed)));
  });

  it("our namespace is not hashed, nor a risk_data it was all of", async () => {
    const { key } = await orgWithKey();
    const ours = { "agent-risk": { decision: "approve" } };
    const mandate = payment({ risk_data: { device: "d-1", ...ours } });
    const { risk_data: _, ...bare } = mandate;
    const withTheirs = await assessOk(key, { mandate });
    const onlyOurs = await assessOk(key, { mandate: { ...bare, risk_data: ours } });
    const hash = (m: Json) =>
      sha256Hex(jcs({ kind: "ap2_payment", mandateType: "payment", mandate: m }));
    expect(await storedContentHash(withTheirs.assessmentId)).toBe(
      await hash({ ...bare, risk_data: { device: "d-1" } }),
    );
    expect(await storedContentHash(onlyOurs.assessmentId)).toBe(await hash(bare));
  });
});

describe("the same request twice", () => {
  it("answers deep-equal responses, with one row each and one ledger entry", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment() };
    const first = await assess(key, body);
    const second = await assess(key, body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
  });

  it.each(["open_payment", "checkout", "open_checkout"] as const)(
    "holds for the %s example",
    async (type) => {
      const { org, key } = await orgWithKey();
      const a = await assessOk(key, { mandate: examples[type]() });
      const b = await assessOk(key, { mandate: examples[type]() });
      expect(b).toEqual(a);
      expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
    },
  );

  it("does not depend on the order of keys (the canonical form is hashed)", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const reordered = Object.fromEntries(Object.entries(structuredClone(mandate)).reverse());
    reordered.payee = Object.fromEntries(Object.entries(mandate.payee).reverse());
    const a = await assessOk(key, { mandate });
    const b = await assessOk(key, { mandateType: "payment", mandate: reordered });
    expect(b.assessmentId).toBe(a.assessmentId);
    expect(b.riskPayloadJws).toBe(a.riskPayloadJws);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, ledger: 1 });
  });

  it("does not depend on how the JSON text spells the same values", async () => {
    const { org, key } = await orgWithKey();
    const id = crypto.randomUUID();
    const spelled = [
      `{"mandate":{"vct":"mandate.payment.1","transaction_id":"tx-${id}","payee":{"id":"m-é","name":"Café"},"payment_amount":{"amount":19900,"currency":"USD"},"payment_instrument":{"id":"stub","type":"card"}}}`,
      `{"mandate":{"vct":"mandate.payment.1","transaction_id":"tx-${id}","payee":{"id":"m-\\u00e9","name":"Caf\\u00E9"},"payment_amount":{"amount":1.99e4,"currency":"\\u0055SD"},"payment_instrument":{"id":"stub","type":"card"}}}`,
      ` { "mandate" : { "payment_instrument" : { "type" : "card" , "id" : "stub" } , "payment_amount" : { "currency" : "USD" , "amount" : 19900.0 } , "payee" : { "name" : "Café" , "id" : "m-é" } , "transaction_id" : "tx-${id}" , "vct" : "mandate.payment.1" } } `,
    ];
    const answers = [];
    for (const text of spelled) answers.push(await assessRaw(key, text));
    for (const a of answers) expect(a.status).toBe(200);
    expect(new Set(answers.map((a) => a.json.assessmentId)).size).toBe(1);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, ledger: 1 });
  });

  it("answers the same outcome from GET /v1/assessments/{id} after a replay", async () => {
    const { key } = await orgWithKey();
    const mandate = payment();
    const a = await assessOk(key, { mandate });
    await assessOk(key, { mandate });
    const read = await call(`/v1/assessments/${a.assessmentId}`, { key });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(a.outcome);
  });

  it("is the same request whatever the A2A binding (it is not part of the content)", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const a = await assessOk(key, { mandate });
    const b = await assessOk(key, { mandate }, { "A2A-Version": "1.0" });
    expect(b.assessmentId).toBe(a.assessmentId);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });
});

describe("different content is a different assessment", () => {
  it.each([
    ["the amount", (m: Json) => ({ ...m, payment_amount: { amount: 19901, currency: "USD" } })],
    ["an added field", (m: Json) => ({ ...m, note: "x" })],
    ["the client's risk_data", (m: Json) => ({ ...m, risk_data: { device: "d" } })],
  ])("%s", async (_, change) => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const a = await assessOk(key, { mandate });
    const b = await assessOk(key, { mandate: change(mandate) });
    expect(b.assessmentId).not.toBe(a.assessmentId);
    expect(await countRows(org.id)).toMatchObject({ assessments: 2, mandates: 2, ledger: 2 });
  });

  it("the kind", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const a = await assessOk(key, { mandate });
    const b = await assessOk(key, { kind: "custom", mandate });
    expect(b.assessmentId).not.toBe(a.assessmentId);
    expect(b.outcome.kind).toBe("custom");
    expect(await countRows(org.id)).toMatchObject({ assessments: 2 });
  });

  it("the organization: each org has its own assessment of the same mandate", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const mandate = payment();
    const ra = await assessOk(a.key, { mandate });
    const rb = await assessOk(b.key, { mandate });
    expect(rb.assessmentId).not.toBe(ra.assessmentId);
    expect(await countRows(a.org.id)).toMatchObject({ assessments: 1 });
    expect(await countRows(b.org.id)).toMatchObject({ assessments: 1 });
  });
});

describe("sending back the returned mandate", () => {
  it("answers the same assessment (our injected namespace is not content)", async () => {
    const { org, key } = await orgWithKey();
    const first = await assessOk(key, { mandate: payment() });
    expect((first.mandate.risk_data as Json)["agent-risk"]).toBeDefined();
    const again = await assess(key, { mandate: first.mandate });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
  });

  it("keeps the client's own risk_data as content", async () => {
    const { org, key } = await orgWithKey();
    const first = await assessOk(key, { mandate: payment({ risk_data: { device: "d-1" } }) });
    const again = await assessOk(key, { mandate: first.mandate });
    expect(again.assessmentId).toBe(first.assessmentId);
    expect((again.mandate.risk_data as Json).device).toBe("d-1");
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });

  it("also when the submitted risk_data was empty", async () => {
    const { org, key } = await orgWithKey();
    const first = await assessOk(key, { mandate: payment({ risk_data: {} }) });
    const again = await assessOk(key, { mandate: first.mandate });
    expect(again.assessmentId).toBe(first.assessmentId);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });

  it("a forged namespace in the request is not read as content either", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const first = await assessOk(key, { mandate });
    const forged = { ...mandate, risk_data: { "agent-risk": { decision: "approve" } } };
    const again = await assessOk(key, { mandate: forged });
    expect(again.assessmentId).toBe(first.assessmentId);
    expect(again.decision).toBe(first.decision);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });
});

describe("concurrent identical requests", () => {
  it("10 at once: all answers deep-equal, exactly one row and one ledger entry", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment() };
    const answers = await Promise.all(Array.from({ length: 10 }, () => assess(key, body)));
    for (const a of answers) expect(a.status).toBe(200);
    for (const a of answers.slice(1)) expect(a.json).toEqual(answers[0]!.json);
    expect(await countRows(org.id)).toEqual({ assessments: 1, mandates: 1, ledger: 1, events: 2 });
  });

  it("10 at once with the same idempotency key: one assessment", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment(), idempotency_key: `order-${crypto.randomUUID()}` };
    const answers = await Promise.all(Array.from({ length: 10 }, () => assess(key, body)));
    for (const a of answers) expect(a.status).toBe(200);
    for (const a of answers.slice(1)) expect(a.json).toEqual(answers[0]!.json);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
  });

  it("different mandates at once are each assessed once", async () => {
    const { org, key } = await orgWithKey();
    const bodies = Array.from({ length: 6 }, () => ({ mandate: payment() }));
    const answers = await Promise.all([...bodies, ...bodies].map((b) => assess(key, b)));
    for (const a of answers) expect(a.status).toBe(200);
    expect(new Set(answers.map((a) => a.json.assessmentId)).size).toBe(6);
    expect(await countRows(org.id)).toMatchObject({ assessments: 6, mandates: 6, ledger: 6 });
  });

  it("the same idempotency key with different content at once: one 200, the rest 400", async () => {
    const { org, key } = await orgWithKey();
    const idempotencyKey = `order-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        assess(key, { mandate: payment(), idempotency_key: idempotencyKey }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 400, 400, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) {
      expect(a.error.error).toBe("idempotency_key_reused");
    }
    expect(await countRows(org.id)).toEqual({ assessments: 1, mandates: 1, ledger: 1, events: 2 });
  });
});

describe("idempotency_key", () => {
  it("is echoed", async () => {
    const { key } = await orgWithKey();
    const idempotencyKey = `order-42/attempt:1~${crypto.randomUUID()}`;
    const body = await assessOk(key, { mandate: payment(), idempotency_key: idempotencyKey });
    expect(body.idempotency_key).toBe(idempotencyKey);
  });

  it("is echoed on a replay", async () => {
    const { key } = await orgWithKey();
    const body = { mandate: payment(), idempotency_key: `k-${crypto.randomUUID()}` };
    const a = await assessOk(key, body);
    const b = await assessOk(key, body);
    expect(b).toEqual(a);
    expect(b.idempotency_key).toBe(body.idempotency_key);
  });

  it("reused with different content: 400 idempotency_key_reused, nothing written", async () => {
    const { org, key } = await orgWithKey();
    const idempotencyKey = `order-${crypto.randomUUID()}`;
    const first = await assessOk(key, { mandate: payment(), idempotency_key: idempotencyKey });
    const reused = await assess(key, { mandate: payment(), idempotency_key: idempotencyKey });
    expect(reused.status).toBe(400);
    expect(reused.error.error).toBe("idempotency_key_reused");
    expect(JSON.stringify(reused.json)).not.toContain('"decision"');
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, mandates: 1, ledger: 1 });
    // The original is untouched.
    const read = await call(`/v1/assessments/${first.assessmentId}`, { key });
    expect(read.json).toEqual(first.outcome);
  });

  it("is scoped to the organization", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const idempotencyKey = `order-${crypto.randomUUID()}`;
    await assessOk(a.key, { mandate: payment(), idempotency_key: idempotencyKey });
    const other = await assess(b.key, { mandate: payment(), idempotency_key: idempotencyKey });
    expect(other.status).toBe(200);
  });
});
