import fc from "fast-check";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import {
  AUD,
  b64url,
  buildChain,
  type Claims,
  closedPayment,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../support/ap2-chains";
import { call } from "./support/api";
import {
  assess,
  assessOk,
  assessRaw,
  createPolicy,
  type Json,
  jcs,
  orgWithKey,
  sha256Hex,
  signalTypes,
} from "./support/assess";
import { credentialOrg, expectRefused, leafUnder } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// POST /v1/assess with an AP2 credential (docs/assess.md, "Assessing a credential"), with
// chains made here with jose for what the SDK's vectors do not cover.

const now = () => Math.floor(Date.now() / 1000);
const PRESENTATION = { aud: AUD, nonce: NONCE };

interface Made {
  issuer: Signer;
  agent: Signer;
  credential: string;
}

/** A two-hop chain at the current time: an open payment to `agent`, a closed payment. */
async function chainOf(
  options: {
    alg?: "ES256" | "EdDSA";
    constraints?: Claims[];
    closed?: Claims;
    signers?: { issuer: Signer; agent: Signer };
  } = {},
): Promise<Made> {
  const alg = options.alg ?? "ES256";
  const issuer = options.signers?.issuer ?? (await newSigner(alg, "issuer-1"));
  const agent = options.signers?.agent ?? (await newSigner(alg));
  const t = now();
  const credential = await buildChain([
    {
      signer: issuer,
      mandate: openPayment(agent, options.constraints ?? [RANGE], {
        iat: t - 3600,
        exp: t + 86_400,
      }),
    },
    {
      signer: agent,
      mandate: closedPayment(5000, { iat: t - 60, exp: t + 3600, ...options.closed }),
      claims: { iat: t - 60 },
    },
  ]);
  return { issuer, agent, credential };
}

async function setUp(made: Made, mode: "live" | "test" = "live") {
  return await credentialOrg([made.issuer.jwk], made.agent.jwk, mode);
}

async function agentCounters(agentId: string) {
  const [row] =
    await ownerSql`select approvals, reviews, denials from agents where id = ${agentId}`;
  return row;
}

describe("the request", () => {
  it("a credential that cannot be split into hops: 422 credential_unparseable with details", async () => {
    const { key } = await orgWithKey();
    const res = await assess(key, { credential: "not a chain", presentation: PRESENTATION });
    expect(res.status).toBe(422);
    expect(res.json).toEqual(
      errorBody("credential_unparseable", [
        { path: expect.stringMatching(/^credential/), message: expect.any(String) },
      ]),
    );
  });

  it("a mandate beside the credential must be its leaf payload: else 422 mandate_mismatch", async () => {
    const made = await chainOf();
    const { key } = await setUp(made);
    const leaf = decodedLeaf(made.credential);
    const other = { ...leaf, payment_amount: { amount: 1, currency: "CAD" } };
    const res = await assess(key, {
      credential: made.credential,
      presentation: PRESENTATION,
      mandate: other,
    });
    expect(res.status).toBe(422);
    expect(res.json).toEqual(
      errorBody("mandate_mismatch", [{ path: "mandate", message: expect.any(String) }]),
    );
    const same = await assessOk(key, {
      credential: made.credential,
      presentation: PRESENTATION,
      mandate: leaf,
    });
    expect(same.outcome.credential!.verified).toBe(true);
  });

  it("in live mode presentation.aud and nonce are required; in test mode they are not", async () => {
    const made = await chainOf();
    const { org, key } = await setUp(made);
    const res = await assess(key, { credential: made.credential });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: "presentation.aud", message: "required in live mode with a credential" },
        { path: "presentation.nonce", message: "required in live mode with a credential" },
      ]),
    );
    const { key: test } = await org.key(undefined, "test");
    const body = await assessOk(test, { credential: made.credential });
    expect(body.outcome.credential!.verified).toBe(true);
  });

  it("a credential on another kind, a presentation without credential: 400", async () => {
    const { key } = await orgWithKey();
    const onKind = await assessRaw(key, { kind: "custom", credential: "x", mandate: {} });
    expect(onKind.status).toBe(400);
    expect(onKind.error.details).toEqual([
      { path: "credential", message: "applies only to kind ap2_payment" },
    ]);
    const alone = await assessRaw(key, { presentation: PRESENTATION, mandate: {} });
    expect(alone.status).toBe(400);
    expect(alone.error.details).toEqual([
      { path: "presentation", message: "applies only with a credential" },
    ]);
  });
});

function decodedLeaf(credential: string): Json {
  const leaf = credential.split("~~").at(-1) as string;
  const disclosure = leaf.split("~")[1] as string;
  const decoded = JSON.parse(new TextDecoder().decode(base64UrlBytes(disclosure)));
  return decoded.at(-1);
}

function base64UrlBytes(text: string): Uint8Array {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) =>
    c.charCodeAt(0),
  );
}

describe("idempotency: the credential as presented", () => {
  it("hashes {kind, mandateType, credential, presentation}; the same presentation replays", async () => {
    const made = await chainOf();
    const { key } = await setUp(made);
    const request = { credential: made.credential, presentation: PRESENTATION };
    const first = await assessOk(key, request);
    const again = await assessOk(key, request);
    expect(again.assessmentId).toBe(first.assessmentId);
    expect(again.riskPayloadJws).toBe(first.riskPayloadJws);
    const [row] =
      await ownerSql`select content_hash from assessments where id = ${first.assessmentId}`;
    const hashed = {
      kind: "ap2_payment",
      mandateType: "payment",
      credential: made.credential,
      presentation: PRESENTATION,
    };
    expect(row?.content_hash).toBe(await sha256Hex(jcs(hashed)));
  });

  it("decoded JSON equal to the verified leaf is another assessment, and unverified", async () => {
    const made = await chainOf();
    const { key } = await setUp(made);
    const verified = await assessOk(key, {
      credential: made.credential,
      presentation: PRESENTATION,
    });
    const decoded = await assessOk(key, { mandate: decodedLeaf(made.credential) });
    expect(decoded.assessmentId).not.toBe(verified.assessmentId);
    expect(decoded.outcome.credential).toBeNull();
    expect(signalTypes(decoded.outcome)).toContain("unverified");
    expect(decoded.outcome.confidences.mandate_validity).toBe(0.7);
    expect(verified.outcome.confidences.mandate_validity).toBe(1);
    expect(signalTypes(verified.outcome)).not.toContain("unverified");
  });
});

describe("the outcome and the Risk Payload say what was proven", () => {
  it("credential_reference and mandate_verified are signed; the outcome reads back the same", async () => {
    const made = await chainOf();
    const { key, issuerId } = await setUp(made);
    const body = await assessOk(key, { credential: made.credential, presentation: PRESENTATION });
    const leafJws = (made.credential.split("~~").at(-1) as string).split("~")[0] as string;
    const reference = b64url(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(leafJws))),
    );
    expect(body.outcome.credential).toEqual({
      verified: true,
      reference,
      issuer: issuerId,
      holder_thumbprint: expect.any(String),
      hops: 2,
      failure: null,
    });
    const claims = decodeJwt(body.riskPayloadJws);
    expect(claims).toMatchObject({ credential_reference: reference, mandate_verified: true });
    const read = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(read.json.credential).toEqual(body.outcome.credential);
  });

  it("an org can require verified credentials: mandate.verified in a deny rule", async () => {
    const made = await chainOf();
    const { org, key } = await setUp(made);
    await createPolicy(org, {
      grammar: 1,
      rules: [
        {
          id: "verified-only",
          action: "deny",
          when: { attr: "mandate.verified", op: "eq", value: false },
        },
      ],
    });
    const decoded = await assessOk(key, { mandate: decodedLeaf(made.credential) });
    expect(decoded.decision).toBe("deny");
    expect(decoded.outcome.rejection_reasons.map((r: Json) => r.key)).toEqual([
      "policy_rule_denied",
    ]);
    const verified = await assessOk(key, {
      credential: made.credential,
      presentation: PRESENTATION,
    });
    expect(verified.decision).toBe("approve");
  });
});

describe("rules the vectors do not cover, with chains made here", () => {
  it("an EdDSA chain verifies and its holder is proven", async () => {
    const made = await chainOf({ alg: "EdDSA" });
    const { key, agentId } = await setUp(made);
    const body = await assessOk(key, { credential: made.credential, presentation: PRESENTATION });
    expect(body.outcome.credential).toMatchObject({ verified: true, failure: null, hops: 2 });
    expect(body.outcome.agent!.id).toBe(agentId);
    expect(body.outcome.confidences.agent_identity).toBe(1);
  });

  it("an unknown constraint type: denied, constraint_violated naming it", async () => {
    const made = await chainOf({ constraints: [RANGE, { type: "payment.teleport", max: 1 }] });
    const { key } = await setUp(made);
    const body = await assessOk(key, { credential: made.credential, presentation: PRESENTATION });
    expectRefused(body.outcome, "constraint_violated");
    const reason = body.outcome.rejection_reasons.find(
      (r: Json) => r.key === "credential_constraint_violated",
    );
    expect(reason!.description).toContain("payment.teleport");
  });

  it("alg none: denied, signature_invalid", async () => {
    const made = await chainOf();
    const [root, ...rest] = made.credential.split("~~") as [string, ...string[]];
    const [jws, ...disclosures] = root.split("~") as [string, ...string[]];
    const payload = jws.split(".")[1];
    const unsigned = `${b64url(JSON.stringify({ alg: "none", typ: "example+sd-jwt" }))}.${payload}.`;
    const credential = [[unsigned, ...disclosures].join("~"), ...rest].join("~~");
    const { key } = await setUp(made);
    const res = await assess(key, { credential, presentation: PRESENTATION });
    // An empty signature part still parses: the chain is assessed and refused.
    expect(res.status).toBe(200);
    expectRefused(res.json.outcome, "signature_invalid");
  });

  it("a refused chain's key is a claim: velocity counts it, its trust does not change", async () => {
    const made = await chainOf();
    const { key, agentId } = await setUp(made);
    const before = await agentCounters(agentId as string);
    const body = await assessOk(key, {
      credential: made.credential,
      presentation: { aud: AUD, nonce: "another-nonce" },
    });
    expectRefused(body.outcome, "nonce_mismatch");
    // Named (so the agent's velocity counts it), but not proven.
    expect(body.outcome.agent?.id).toBe(agentId);
    expect(body.outcome.confidences.agent_identity).toBe(0.6);
    const [row] = await ownerSql`select agent_id from assessments where id = ${body.assessmentId}`;
    expect(row?.agent_id).toBe(agentId);
    expect(await agentCounters(agentId as string)).toEqual(before);
  });
});

describe("one consent pays once, under concurrency", () => {
  it("50 distinct closed mandates under one open mandate whose budget fits 10: exactly 10 approvals", async () => {
    const alg = "ES256";
    const signers = { issuer: await newSigner(alg, "issuer-1"), agent: await newSigner(alg) };
    // 10 payments of 10.00 CAD fit a budget of 100.00 CAD (major units, as the SDK reads it).
    const constraints = [RANGE, { type: "payment.budget", max: 100, currency: "CAD" }];
    const made = await chainOf({ signers, constraints });
    const { org, key } = await setUp(made);
    // An approve rule for verified mandates keeps a burst of one agent from reviewing them.
    await createPolicy(org, {
      grammar: 1,
      rules: [
        {
          id: "verified-routine",
          action: "approve",
          when: { attr: "mandate.verified", op: "eq", value: true },
        },
      ],
    });
    // One consent (one root JWS), 50 closed mandates each bound to it by its own last hop.
    const root = made.credential.split("~~")[0] as string;
    const credentials = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        leafUnder(root, signers.agent, {
          payment_amount: { amount: 1000, currency: "CAD" },
          transaction_id: `tx-${i}`,
        }),
      ),
    );
    const answers = await Promise.all(
      credentials.map((credential) => assess(key, { credential, presentation: PRESENTATION })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const decisions = answers.map((a) => a.json.decision);
    expect(decisions.filter((d) => d === "approve")).toHaveLength(10);
    for (const answer of answers.filter((a) => a.json.decision !== "approve")) {
      expectRefused(answer.json.outcome, "budget_exceeded");
    }
  });
});

describe("the chain parser through HTTP: never a 500", () => {
  it("arbitrary strings, truncations, re-orderings and oversized parts answer 200, 400 or 422", async () => {
    const made = await chainOf();
    const { key } = await setUp(made, "test");
    const parts = made.credential.split("~");
    const variants = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc
        .integer({ min: 1, max: made.credential.length - 1 })
        .map((n) => made.credential.slice(0, n)),
      fc.shuffledSubarray(parts, { minLength: 1 }).map((p) => p.join("~")),
      fc.constantFrom(`${made.credential}${"A".repeat(70_000)}`, `${parts[0]}~~`.repeat(20)),
    );
    await fc.assert(
      fc.asyncProperty(variants, async (credential) => {
        const res = await assess(key, { credential });
        expect([200, 400, 422]).toContain(res.status);
        if (res.status === 200) expect(res.json.decision).not.toBe("approve");
      }),
      { numRuns: 40 },
    );
  });
});
