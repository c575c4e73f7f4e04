import { SELF } from "cloudflare:test";
import {
  ApiError,
  createClient,
  VerificationError,
  verifyRiskPayload,
  verifyWebhook,
} from "@agent-risk/client";
import { verifyAuditExport } from "@agent-risk/client/audit";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { BASE } from "./support/api";
import { agentOf, createPolicy, orgWithKey, payment } from "./support/assess";
import { anchor } from "./support/ledger";
import { type Arrival, eventually, received, receiver } from "./support/webhooks";

// Issue 18: the client package against the real Worker, as an integrator runs it: assess,
// read back, verify the Risk Payload offline, receive and verify a webhook, export and verify
// the audit trail. The Worker's public origin (PUBLIC_BASE_URL) differs from the request host.

const ISSUER = "https://risk-service.test";

function clientFor(apiKey: string) {
  return createClient({ baseUrl: BASE, apiKey, fetch: (request) => SELF.fetch(request) });
}

async function keySet() {
  const res = await SELF.fetch(`${BASE}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  return res.json() as Promise<{ keys: { kid: string; x: string; kty: string; crv: string }[] }>;
}

/** A delivery as the fixture server captured it: the exact bytes and the headers. */
function delivered(arrival: Arrival) {
  const raw = Uint8Array.from(atob(arrival.raw), (c) => c.charCodeAt(0));
  const headers = new Headers({
    "webhook-id": arrival.webhook.id ?? "",
    "webhook-timestamp": arrival.webhook.timestamp ?? "",
    "webhook-signature": arrival.webhook.signature ?? "",
    "x-service-signature": arrival.signature ?? "",
    "x-service-key-id": arrival.key_id ?? "",
  });
  return { raw, headers };
}

describe("@agent-risk/client against the Worker", () => {
  it("assesses, reads the assessment back and verifies the Risk Payload offline", async () => {
    const { key } = await orgWithKey();
    const risk = clientFor(key);
    const { data, response } = await risk.POST("/v1/assess", {
      body: { mandate: payment(), audience: "merchant-1" },
    });
    expect(response.status).toBe(200);
    expect(["approve", "review", "deny"]).toContain(data.decision);

    const read = await risk.GET("/v1/assessments/{id}", {
      params: { path: { id: data.assessmentId } },
    });
    expect(read.response.status).toBe(200);
    expect(read.data.id).toBe(data.assessmentId);
    expect(read.data.outcome).toEqual(data.outcome.outcome);

    const claims = await verifyRiskPayload(data.riskPayloadJws, {
      jwks: await keySet(),
      issuer: ISSUER,
      audience: "merchant-1",
      maxAgeSeconds: 60,
    });
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: "merchant-1",
      sub: data.assessmentId,
      assessment_id: data.assessmentId,
      mandate_id: data.mandateId,
      decision: data.decision,
      risk_score: data.score,
      livemode: true,
    });
    const refused = await verifyRiskPayload(data.riskPayloadJws, {
      jwks: await keySet(),
      audience: "merchant-2",
    }).catch((e) => e);
    expect(refused).toBeInstanceOf(VerificationError);
    expect(refused.code).toBe("claim_invalid");
  });

  it("throws the service's error envelope as a typed ApiError, without retrying it", async () => {
    const { key } = await orgWithKey();
    let sent = 0;
    const risk = createClient({
      baseUrl: BASE,
      apiKey: key,
      fetch: (request) => {
        sent++;
        return SELF.fetch(request);
      },
    });
    const missing = await risk
      .GET("/v1/assessments/{id}", { params: { path: { id: crypto.randomUUID() } } })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, error: "not_found" });
    const invalid = await risk.POST("/v1/assess", { body: {} }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 400, error: "invalid_request" });
    expect(Array.isArray(invalid.details)).toBe(true);
    expect(sent).toBe(2);

    const anonymous = await clientFor("not-a-key")
      .GET("/v1/me")
      .catch((e) => e);
    expect(anonymous).toMatchObject({ status: 401, error: "unauthenticated" });
  });

  it("receives a real delivery and verifies both of its signatures", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await createPolicy(org, { max_amount: 1 });
    const hook = await receiver();
    const risk = clientFor(key);
    const endpoint = await risk.POST("/v1/webhook-endpoints", {
      body: { url: hook.url, eventTypes: ["assessment.denied"] },
    });
    expect(endpoint.response.status).toBe(201);
    const secret = (endpoint.data as { secret: string }).secret;
    const endpointId = (endpoint.data as { id: string }).id;

    const assessed = await risk.POST("/v1/assess", {
      body: { mandate: payment(), agent_id: agent.id },
    });
    expect(assessed.data.decision).toBe("deny");
    const arrival = await eventually(async () => (await received(hook.name)).arrivals[0]);
    const { raw, headers } = delivered(arrival);

    const event = await verifyWebhook(raw, headers, {
      jwks: await keySet(),
      secret,
      endpointId,
    });
    expect(event.type).toBe("assessment.denied");
    expect(event.id).toBe(headers.get("webhook-id"));
    if (event.type === "assessment.denied") {
      expect(event.data.assessment_id).toBe(assessed.data.assessmentId);
      expect(event.data.decision).toBe("deny");
    }
    // The same artefact passes the reference Standard Webhooks library too.
    const reference = new Webhook(secret).verify(new TextDecoder().decode(raw), {
      "webhook-id": headers.get("webhook-id") ?? "",
      "webhook-timestamp": headers.get("webhook-timestamp") ?? "",
      "webhook-signature": headers.get("webhook-signature") ?? "",
    });
    expect(reference).toEqual(event);

    const otherEndpoint = await verifyWebhook(raw, headers, {
      jwks: await keySet(),
      endpointId: crypto.randomUUID(),
    }).catch((e) => e);
    expect(otherEndpoint).toMatchObject({ code: "claim_invalid" });
  });

  it("exports the audit trail and verifies it offline against the published keys", async () => {
    const { org, key } = await orgWithKey();
    const risk = clientFor(key);
    await risk.POST("/v1/assess", { body: { mandate: payment() } });
    await anchor(org.id);
    await risk.POST("/v1/assess", { body: { mandate: payment() } });
    await anchor(org.id);

    const exported = await risk.GET("/v1/audit/export", { parseAs: "stream" });
    expect(exported.response.status).toBe(200);
    const { report, truncated, header } = await verifyAuditExport(
      exported.data as ReadableStream<Uint8Array>,
      { jwks: await keySet() },
    );
    expect(truncated).toBe(false);
    expect(header.org_id).toBe(org.id);
    expect(report.ok).toBe(true);
    expect(report.first_break).toBeNull();
    expect(report.checked).toBeGreaterThanOrEqual(3);
    expect(report.checkpoints.checked).toBe(2);
    expect(report.checkpoints.latest?.tree_size).toBe(report.checked);
  });

  it("finds a changed byte in an exported audit trail", async () => {
    const { org, key } = await orgWithKey();
    const risk = clientFor(key);
    await risk.POST("/v1/assess", { body: { mandate: payment() } });
    await anchor(org.id);
    const exported = await risk.GET("/v1/audit/export", { parseAs: "text" });
    const text = exported.data as string;
    const entry = text.split("\n").findIndex((line) => line.includes('"type":"entry"'));
    const lines = text.split("\n");
    lines[entry] = (lines[entry] ?? "").replace(/"digest":"sha256:./, '"digest":"sha256:X');
    const { report } = await verifyAuditExport(lines.join("\n"), { jwks: await keySet() });
    expect(report.ok).toBe(false);
    expect(report.first_break).toMatchObject({ sequence: entry, reason: "hash_mismatch" });
  });
});
