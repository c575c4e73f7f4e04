import { env, runInDurableObject } from "cloudflare:test";
import type { JWK } from "jose";
import { expect } from "vitest";
import { ledgerOf } from "../../../src/ledger/ledger";
import type { OrgLedger } from "../../../src/ledger/org-ledger";
import { call, type TestOrg } from "./api";
import { type Json, orgWithKey } from "./assess";
import { newAgent } from "./identity";

/** An org with a live key, an issuer registered through the API, and the holder's agent. */
export interface CredentialOrg {
  org: TestOrg;
  key: string;
  issuerId: string;
  agentId: string | null;
}

/** Registers `jwks` as one credential issuer of the org (POST /v1/credential-issuers). */
export async function registerIssuer(org: TestOrg, keys: JWK[], name = "User's wallet") {
  const res = await call("/v1/credential-issuers", {
    method: "POST",
    token: org.token,
    body: { name, jwks: { keys } },
  });
  if (res.status !== 201) throw new Error(`issuer registration failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** Registers `jwk` as a key of a new agent of the org: its holder, proven by possession. */
export async function registerHolder(org: TestOrg, jwk: JWK): Promise<string> {
  const agent = await newAgent(org);
  const res = await call(`/v1/agents/${agent.id}/keys`, {
    method: "POST",
    token: org.token,
    body: { jwk },
  });
  if (res.status !== 201) throw new Error(`key registration failed: ${res.status} ${res.text}`);
  return agent.id as string;
}

export async function credentialOrg(
  anchors: JWK[],
  holder: JWK | null,
  mode: "live" | "test" = "live",
): Promise<CredentialOrg> {
  const { org, key } = await orgWithKey(mode);
  const issuerId = await registerIssuer(org, anchors);
  const agentId = holder === null ? null : await registerHolder(org, holder);
  return { org, key, issuerId, agentId };
}

/** Records a prior approved spend under `root` in the org's ledger object (a vector's context). */
export async function seedSpend(orgId: string, root: string, amount: number, uses: number) {
  const stub = ledgerOf(env as never, orgId);
  await runInDurableObject(stub, (object) => {
    const store = (
      object as unknown as OrgLedger as unknown as {
        store: { addSpend: (...a: unknown[]) => void };
      }
    ).store;
    // Sequences no assessment uses: only the totals matter to the rule.
    for (let i = 0; i < Math.max(uses, 1); i++) {
      store.addSpend(root, `prior-${i}`, i === 0 ? amount : 0, "CAD", -1 - i);
    }
  });
}

export function reasonOf(outcome: Json, key: string): Json | undefined {
  return (outcome.rejection_reasons as Json[]).find((r) => r.key === key);
}

/** The credential block of a denied assessment for `failure`, and its reason. */
export function expectRefused(outcome: Json, failure: string) {
  expect(outcome.outcome.decision).toBe("deny");
  expect(outcome.credential).toMatchObject({ verified: false, failure });
  expect(reasonOf(outcome, `credential_${failure}`)).toMatchObject({
    category: "mandate",
    description: expect.stringContaining(failure),
  });
  expect(outcome.confidences.mandate_validity).toBe(0);
}
