import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { publicBaseUrl } from "../../src/env";
import { ApiError, errorMessages } from "../../src/errors";
import { newOrg } from "./support/api";
import {
  assessWith,
  countRows,
  decodeJwsPart,
  fetchWith,
  type Json,
  orgWithKey,
  payment,
} from "./support/assess";
import { anchor, appendMany } from "./support/ledger";

// docs/deploy.md, PUBLIC_BASE_URL: the service names itself (a payload's `iss`, the trust
// list's `issuer`, every absolute URL it publishes) from configuration, never from the request.

const CONFIGURED = env.PUBLIC_BASE_URL as string;
const FORGED = "https://attacker.example";
const KEY_SET = `${CONFIGURED}/.well-known/jwks.json`;

/** A request whose URL, Host and X-Forwarded-Host all name the attacker's host. */
async function forged(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const headers: Record<string, string> = {
    host: new URL(FORGED).host,
    "x-forwarded-host": new URL(FORGED).host,
    "x-forwarded-proto": "https",
    ...init.headers,
  };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await SELF.fetch(`${FORGED}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Json };
}

describe("a forged Host never becomes the service's identity", () => {
  it("the configured base differs from the host the tests call (so the tests below can tell)", () => {
    expect(CONFIGURED).toMatch(/^https:\/\/[^/]+$/);
    expect(CONFIGURED).not.toBe("https://risk.test");
  });

  it("POST /v1/assess: verify_url, the forwarded mandate's verify_url and the payload's iss", async () => {
    const { key } = await orgWithKey();
    const res = await forged("/v1/assess", {
      method: "POST",
      headers: { "x-api-key": key },
      body: { mandate: payment() },
    });
    expect(res.status).toBe(200);
    expect(res.json.outcome.risk_payload.verify_url).toBe(KEY_SET);
    expect(res.json.mandate.risk_data["agent-risk"].verify_url).toBe(KEY_SET);
    expect(decodeJwsPart(res.json.riskPayloadJws.split(".")[1]).iss).toBe(CONFIGURED);
    expect(res.text).not.toContain("attacker");
    // As stored: the read answers the same.
    const read = await forged(`/v1/assessments/${res.json.assessmentId}`, {
      headers: { "x-api-key": key },
    });
    expect(read.json.risk_payload.verify_url).toBe(KEY_SET);
  });

  it("GET /v1/trust-list: issuer, in the list and in its signed payload", async () => {
    const res = await forged("/v1/trust-list");
    expect(res.status).toBe(200);
    expect(res.json.issuer).toBe(CONFIGURED);
    expect(decodeJwsPart(res.json.jws.split(".")[1]).issuer).toBe(CONFIGURED);
    expect(res.text).not.toContain("attacker");
  });

  it("GET /v1/transparency/logs/{logId}: key_set", async () => {
    const org = await newOrg();
    await appendMany(org.id, 2);
    const checkpoint = await anchor(org.id);
    const res = await forged(`/v1/transparency/logs/${checkpoint?.log_id}`);
    expect(res.status).toBe(200);
    expect(res.json.key_set).toBe(KEY_SET);
    expect(res.text).not.toContain("attacker");
  });
});

/** Without `doc_url`: the address it is built from is the setting that is missing. */
const misconfigured = {
  error: "service_misconfigured",
  message: errorMessages.service_misconfigured,
  details: { setting: "PUBLIC_BASE_URL" },
};

describe("PUBLIC_BASE_URL missing: 503 service_misconfigured, never a URL from the request", () => {
  it("POST /v1/assess: nothing scored, signed or stored", async () => {
    const { org, key } = await orgWithKey();
    const res = await assessWith({ PUBLIC_BASE_URL: undefined }, key, { mandate: payment() });
    expect(res.status).toBe(503);
    expect(res.json).toEqual(misconfigured);
    expect(await countRows(org.id)).toEqual({ assessments: 0, mandates: 0, ledger: 0, events: 0 });
  });

  it("POST /v1/assess: a replay still answers the payload it stored (it signs nothing new)", async () => {
    const { key } = await orgWithKey();
    const body = { mandate: payment() };
    const first = await assessWith({}, key, body);
    const replay = await assessWith({ PUBLIC_BASE_URL: undefined }, key, body);
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
  });

  it("GET /v1/trust-list", async () => {
    const res = await fetchWith({ PUBLIC_BASE_URL: undefined }, "/v1/trust-list");
    expect(res.status).toBe(503);
    expect(res.json).toEqual(misconfigured);
  });

  it("GET /v1/transparency/logs/{logId}", async () => {
    const org = await newOrg();
    await appendMany(org.id, 1);
    const checkpoint = await anchor(org.id);
    const res = await fetchWith(
      { PUBLIC_BASE_URL: "" },
      `/v1/transparency/logs/${checkpoint?.log_id}`,
    );
    expect(res.status).toBe(503);
    expect(res.json).toEqual(misconfigured);
  });
});

describe("publicBaseUrl: an origin, https in production", () => {
  const valid = (value: string, ENVIRONMENT = "production") =>
    publicBaseUrl({ PUBLIC_BASE_URL: value, ENVIRONMENT });

  it.each([
    ["https://risk.example.com", "https://risk.example.com"],
    ["https://risk.example.com/", "https://risk.example.com"],
    ["https://RISK.example.com:443", "https://risk.example.com"],
    ["https://risk.example.com:8443", "https://risk.example.com:8443"],
  ])("%s is %s", (value, origin) => {
    expect(valid(value)).toBe(origin);
  });

  it("accepts http outside production only", () => {
    expect(valid("http://127.0.0.1:8787", "development")).toBe("http://127.0.0.1:8787");
    expect(valid("http://127.0.0.1:8787", "test")).toBe("http://127.0.0.1:8787");
    expect(() => valid("http://risk.example.com")).toThrow(ApiError);
    // Anything but exactly development or test is production (src/env.ts, modeOf).
    expect(() => valid("http://risk.example.com", "staging")).toThrow(ApiError);
  });

  it.each([
    "",
    "risk.example.com",
    "https://risk.example.com/v1",
    "https://risk.example.com/?x=1",
    "https://risk.example.com/#top",
    "https://user:pw@risk.example.com",
    "ftp://risk.example.com",
    "https://",
  ])("refuses %j with 503 service_misconfigured", (value) => {
    let thrown: unknown;
    try {
      valid(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status).toBe(503);
    expect((thrown as ApiError).body).toEqual(misconfigured);
  });
});
