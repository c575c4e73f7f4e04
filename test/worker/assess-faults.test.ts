import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "./support/api";
import {
  agentOf,
  assessOk,
  assessWith,
  countRows,
  expectAssessResponse,
  type Json,
  orgWithKey,
  payment,
  reasonKeys,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { errorBody } from "./support/errors";

// Spec, States: "An internal fault yields review, never approve"; rules 4 and 5 of POST
// /v1/assess (500 never approve, 503 when the database or signing key is unavailable);
// docs/assess.md, Faults: a scoring component that throws degrades the assessment.

/**
 * An org whose agent, proven by a verified credential (a claim earns no trust, docs/assess.md),
 * gets a plain payment approved when nothing is broken.
 */
async function approvable() {
  const { org, key, agentId, body } = await provenAgentOrg();
  const baseline = await assessOk(key, await body());
  expect(baseline.decision).toBe("approve");
  return { org, key, agentId, body };
}

const owned: Record<string, string[]> = {
  kya: ["agent_identity"],
  policy: ["policy_adherence", "mandate_validity"],
  risk: ["behavioral_risk", "recipient_risk"],
};

describe("a scoring component that throws", () => {
  it.each(["kya", "policy", "risk"])(
    "TEST_FAULTS=%s: 200, at least review, a system signal, its confidences 0",
    async (component) => {
      const { org, key, body } = await approvable();
      const res = await assessWith({ TEST_FAULTS: component }, key, await body());
      expect(res.status).toBe(200);
      expectAssessResponse(res.json);
      expect(res.json.decision).not.toBe("approve");
      expect(res.json.outcome.signals).toContainEqual({
        category: "system",
        type: `${component}_fault`,
        severity: "high",
      });
      for (const c of owned[component]!) expect(res.json.outcome.confidences[c], c).toBe(0);
      // The error text is for logs, never for the outcome.
      expect(res.text).not.toContain("injected fault");
      // It is a complete, stored, signed assessment.
      const read = await call(`/v1/assessments/${res.json.assessmentId}`, { key });
      expect(read.json).toEqual(res.json.outcome);
      expect(await countRows(org.id)).toMatchObject({ assessments: 2, ledger: 2 });
    },
  );

  it("all three at once: still an answer, never approve, three system signals", async () => {
    const { key, body } = await approvable();
    const res = await assessWith({ TEST_FAULTS: "kya,policy,risk" }, key, await body());
    expect(res.status).toBe(200);
    expect(res.json.decision).not.toBe("approve");
    const system = res.json.outcome.signals
      .filter((s: Json) => s.category === "system")
      .map((s: Json) => s.type)
      .sort();
    expect(system).toEqual(["kya_fault", "policy_fault", "risk_fault"]);
    for (const v of Object.values(res.json.outcome.confidences)) expect(v).toBe(0);
  });

  it("a revoked agent is denied even when kya faulted", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const patched = await call(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "revoked" },
    });
    expect(patched.status).toBe(200);
    const res = await assessWith({ TEST_FAULTS: "kya" }, key, {
      mandate: payment(),
      agent_id: agent.id,
    });
    expect(res.status).toBe(200);
    expect(res.json.decision).toBe("deny");
  });

  it("another stage's rejection still denies", async () => {
    const { key } = await orgWithKey();
    const { default: expired } = await import("../fixtures/ap2/open_payment_mandate.json");
    const res = await assessWith({ TEST_FAULTS: "risk" }, key, { mandate: expired });
    expect(res.status).toBe(200);
    expect(res.json.decision).toBe("deny");
    expect(reasonKeys(res.json.outcome)).toContain("mandate_expired");
  });

  it.each(["production", "development", undefined])(
    "TEST_FAULTS is ignored when ENVIRONMENT is %s",
    async (environment) => {
      const { key, body } = await approvable();
      const res = await assessWith(
        { ENVIRONMENT: environment, TEST_FAULTS: "kya,policy,risk,persist" },
        key,
        await body(),
      );
      expect(res.status).toBe(200);
      expect(res.json.decision).toBe("approve");
      expect(res.json.outcome.signals.filter((s: Json) => s.category === "system")).toEqual([]);
    },
  );
});

describe("a fault outside the scoring components", () => {
  it("TEST_FAULTS=persist: 500 internal_error with no decision in the body", async () => {
    const { org, key, body } = await approvable();
    const request = await body();
    const res = await assessWith({ TEST_FAULTS: "persist" }, key, request);
    expect(res.status).toBe(500);
    expect(res.json).toEqual(errorBody("internal_error"));
    for (const word of ["decision", "approve", "review", "deny", "riskPayloadJws", "jws"]) {
      expect(res.text).not.toContain(word);
    }
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    // Nothing the caller could read as an answer was stored.
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });

  it("the retry of a request that failed in persist completes it once", async () => {
    const { org, key, body } = await approvable();
    const request = await body();
    expect((await assessWith({ TEST_FAULTS: "persist" }, key, request)).status).toBe(500);
    const retry = await assessOk(key, request);
    expectAssessResponse(retry);
    const again = await assessOk(key, request);
    expect(again).toEqual(retry);
    expect(await countRows(org.id)).toMatchObject({ assessments: 2, mandates: 2, ledger: 2 });
  });

  it("SIGNING_KEY missing: 503 signing_key_unavailable, nothing written", async () => {
    const { org, key, body } = await approvable();
    const before = await countRows(org.id);
    const res = await assessWith({ SIGNING_KEY: undefined }, key, await body());
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("signing_key_unavailable"));
    expect(await countRows(org.id)).toEqual(before);
  });

  it("SIGNING_KEY unusable: 503 signing_key_unavailable", async () => {
    const { org, key, body } = await approvable();
    const before = await countRows(org.id);
    for (const bad of ['{"kty":"OKP"}', "not json", '{"kty":"OKP","crv":"Ed25519","x":"AA"}']) {
      const res = await assessWith({ SIGNING_KEY: bad }, key, await body());
      expect(res.status, bad).toBe(503);
      expect(res.json).toEqual(errorBody("signing_key_unavailable"));
    }
    expect(await countRows(org.id)).toEqual(before);
  });

  it("an unreachable database: 503 database_unavailable", async () => {
    const { key, body } = await approvable();
    const unreachable = (env.DATABASE_URL as string).replace(/@[^/]+\//, "@127.0.0.1:9/");
    const res = await assessWith({ DATABASE_URL: unreachable }, key, await body());
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("database_unavailable"));
  });

  it("no database configured: 503", async () => {
    const { key, body } = await approvable();
    const res = await assessWith({ DATABASE_URL: undefined }, key, await body());
    expect(res.status).toBe(503);
    expect(res.json.error).toBe("database_unavailable");
  });

  it("the read routes answer 503 without a database too", async () => {
    const { key } = await orgWithKey();
    const unreachable = (env.DATABASE_URL as string).replace(/@[^/]+\//, "@127.0.0.1:9/");
    const { fetchWith } = await import("./support/assess");
    for (const path of [
      "/v1/assessments",
      `/v1/assessments/${crypto.randomUUID()}`,
      "/v1/mandates",
    ]) {
      const res = await fetchWith({ DATABASE_URL: unreachable }, path, {
        headers: { "x-api-key": key },
      });
      expect(res.status, path).toBe(503);
    }
  });
});
