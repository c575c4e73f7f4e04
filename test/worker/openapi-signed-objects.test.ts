import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/schemas/vocabulary";
import { closedDocument, schemaErrors } from "../support/openapi-contract";
import { call, callRaw } from "./support/api";
import {
  agentOf,
  assess,
  assessOk,
  createPolicy,
  type Json,
  mandateHash,
  orgWithKey,
  payment,
} from "./support/assess";
import { seedBilling } from "./support/billing";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { createEndpoint, eventually, received, receiver } from "./support/webhooks";

// What the service signs rather than answers, against the components the document publishes
// for it (docs/api.md, "The OpenAPI document"): the claims of real Risk Payloads and the bodies
// of real webhook deliveries, validated with every object closed, so a claim or a member the
// schema does not name fails as surely as a wrong type.

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

let document: Json;

beforeAll(async () => {
  document = closedDocument((await callRaw("/openapi.json")).json);
});

function claimErrors(jws: string): string[] {
  return schemaErrors(document, ref("RiskPayloadClaims"), decodeJwt(jws));
}

/** An assessment of an unknown agent: `review`, opening a review item. */
async function reviewed(key: string) {
  const body = await assessOk(key, { mandate: payment() });
  expect(body.decision).toBe("review");
  const list = await call("/v1/reviews?limit=100", { key });
  const item = list.json.data.find((r) => r.assessment_id === body.assessmentId);
  return { body, reviewId: item?.id as string };
}

describe("RiskPayloadClaims is what a Risk Payload carries", () => {
  it("a fresh live assessment naming its audience", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment(), audience: "https://psp.example" });
    expect(decodeJwt(body.riskPayloadJws)).toMatchObject({
      livemode: true,
      aud: "https://psp.example",
      sub: body.assessmentId,
    });
    expect(claimErrors(body.riskPayloadJws)).toEqual([]);
  });

  it("a test-mode assessment", async () => {
    const { key } = await orgWithKey("test");
    const body = await assessOk(key, { mandate: payment() });
    expect(decodeJwt(body.riskPayloadJws)).toMatchObject({ livemode: false });
    expect(decodeJwt(body.riskPayloadJws)).not.toHaveProperty("aud");
    expect(claimErrors(body.riskPayloadJws)).toEqual([]);
  });

  it("a review's resolution, with its resolution claim", async () => {
    const { org, key } = await orgWithKey();
    const { reviewId } = await reviewed(key);
    const res = await call(`/v1/reviews/${reviewId}/resolve`, {
      method: "POST",
      token: org.token,
      body: { decision: "approve" },
    });
    expect(res.status).toBe(200);
    const jws = res.json.risk_payload!.jws as string;
    expect(decodeJwt(jws)).toMatchObject({
      decision: "approve",
      resolution: { review_id: reviewId, resolved_by: "person", original_decision: "review" },
    });
    expect(claimErrors(jws)).toEqual([]);
  });

  it("the payload forwarded in the mandate, bound to it by mandate_hash", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment({ risk_data: { device: "d-1" } }) });
    const forwarded = (body.mandate.risk_data as Json)["agent-risk"].jws as string;
    expect(forwarded).toBe(body.riskPayloadJws);
    expect(decodeJwt(forwarded).mandate_hash).toBe(await mandateHash(body.mandate));
    expect(claimErrors(forwarded)).toEqual([]);
  });

  it("a verified AP2 credential's payload, naming the credential", async () => {
    const { key, body: request } = await provenAgentOrg();
    const body = await assessOk(key, await request());
    expect(decodeJwt(body.riskPayloadJws)).toMatchObject({
      mandate_verified: true,
      credential_reference: expect.any(String),
    });
    expect(claimErrors(body.riskPayloadJws)).toEqual([]);
  });

  it("refuses a claim it does not name, so the checks above can fail", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    const claims = { ...decodeJwt(body.riskPayloadJws), org_id: "internal" };
    expect(schemaErrors(document, ref("RiskPayloadClaims"), claims)).toEqual([
      "#/org_id: False boolean schema.",
    ]);
  });
});

describe("WebhookEvent is what a delivery carries", () => {
  it("names every event type of the catalog", () => {
    const members = document.components.schemas.WebhookEvent.anyOf as Json[];
    const types = members.flatMap((member) => {
      const type = document.components.schemas[member.$ref.split("/").pop()].properties.type;
      return type.enum ?? [type.const];
    });
    expect(types.sort()).toEqual([...EVENT_TYPES].sort());
  });

  /** Waits until the receiver holds a delivery of each type; answers the raw bodies parsed. */
  async function bodiesOf(name: string, types: string[]): Promise<Json[]> {
    const log = await eventually(
      async () => {
        const { arrivals } = await received(name);
        const seen = new Set(arrivals.map((a) => a.type));
        return types.every((t) => seen.has(t)) ? arrivals : undefined;
      },
      30_000,
      `deliveries of ${types.join(", ")}`,
    );
    // The exact bytes received, base64 in the receiver's log.
    const bytes = (raw: string) => Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
    return log.map((arrival) => JSON.parse(new TextDecoder().decode(bytes(arrival.raw))) as Json);
  }

  function expectValid(bodies: Json[]) {
    for (const body of bodies) {
      expect(schemaErrors(document, ref("WebhookEvent"), body), JSON.stringify(body)).toEqual([]);
    }
  }

  it("assessment, review, agent and integrity events, as delivered", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    await createEndpoint(key, { url: hook.url });

    const { reviewId } = await reviewed(key);
    const resolved = await call(`/v1/reviews/${reviewId}/resolve`, {
      method: "POST",
      key,
      body: { decision: "deny", note: "not ours" },
    });
    expect(resolved.status).toBe(200);
    const denied = await agentOf(org);
    await createPolicy(org, { max_amount: 1 });
    expect((await assessOk(key, { mandate: payment(), agent_id: denied.id })).decision).toBe(
      "deny",
    );
    const agent = await agentOf(org);
    for (const status of ["suspended", "revoked"] as const) {
      const res = await call(`/v1/agents/${agent.id}`, {
        method: "PATCH",
        key,
        body: { status },
      });
      expect(res.status).toBe(200);
    }
    // An insider's edit, found by verification: the alert is delivered like any event.
    await ownerSql`update audit_entries set type = 'forged' where org_id = ${org.id} and sequence = 1`;
    const verify = await call("/v1/audit/verify", { token: org.token });
    expect(verify.json.alert).toMatchObject({ type: "audit.integrity_alert" });

    const bodies = await bodiesOf(hook.name, [
      "assessment.completed",
      "assessment.flagged",
      "assessment.denied",
      "assessment.resolved",
      "agent.trust_changed",
      "agent.suspended",
      "agent.revoked",
      "audit.integrity_alert",
    ]);
    expectValid(bodies);
    const resolution = bodies.find((b) => b.type === "assessment.resolved");
    expect(resolution?.data).toMatchObject({ review_id: reviewId, decision: "deny" });
    expect(claimErrors(resolution?.data.risk_payload.jws)).toEqual([]);
  });

  it("an assessment event of an org consuming the network, carrying its counts, as delivered", async () => {
    const { org, key } = await orgWithKey();
    const joined = await call("/v1/network-settings", {
      method: "POST",
      token: org.token,
      headers: { "x-mode": "live" },
      body: { contribute: true, consume: true },
    });
    expect(joined.status).toBe(200);
    const hook = await receiver();
    await createEndpoint(key, { url: hook.url, eventTypes: ["assessment.completed"] });
    await assessOk(key, { mandate: payment() });

    const bodies = await bodiesOf(hook.name, ["assessment.completed"]);
    expect(bodies[0]?.data.network).toMatchObject({ window_days: 30, k: 3 });
    expectValid(bodies);
  });

  it("the spend guard's events, as delivered", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["spend.review_required", "spend.denied", "spend.confirmed"],
    });
    // Starter with its included assessments used: 2 cents each, a cap of 10 allows five.
    await seedBilling(org.id, "starter", 10_000);
    const cap = await call("/v1/billing/spending_cap", {
      method: "POST",
      key,
      body: { amount: 10 },
    });
    expect(cap.status).toBe(200);
    for (let i = 0; i < 5; i++) await assessOk(key, { mandate: payment() });
    expect((await assess(key, { mandate: payment() })).status).toBe(402);
    const confirmed = await call("/v1/billing/spend_confirmations", {
      method: "POST",
      token: org.token,
      body: { spending_cap: 20 },
    });
    expect(confirmed.status).toBe(201);

    const bodies = await bodiesOf(hook.name, [
      "spend.review_required",
      "spend.denied",
      "spend.confirmed",
    ]);
    expectValid(bodies);
  });

  it("refuses a member it does not name, so the checks above can fail", () => {
    const body = {
      id: "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b",
      type: "key.rotation",
      created: 1_795_320_000,
      livemode: true,
      data: { kid: "k2", previous_kid: "k1", rotated_at: "2026-11-24T10:00:00+00:00", org_id: "x" },
    };
    expect(schemaErrors(document, ref("WebhookEvent"), body)).not.toEqual([]);
    const { org_id: _, ...data } = body.data;
    expect(schemaErrors(document, ref("WebhookEvent"), { ...body, data })).toEqual([]);
  });
});
