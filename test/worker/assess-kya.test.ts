import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import {
  agentOf,
  assess,
  assessOk,
  assessRaw,
  createPolicy,
  decodeJwsPart,
  examples,
  expectConsistentBand,
  holderJwk,
  type Json,
  keyPair,
  openPayment,
  orgWithKey,
  payment,
  reasonKeys,
  signalTypes,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { merchantCard, newAgent, registerKey, signCard } from "./support/identity";

// docs/assess.md "Know your agent" and risk-model.md: the acting agent is identified by the
// open mandate's cnf.jwk thumbprint, then a2a.agent_card_ref, then agent_id.

async function getAgent(org: TestOrg, id: string) {
  const res = await call(`/v1/agents/${id}`, { token: org.token });
  expect(res.status).toBe(200);
  return res.json;
}

async function setStatus(org: TestOrg, id: string, status: "suspended" | "revoked" | "active") {
  const res = await call(`/v1/agents/${id}`, {
    method: "PATCH",
    token: org.token,
    body: { status },
  });
  expect(res.status).toBe(200);
}

/** An agent with a registered P-256 key (what an AP2 open mandate's cnf.jwk holds). */
async function agentWithKey(org: TestOrg) {
  const agent = await newAgent(org);
  const pair = await registerKey(org, agent.id, "ES256");
  return { agent, pair, jwk: holderJwk(pair) };
}

/** An agent whose A2A Agent Card is verified and bound; returns the card's digest. */
async function agentWithCard(org: TestOrg, url?: string) {
  const agent = await newAgent(org);
  const pair = await registerKey(org, agent.id);
  const card = await signCard({ ...merchantCard(), ...(url ? { url } : {}) }, pair);
  const verified = await call("/v1/agents/verify-card", {
    method: "POST",
    token: org.token,
    body: { agent_id: agent.id, card },
  });
  expect(verified.status).toBe(200);
  expect(verified.json.status).toBe("verified");
  const status = await call(`/v1/agents/${agent.id}/card-status`, { token: org.token });
  expect(status.status).toBe(200);
  expect(status.json.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  return { agent, digest: status.json.digest as string, url: status.json.url as string };
}

describe("by the open mandate's holder key", () => {
  it("a registered key identifies its agent", async () => {
    const { org, key } = await orgWithKey();
    const { agent, jwk } = await agentWithKey(org);
    const body = await assessOk(key, { mandate: openPayment(jwk) });
    expect(body.outcome.agent).toEqual({ id: agent.id, trust_score: 45, risk_tier: "high" });
    expect(signalTypes(body.outcome)).not.toContain("agent_unknown");
    expect(decodeJwsPart(body.riskPayloadJws.split(".")[1]).agent_id).toBe(agent.id);
    // Decoded JSON proves no possession of the key: a claim, an explicit id's assurance
    // (docs/assess.md, "What each kind of evidence earns").
    expect(body.outcome.confidences.agent_identity).toBe(0.6);
  });

  it("also for an open checkout mandate", async () => {
    const { org, key } = await orgWithKey();
    const { agent, jwk } = await agentWithKey(org);
    const mandate = examples.open_checkout();
    mandate.cnf = { jwk };
    mandate.iat = Math.floor(Date.now() / 1000);
    mandate.exp = mandate.iat + 3600;
    const body = await assessOk(key, { mandate });
    expect(body.outcome.agent?.id).toBe(agent.id);
  });

  it("a key nobody registered identifies nobody, and is never approved", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: openPayment(holderJwk(await keyPair("ES256"))) });
    expect(body.outcome.agent).toBeNull();
    expect(signalTypes(body.outcome)).toContain("agent_unknown");
    expect(body.decision).not.toBe("approve");
  });

  it("another organization's key identifies nobody here", async () => {
    const other = await orgWithKey();
    const { jwk } = await agentWithKey(other.org);
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: openPayment(jwk) });
    expect(body.outcome.agent).toBeNull();
    expect(body.decision).not.toBe("approve");
  });

  it("a revoked agent's key: deny, agent_revoked", async () => {
    const { org, key } = await orgWithKey();
    const { agent, jwk } = await agentWithKey(org);
    await setStatus(org, agent.id, "revoked");
    const body = await assessOk(key, { mandate: openPayment(jwk) });
    expect(body.decision).toBe("deny");
    expect(body.outcome.agent?.id).toBe(agent.id);
    expect(reasonKeys(body.outcome)).toContain("agent_revoked");
    expect(
      body.outcome.rejection_reasons.find((r: Json) => r.key === "agent_revoked")!.category,
    ).toBe("identity");
    expect(body.outcome.outcome.reason).toMatch(/^Denied: /);
    expectConsistentBand(body.outcome);
  });

  it("a revoked key: at least review, with the key_revoked signal, still naming its agent", async () => {
    const { org, key } = await orgWithKey();
    const { agent, pair, jwk } = await agentWithKey(org);
    const revoked = await call(`/v1/agents/${agent.id}/keys/${pair.kid}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(revoked.status).toBe(200);
    const body = await assessOk(key, { mandate: openPayment(jwk) });
    expect(body.decision).not.toBe("approve");
    expect(body.outcome.agent?.id).toBe(agent.id);
    expect(body.outcome.signals).toContainEqual({
      category: "identity",
      type: "key_revoked",
      severity: "high",
    });
  });
});

describe("by the A2A agent card reference", () => {
  it("a verified card's digest identifies its agent", async () => {
    const { org, key } = await orgWithKey();
    const { agent, digest } = await agentWithCard(org);
    const body = await assessOk(key, { mandate: payment(), a2a: { agent_card_ref: digest } });
    expect(body.outcome.agent?.id).toBe(agent.id);
    // base 30 + verified card 30 + an active key 15 (identity.md).
    expect(body.outcome.agent).toEqual({ id: agent.id, trust_score: 75, risk_tier: "low" });
    expect(signalTypes(body.outcome)).not.toContain("card_unknown");
  });

  it("the card's service URL identifies its agent too", async () => {
    const { org, key } = await orgWithKey();
    const url = `https://merchant-${crypto.randomUUID()}.example.com/a2a`;
    const { agent } = await agentWithCard(org, url);
    const body = await assessOk(key, { mandate: payment(), a2a: { agent_card_ref: url } });
    expect(body.outcome.agent?.id).toBe(agent.id);
  });

  it("an unknown card ref is a card_unknown signal and never approved", async () => {
    const { key } = await orgWithKey();
    const ref = `sha256:${"0".repeat(64)}`;
    const body = await assessOk(key, { mandate: payment(), a2a: { agent_card_ref: ref } });
    expect(body.outcome.agent).toBeNull();
    expect(body.outcome.signals).toContainEqual(
      expect.objectContaining({ category: "identity", type: "card_unknown" }),
    );
    expect(body.decision).not.toBe("approve");
  });

  it("another organization's card is unknown here", async () => {
    const other = await orgWithKey();
    const { digest } = await agentWithCard(other.org);
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment(), a2a: { agent_card_ref: digest } });
    expect(body.outcome.agent).toBeNull();
    expect(signalTypes(body.outcome)).toContain("card_unknown");
  });

  it("a key and a card naming different agents: identity_conflict, at least review", async () => {
    const { org, key } = await orgWithKey();
    const { jwk } = await agentWithKey(org);
    const { digest } = await agentWithCard(org);
    const body = await assessOk(key, {
      mandate: openPayment(jwk),
      a2a: { agent_card_ref: digest },
    });
    expect(signalTypes(body.outcome)).toContain("identity_conflict");
    expect(body.decision).not.toBe("approve");
  });
});

describe("by an explicit agent_id", () => {
  it("identifies the agent", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const body = await assessOk(key, { mandate: payment(), agent_id: agent.id });
    expect(body.outcome.agent).toEqual({ id: agent.id, trust_score: 30, risk_tier: "high" });
    // The caller's word is weaker evidence than a key (risk-model.md, Confidences).
    expect(body.outcome.confidences.agent_identity).toBeLessThanOrEqual(0.6);
  });

  it("an agent that does not exist is never approved", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment(), agent_id: crypto.randomUUID() });
    expect(res.status).toBe(200);
    expect(res.json.decision).not.toBe("approve");
    expect(res.json.outcome.agent).toBeNull();
  });

  it("another organization's agent is unknown here: nothing of it leaks", async () => {
    const other = await orgWithKey();
    const foreign = await agentOf(other.org);
    const { key } = await orgWithKey();
    const res = await assess(key, { mandate: payment(), agent_id: foreign.id });
    expect(res.status).toBe(200);
    expect(res.json.outcome.agent).toBeNull();
    expect(res.json.decision).not.toBe("approve");
    // The other org's agent counted nothing.
    expect((await getAgent(other.org, foreign.id)).evidence).toMatchObject({
      approvals: 0,
      reviews: 0,
      denials: 0,
    });
  });

  it("a key and an agent_id naming different agents: identity_conflict", async () => {
    const { org, key } = await orgWithKey();
    const { jwk } = await agentWithKey(org);
    const other = await agentOf(org);
    const body = await assessOk(key, { mandate: openPayment(jwk), agent_id: other.id });
    expect(signalTypes(body.outcome)).toContain("identity_conflict");
    expect(body.decision).not.toBe("approve");
  });

  it("a suspended agent: at least review, with agent_suspended", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await setStatus(org, agent.id, "suspended");
    const body = await assessOk(key, { mandate: payment(), agent_id: agent.id });
    expect(body.decision).not.toBe("approve");
    expect(body.outcome.signals).toContainEqual({
      category: "identity",
      type: "agent_suspended",
      severity: "high",
    });
  });

  it("a revoked agent: deny", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await setStatus(org, agent.id, "revoked");
    const body = await assessOk(key, { mandate: payment(), agent_id: agent.id });
    expect(body.decision).toBe("deny");
    expect(reasonKeys(body.outcome)).toContain("agent_revoked");
  });
});

describe("without any evidence", () => {
  it("an unknown agent is never approved", async () => {
    const { key } = await orgWithKey();
    for (const mandate of [payment(), examples.checkout(), { ...payment(), risk_data: { x: 1 } }]) {
      const body = await assessOk(key, { mandate });
      expect(body.outcome.agent).toBeNull();
      expect(body.decision).not.toBe("approve");
      expect(body.outcome.signals).toContainEqual({
        category: "identity",
        type: "agent_unknown",
        severity: "high",
      });
      expect(body.outcome.confidences.agent_identity).toBe(0);
    }
  });

  it.each(["message_send", "voice_call", "custom"] as const)("nor for kind %s", async (kind) => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { kind, mandate: { to: "+15551234567" } });
    expect(body.decision).not.toBe("approve");
  });
});

describe("the agent's evidence counters: only proof of possession moves them", () => {
  it("an approval adds to approvals, and the outcome shows the agent as it stood", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    const before = await getAgent(org, agentId);
    const body = await assessOk(key, await proven());
    expect(body.decision).toBe("approve");
    const after = await getAgent(org, agentId);
    expect(after.evidence.approvals).toBe(before.evidence.approvals + 1);
    expect(after.evidence.denials).toBe(before.evidence.denials);
    expect(after.trust_score).toBe(before.trust_score + 1);
    expect(body.outcome.agent!.trust_score).toBe(before.trust_score);
  });

  it("a denial adds to denials", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "no", action: "deny", when: { attr: "mandate.verified", op: "eq", value: true } },
      ],
    });
    const before = await getAgent(org, agentId);
    const body = await assessOk(key, await proven());
    expect(body.decision).toBe("deny");
    const after = await getAgent(org, agentId);
    expect(after.evidence.denials).toBe(before.evidence.denials + 1);
    expect(after.evidence.approvals).toBe(before.evidence.approvals);
    expect(after.trust_score).toBe(before.trust_score - 5);
  });

  it("a review adds to reviews", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    await setStatus(org, agentId, "suspended");
    const before = await getAgent(org, agentId);
    const body = await assessOk(key, await proven());
    expect(body.decision).toBe("review");
    const after = await getAgent(org, agentId);
    expect(after.evidence.reviews).toBe(before.evidence.reviews + 1);
  });

  it("a replay counts nothing twice", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    const body = await proven();
    await assessOk(key, body);
    await assessOk(key, body);
    await Promise.all(Array.from({ length: 5 }, () => assess(key, body)));
    expect((await getAgent(org, agentId)).evidence.approvals).toBe(1);
  });

  it("simultaneous distinct assessments each count once", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    const bodies = await Promise.all(Array.from({ length: 5 }, () => proven()));
    const answers = await Promise.all(bodies.map((b) => assessOk(key, b)));
    const approvals = answers.filter((a) => a.decision === "approve").length;
    const reviews = answers.filter((a) => a.decision === "review").length;
    expect(approvals + reviews).toBe(5);
    const after = await getAgent(org, agentId);
    expect(after.evidence.approvals).toBe(approvals);
    expect(after.evidence.reviews).toBe(reviews);
  });

  it("each distinct approval counts, and the trust history records it", async () => {
    const { org, key, agentId, body: proven } = await provenAgentOrg();
    const before = await getAgent(org, agentId);
    for (let i = 0; i < 3; i++) {
      const body = await assessOk(key, await proven());
      expect(body.decision).toBe("approve");
    }
    const after = await getAgent(org, agentId);
    expect(after.evidence.approvals).toBe(3);
    expect(after.trust_score).toBe(before.trust_score + 3);
    const history = await call(`/v1/agents/${agentId}/trust-history`, { token: org.token });
    expect(history.json.data.map((e: Json) => e.reason)).toContain("assessment");
  });

  // Decoded JSON names the agent (velocity, the stored agent_id) but is a claim: it earns an
  // unknown agent's 20 trust points, whatever the agent's trust, and moves none of it.
  it.each(["agent_id", "cnf.jwk"] as const)(
    "a high-trust agent named by %s scores as an unknown one and its trust does not move",
    async (by) => {
      const { org, key } = await orgWithKey();
      const trusted = await agentWithKey(org);
      const fresh = await agentWithKey(org);
      await ownerSql`update agents set approvals = 25 where id = ${trusted.agent.id}`;
      const before = await getAgent(org, trusted.agent.id);
      expect(before.trust_score).toBe(70);
      const named = (who: { agent: Json; jwk: Json }) =>
        by === "agent_id"
          ? { mandate: payment(), agent_id: who.agent.id }
          : { mandate: openPayment(who.jwk) };
      const claimed = await assessOk(key, named(trusted));
      const baseline = await assessOk(key, named(fresh));
      expect(claimed.outcome.agent).toEqual({
        id: trusted.agent.id,
        trust_score: 70,
        risk_tier: "medium",
      });
      expect(claimed.outcome.confidences.agent_identity).toBe(0.6);
      // Same signals, same 20 trust points: the trusted agent's 70 is not borrowed.
      expect(signalTypes(claimed.outcome)).toEqual(signalTypes(baseline.outcome));
      expect(claimed.outcome.outcome.risk_score).toBe(baseline.outcome.outcome.risk_score);
      expect(claimed.decision).toBe(baseline.decision);
      const [row] =
        await ownerSql`select agent_id from assessments where id = ${claimed.assessmentId}`;
      expect(row?.agent_id).toBe(trusted.agent.id);
      const after = await getAgent(org, trusted.agent.id);
      expect(after.trust_score).toBe(70);
      expect(after.evidence).toEqual(before.evidence);
      const history = await call(`/v1/agents/${trusted.agent.id}/trust-history`, {
        token: org.token,
      });
      expect(history.json.data.map((e: Json) => e.reason)).not.toContain("assessment");
      const [changed] =
        await ownerSql`select count(*)::int as n from events where type = 'agent.trust_changed' and data->>'reason' = 'assessment' and data->>'agent_id' = ${trusted.agent.id}`;
      expect(changed?.n).toBe(0);
    },
  );
});

describe("an agent_id that is not an agent id", () => {
  it.each(["not-a-uuid", "", 42, null, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e' or 1=1 --"])(
    "%j is a 400, never a 5xx",
    async (agentId) => {
      const { key } = await orgWithKey();
      const res = await assessRaw(key, { mandate: payment(), agent_id: agentId });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    },
  );
});
