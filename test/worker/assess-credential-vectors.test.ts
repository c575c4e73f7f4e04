import type { JWK } from "jose";
import { describe, expect, it } from "vitest";
import { FAILURE_OF_LABEL } from "../support/ap2-vector-labels";
import type { RequestBody } from "./support/api";
import { assess, assessOk, type Json } from "./support/assess";
import {
  consentOf,
  credentialOrg,
  expectRefused,
  reasonOf,
  seedSpend,
} from "./support/credentials";
import { errorBody } from "./support/errors";

type Glob = (pattern: string, options: object) => Record<string, unknown>;

// Every AP2 v0.2 vector of the reference SDK (test/fixtures/ap2-v0.2-vectors) through
// POST /v1/assess in workerd, its trust anchors registered through /v1/credential-issuers and
// its holder key registered to an agent: each outcome as `expected_outcome` says (never
// `sdk_verdict`), mapped per docs/assess.md, "Assessing a credential".

const files = (import.meta as unknown as { glob: Glob }).glob(
  "../fixtures/ap2-v0.2-vectors/*.json",
  {
    eager: true,
    import: "default",
  },
) as Record<string, Json>;
const load = (name: string) => files[`../fixtures/ap2-v0.2-vectors/${name}.json`] as Json;
const index = load("index") as {
  cases: { name: string; expected_outcome: "accept" | "reject"; reject_reason: string | null }[];
  sequences: { name: string }[];
};

/** The key that signs the last hop: the `cnf.jwk` of the hop before (null for a lone root). */
function holderOf(decoded: Json[] | null): JWK | null {
  const delegating = decoded && decoded.length > 1 ? decoded[decoded.length - 2] : null;
  return (delegating?.cnf?.jwk as JWK | undefined) ?? null;
}

function bodyOf(vector: Json, step: Json = vector): RequestBody<"/v1/assess", "POST"> {
  const checkout = step.constraint_inputs?.checkout_jwt;
  return {
    credential: step.credential,
    presentation: {
      aud: step.expected_aud,
      nonce: step.expected_nonce,
      ...(checkout ? { checkout_jwt: checkout } : {}),
    },
  };
}

async function setUp(vector: Json, decoded: Json[] | null) {
  const anchors = (vector.trusted_keys as { jwk: JWK }[]).map((k) => k.jwk);
  return await credentialOrg(anchors, holderOf(decoded ?? vector.decoded));
}

describe("AP2 v0.2 vectors through POST /v1/assess", () => {
  it("covers all 28 cases and 3 sequences", () => {
    expect(index.cases).toHaveLength(28);
    expect(index.sequences).toHaveLength(3);
  });

  for (const { name, expected_outcome, reject_reason } of index.cases) {
    const vector = load(name);

    if (expected_outcome === "accept") {
      it(`${name}: verified, its holder proven, approved`, async () => {
        const { key, issuerId, agentId } = await setUp(vector, null);
        const body = await assessOk(key, bodyOf(vector));
        expect(body.outcome.credential).toEqual({
          verified: true,
          reference: vector.closed_mandate_reference,
          issuer: issuerId,
          holder_thumbprint: expect.any(String),
          hops: vector.decoded.length,
          failure: null,
        });
        expect(body.outcome.agent?.id).toBe(agentId);
        expect(body.outcome.confidences.mandate_validity).toBe(1);
        expect(body.outcome.confidences.agent_identity).toBe(1);
        expect(body.decision).toBe("approve");
        // The assessed mandate is the verified leaf's payload, returned with the Risk Payload.
        expect(body.mandate).toMatchObject(vector.decoded.at(-1));
        expect((body.mandate.risk_data as Json)["agent-risk"].assessment_id).toBe(
          body.assessmentId,
        );
      });
      continue;
    }

    if (reject_reason === "vct") {
      it(`${name}: 400 unknown_mandate_type, as for decoded JSON`, async () => {
        const { key } = await setUp(vector, null);
        const res = await assess(key, bodyOf(vector));
        expect(res.status).toBe(400);
        expect(res.json).toEqual(
          errorBody("unknown_mandate_type", [
            { path: "credential.hops[1].vct", message: expect.any(String) },
          ]),
        );
      });
      continue;
    }

    if (reject_reason === "constraint_budget") {
      // The credential of payment_valid_recurring_budget after `mandate_context`'s prior spend
      // under the same root: the ledger object, which holds that spend, refuses it.
      it(`${name}: after the prior spend under its root, budget_exceeded`, async () => {
        const { org, key } = await setUp(vector, null);
        const prior = vector.constraint_inputs.mandate_context;
        await seedSpend(org.id, consentOf(vector.credential), prior.total_amount, prior.total_uses);
        const body = await assessOk(key, bodyOf(vector));
        expectRefused(body.outcome, "budget_exceeded");
      });
      continue;
    }

    const failure = FAILURE_OF_LABEL[reject_reason as string] as string;
    it(`${name}: ${reject_reason} -> denied, credential_${failure}`, async () => {
      expect(failure).toBeDefined();
      const { key, agentId } = await setUp(vector, null);
      const body = await assessOk(key, bodyOf(vector));
      expectRefused(body.outcome, failure);
      expect(body.outcome.credential!.reference).toBe(vector.closed_mandate_reference);
      if (failure === "constraint_violated") {
        expect(reasonOf(body.outcome, "credential_constraint_violated")?.description).toMatch(
          /\((constraint_violated), [a-z_.]+\d?\)/,
        );
      }
      // A refused chain proves nobody: its key is a claim, never proof of possession.
      if (agentId !== null) expect(body.outcome.confidences.agent_identity).toBeLessThan(1);
    });
  }
});

describe("AP2 v0.2 sequences through POST /v1/assess: one consent pays once", () => {
  for (const { name } of index.sequences) {
    const sequence = load(name);
    it(`${name}: every step as expected, in order`, async () => {
      const steps = sequence.steps as Json[];
      const { key } = await setUp(sequence, steps[0]?.decoded);
      for (const step of steps) {
        const body = await assessOk(key, bodyOf(sequence, step));
        const where = `step ${step.step}`;
        if (step.expected_outcome === "accept") {
          expect(body.decision, where).toBe("approve");
          expect(body.outcome.credential, where).toMatchObject({ verified: true, failure: null });
        } else {
          expectRefused(body.outcome, step.reject_reason);
        }
        expect(body.outcome.credential!.reference, where).toBe(step.closed_mandate_reference);
        // The same presentation again is the same assessment, whatever came after it.
        const again = await assessOk(key, bodyOf(sequence, step));
        expect(again.assessmentId, where).toBe(body.assessmentId);
      }
    });
  }
});
