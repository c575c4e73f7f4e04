import { env } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet, type JWTPayload } from "jose";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import { type ChoiceSteps, commitChosen } from "../../src/org-ledger/assessment-commit";
import { signer } from "../../src/signing/signer";
import { call, newOrg } from "./support/api";
import { commit, commitOf, decided, holdNextWrite, until, verdict } from "./support/commits";
import { ownerSql } from "./support/db";

// src/org-ledger/assessment-commit.ts: a commit signs the spend choice it reads before the
// critical section, and goes round again when the section chooses a verdict it did not sign.

/** A verdict committed: which candidate, with the signature the section found for it. */
interface Committed {
  choice: number;
  jws: string;
}

/**
 * Runs `commitChosen` over three candidates with a spend choice that reads `reads` in turn (the
 * last one from then on), and answers what it signed, how many sections ran and what it committed.
 */
async function chosen(reads: number[], racing = false) {
  const script = [...reads];
  const signed: number[] = [];
  let sections = 0;
  const steps: ChoiceSteps<Committed> = {
    candidates: 3,
    racing,
    choose: () => (script.length > 1 ? (script.shift() as number) : (script[0] as number)),
    sign: async (choice) => {
      signed.push(choice);
      return { jws: `signed-${choice}`, mandate_receipt: null };
    },
    earlier: () => undefined,
    sequence: (choice, signature, head) => [{ choice, jws: signature.jws }, head],
    inTurn: async (section) => {
      sections += 1;
      return section(null)[0];
    },
  };
  const committed = await commitChosen(steps);
  return { signed, sections, committed };
}

describe("signing the verdict the section chooses", () => {
  it("signs only the predicted verdict when the choice holds, in one section", async () => {
    expect(await chosen([0])).toEqual({
      signed: [0],
      sections: 1,
      committed: { choice: 0, jws: "signed-0" },
    });
  });

  it("signs every candidate while another spend is in flight, and never goes round", async () => {
    expect(await chosen([2], true)).toEqual({
      signed: [0, 1, 2],
      sections: 1,
      committed: { choice: 2, jws: "signed-2" },
    });
  });

  it("goes round once when the choice changes after signing, and commits the chosen verdict", async () => {
    expect(await chosen([0, 2])).toEqual({
      signed: [0, 2],
      sections: 2,
      committed: { choice: 2, jws: "signed-2" },
    });
  });

  it("goes round at most once per candidate, however often the choice changes", async () => {
    // Each section reads a choice it has not signed until every candidate is signed.
    expect(await chosen([0, 1, 2, 0, 1, 2, 0])).toEqual({
      signed: [0, 1, 2],
      sections: 3,
      committed: { choice: 0, jws: "signed-0" },
    });
  });
});

/** Every JWS the service's signer makes while `run` runs, with its `typ`. */
async function signaturesDuring<T>(run: () => Promise<T>) {
  const key = await signer(env as never);
  const made: { typ: string; claims: JWTPayload }[] = [];
  const { signClaims } = key;
  const es256 = key.es256.signClaims;
  key.signClaims = (claims, typ) => {
    made.push({ typ, claims });
    return signClaims(claims, typ);
  };
  key.es256.signClaims = (claims, typ) => {
    made.push({ typ, claims });
    return es256(claims, typ);
  };
  try {
    return { result: await run(), made };
  } finally {
    key.signClaims = signClaims;
    key.es256.signClaims = es256;
  }
}

/** A JWS verified as a client would, against the published key set; its header and claims. */
async function verified(jws: string) {
  const { json } = await call("/.well-known/jwks.json");
  const { payload, protectedHeader } = await compactVerify(
    jws,
    createLocalJWKSet(json as JSONWebKeySet),
  );
  return { header: protectedHeader, claims: JSON.parse(new TextDecoder().decode(payload)) };
}

describe("a spend choice that changes after signing, in the ledger object", () => {
  it("re-signs the verdict the section chose, once, and commits it signed", async () => {
    const org = await newOrg();
    const ledger = ledgerOf(env, org.id);
    const root = crypto.randomUUID();
    // A payment of 100 under a budget of 150; refused, it answers a denial with its own receipt.
    const refusal = verdict("deny", "credential_budget_exceeded");
    const receipt = { receipt_of: "credential_budget_exceeded" };
    const assessment = commitOf({ root, transaction: "tx-1", amount: 100, budget: 150 });
    if (!assessment.spend) throw new Error("a commit with a spend");
    assessment.spend.instead.budget_exceeded = { ...refusal, receipt };
    // A person's approval of another payment of 100 under the same consent (a review item's
    // spend), which reaches the object while the commit waits for its turn.
    const reviewed = {
      root,
      transaction: "tx-reviewed",
      amount: 100,
      currency: "USD",
      budgets: [{ max: 150, currency: "USD" }],
      maxOccurrences: null,
    };
    // Anchored first: the alarm the org's creation set then finds nothing to write, so the write
    // held below is the test's own.
    await ledger.anchor(org.id);
    const open = await holdNextWrite(ledger);
    const { result: answer, made } = await signaturesDuring(async () => {
      const held = ledger.append(org.id, [
        {
          type: "test.held",
          actor: { type: "api_key", id: "k" },
          subject: null,
          digest: `sha256:${"ab".repeat(32)}`,
        },
      ]);
      await until(ledger, (object) => object.commits.writing);
      // Nothing else spends under the root: the commit predicts the approval and signs it alone,
      // then queues for the section behind the write in flight.
      const answering = commit(org, assessment);
      await until(ledger, (object) => object.sections.queued.length === 1);
      const approval = await ledger.appendDeferred(
        org.id,
        {
          type: "review.resolved",
          actor: { type: "user", id: "reviewer" },
          subject: { type: "review", id: "item-1" },
          digest: `sha256:${"cd".repeat(32)}`,
          once: ["review:item-1"],
          attachment: "{}",
        },
        { kind: "spending", spend: reviewed, livemode: true },
      );
      expect(approval).toMatchObject({ replayed: false });
      open();
      await held;
      return await answering;
    });

    // The section chose the refusal the approval made it, not the verdict signed first.
    expect(decided(answer)).toBe("credential_budget_exceeded");
    if (answer.kind !== "stored") throw new Error("stored");
    const payloads = made.filter((m) => m.typ === "risk-payload+jwt").map((m) => m.claims);
    // Two rounds: the predicted approval, then the refusal; never the third candidate.
    expect(payloads.map((claims) => claims.because)).toEqual([
      "model",
      "credential_budget_exceeded",
    ]);
    const receipts = made.filter((m) => m.typ === "ap2-mandate-receipt+jwt");
    expect(receipts).toHaveLength(1);

    // Both carry the verdict's one place in the status list, taken before the first signature.
    const status = (payloads[1] as JWTPayload).status;
    expect(status).toMatchObject({ status_list: { idx: expect.any(Number) } });
    expect(payloads[0]?.status).toEqual(status);
    const payload = await verified(answer.record.jws);
    expect(payload.header).toMatchObject({ alg: "EdDSA", typ: "risk-payload+jwt" });
    expect(payload.claims).toEqual({ ...refusal.claims, status });
    expect(answer.record.mandate_receipt).toEqual(expect.any(String));
    const signedReceipt = await verified(answer.record.mandate_receipt as string);
    expect(signedReceipt.header).toMatchObject({ alg: "ES256", typ: "ap2-mandate-receipt+jwt" });
    expect(signedReceipt.claims).toEqual({ ...receipt, status });

    // Stored as answered, and the refusal spent nothing: the consent holds the approval alone.
    const [row] = await ownerSql`select decision, jws, mandate_receipt from assessments
      where id = ${answer.record.id}`;
    expect(row).toEqual({
      decision: "deny",
      jws: answer.record.jws,
      mandate_receipt: answer.record.mandate_receipt,
    });
    const budget = await ledger.mandateBudget(true, root, Date.now());
    expect(budget).toMatchObject({ spent: 100, uses: 1 });
  });
});
