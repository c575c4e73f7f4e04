import { describe, expect, it } from "vitest";
import {
  AUD,
  buildChain,
  closedPayment,
  element,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
} from "../support/ap2-chains";
import { call, callRaw } from "./support/api";
import { assessOk } from "./support/assess";
import { credentialOrg, expectRefused } from "./support/credentials";
import { errorBody } from "./support/errors";

// An issuer's required constraints (AP2 #339): what the API stores and shows, and the denial of
// a credential whose holder withheld one.

const BUDGET = { type: "payment.budget", max: 500, currency: "CAD" };

/** A fresh two-hop chain whose root carries RANGE and a budget as a disclosable element. */
async function withBudget(disclosed: boolean) {
  const issuer = await newSigner("ES256", "issuer-1");
  const agent = await newSigner("ES256");
  const t = Math.floor(Date.now() / 1000);
  const budget = element(BUDGET);
  const credential = await buildChain([
    {
      signer: issuer,
      mandate: openPayment(agent, [RANGE, budget.ref], { iat: t - 3600, exp: t + 86_400 }),
      nested: disclosed ? [budget.disclosure] : [],
    },
    {
      signer: agent,
      mandate: closedPayment(5000, { iat: t - 60, exp: t + 3600 }),
      claims: { iat: t - 60 },
    },
  ]);
  const setup = await credentialOrg([issuer.jwk], agent.jwk);
  return { ...setup, body: { credential, presentation: { aud: AUD, nonce: NONCE } } };
}

async function requireConstraints(token: string, id: string, types: unknown) {
  // Raw: the hostile cases send what the typed body refuses.
  return await callRaw(`/v1/credential-issuers/${id}`, {
    method: "POST",
    token,
    body: { required_constraints: types },
  });
}

describe("required_constraints on the issuer record", () => {
  it("is empty by default, set at creation, replaced whole by an update", async () => {
    const { org, issuerId } = await withBudget(true);
    const read = await call(`/v1/credential-issuers/${issuerId}`, { token: org.token });
    expect(read.json.required_constraints).toEqual([]);
    const signer = await newSigner("ES256");
    const created = await call("/v1/credential-issuers", {
      method: "POST",
      token: org.token,
      body: {
        name: "Bank",
        jwks: { keys: [signer.jwk] },
        required_constraints: ["payment.budget", "checkout.line_items"],
      },
    });
    expect(created.status).toBe(201);
    expect(created.json.required_constraints).toEqual(["payment.budget", "checkout.line_items"]);
    const updated = await requireConstraints(org.token, created.json.id, ["payment.amount_range"]);
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      id: created.json.id,
      name: "Bank",
      required_constraints: ["payment.amount_range"],
    });
    const again = await call(`/v1/credential-issuers/${created.json.id}`, { token: org.token });
    expect(again.json).toEqual(updated.json);
  });

  it("records credential_issuer.updated once per change; an update that changes nothing records nothing", async () => {
    const { org, issuerId } = await withBudget(true);
    const entries = async () =>
      (await call(`/v1/audit?limit=100`, { token: org.token })).json.data.filter(
        (e: { type: string }) => e.type === "credential_issuer.updated",
      ).length;
    expect((await requireConstraints(org.token, issuerId, ["payment.budget"])).status).toBe(200);
    expect((await requireConstraints(org.token, issuerId, ["payment.budget"])).status).toBe(200);
    expect(await entries()).toBe(1);
    const renamed = await call(`/v1/credential-issuers/${issuerId}`, {
      method: "POST",
      token: org.token,
      body: { name: "Renamed" },
    });
    expect(renamed.json).toMatchObject({
      name: "Renamed",
      required_constraints: ["payment.budget"],
    });
    expect(await entries()).toBe(2);
  });

  it.each([
    ["an unknown type", ["payment.teleport"]],
    ["a type twice", ["payment.budget", "payment.budget"]],
    ["not a list", "payment.budget"],
    ["a non-string", [42]],
    ["null", null],
  ])("refuses %s: 400 invalid_request naming required_constraints", async (_, types) => {
    const { org, issuerId } = await withBudget(true);
    const res = await requireConstraints(org.token, issuerId, types);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject(errorBody("invalid_request"));
    expect(JSON.stringify(res.json.details)).toContain("required_constraints");
  });

  it("refuses unknown members and another org's issuer (404)", async () => {
    const { org, issuerId } = await withBudget(true);
    const extra = await callRaw(`/v1/credential-issuers/${issuerId}`, {
      method: "POST",
      token: org.token,
      body: { jwks_url: "https://x.example/jwks.json" },
    });
    expect(extra.status).toBe(400);
    const other = await withBudget(true);
    const res = await requireConstraints(other.org.token, issuerId, ["payment.budget"]);
    expect(res.status).toBe(404);
  });
});

describe("assessing a credential whose holder withheld a required constraint", () => {
  it("denies it: credential_constraint_withheld naming the type", async () => {
    const { org, key, issuerId, body } = await withBudget(false);
    expect((await requireConstraints(org.token, issuerId, ["payment.budget"])).status).toBe(200);
    const assessed = await assessOk(key, body);
    expectRefused(assessed.outcome, "constraint_withheld");
    const reason = assessed.outcome.rejection_reasons.find(
      (r: { key: string }) => r.key === "credential_constraint_withheld",
    );
    expect(reason?.description).toContain("payment.budget");
  });

  it("approves the same chain with the constraint disclosed", async () => {
    const { org, key, issuerId, body } = await withBudget(true);
    expect((await requireConstraints(org.token, issuerId, ["payment.budget"])).status).toBe(200);
    const assessed = await assessOk(key, body);
    expect(assessed.outcome.credential).toMatchObject({ verified: true, failure: null });
  });

  it("before the requirement, the withheld budget is invisible and the chain verifies", async () => {
    const { key, body } = await withBudget(false);
    const assessed = await assessOk(key, body);
    expect(assessed.outcome.credential).toMatchObject({ verified: true, failure: null });
  });
});
