import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json } from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";

// docs/reviews.md, "Credential-backed reviews": approving a review of an assessment with a
// verified AP2 credential spends it like an automated approval, judged by the org's ledger
// object (one consent pays once, budgets, recurrence); a refused spend approves nothing.

interface LedgerStore {
  addSpend: (
    livemode: boolean,
    consent: string,
    tx: string,
    amount: number,
    currency: string,
    seq: number,
  ) => void;
  spent: (
    livemode: boolean,
    consent: { root: string },
    tx: string,
    currency: string,
  ) => { consumedBy: number | null };
}

function storeOf(object: unknown): LedgerStore {
  return (object as { store: LedgerStore }).store;
}

/** An org whose policy reviews every verified credential, and one such review item. */
async function credentialReview() {
  const setup = await provenAgentOrg();
  await createPolicy(setup.org, {
    grammar: 1,
    rules: [
      {
        id: "review-verified",
        action: "review",
        when: { attr: "mandate.verified", op: "eq", value: true },
      },
    ],
  });
  const answer = await assessOk(setup.key, await setup.body());
  expect(answer.decision).toBe("review");
  expect(answer.outcome.credential).toMatchObject({ verified: true });
  const list = await call("/v1/reviews", { key: setup.key });
  const item = (list.json.data as Json[]).find((r) => r.assessment_id === answer.assessmentId);
  expect(item?.credential_backed).toBe(true);
  const [row] = await ownerSql`select spend from reviews where id = ${item?.id}`;
  return { ...setup, answer, item: item as Json, spend: row?.spend as Json };
}

function resolve(org: TestOrg, id: string, decision: "approve" | "deny") {
  return call(`/v1/reviews/${id}/resolve`, {
    method: "POST",
    token: org.token,
    body: { decision },
  });
}

describe("approving a credential-backed review", () => {
  it("spends the credential in the org's ledger object, once", async () => {
    const { org, item, spend } = await credentialReview();
    expect(spend).toMatchObject({ amount: 5000, currency: "CAD", budgets: [] });
    const res = await resolve(org, item.id, "approve");
    expect(res.status).toBe(200);
    expect(res.json.decision).toBe("approve");
    const consumed = await runInDurableObject(ledgerOf(env as never, org.id), (object) =>
      storeOf(object).spent(true, { root: spend.root }, spend.transaction, spend.currency),
    );
    expect(consumed.consumedBy).toEqual(expect.any(Number));
  });

  it("answers 409 with the reason when the spend is refused, and approves nothing", async () => {
    const { org, item, spend } = await credentialReview();
    // The same consent already paid this transaction (an automated approval, say).
    await runInDurableObject(ledgerOf(env as never, org.id), (object) => {
      storeOf(object).addSpend(
        true,
        spend.root,
        spend.transaction,
        spend.amount,
        spend.currency,
        -1,
      );
    });
    const res = await resolve(org, item.id, "approve");
    expect(res.status).toBe(409);
    expect(res.json).toEqual({
      error: "review_spend_refused",
      details: {
        reason: "already_consumed",
        message: "the credential's transaction was already approved under this consent",
      },
    });
    const still = await call(`/v1/reviews/${item.id}`, { token: org.token });
    expect(still.json).toMatchObject({ status: "open", decision: null, risk_payload: null });
    const entries = await ownerSql`select 1 from audit_entries
      where org_id = ${org.id} and subject_type = 'review' and subject_id = ${item.id}`;
    expect(entries).toHaveLength(0);
    // Denying spends nothing, and still closes it.
    const denied = await resolve(org, item.id, "deny");
    expect(denied.status).toBe(200);
    expect(denied.json.decision).toBe("deny");
  });
});
