import { env, runInDurableObject } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import type { AssessmentCommit, CommitAnswer, Verdict } from "../../src/assess/commit";
import { ledgerOf } from "../../src/ledger/ledger";
import { newId } from "../../src/lib/ids";
import { newOrg, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";

// The ledger object's commit of an assessment (docs/architecture.md, "The assess path"): the
// spend of a credential-backed approval is decided there, once per org, under concurrency.

function verdict(decision: "approve" | "deny", key: string): Verdict {
  return {
    fields: {
      decision,
      risk_level: decision === "approve" ? "normal" : "highest",
      risk_score: decision === "approve" ? 5 : 90,
      reason: `${decision} because ${key}`,
      confidences: {
        agent_identity: 1,
        mandate_validity: 1,
        policy_adherence: 1,
        behavioral_risk: 1,
        recipient_risk: 1,
      },
      signals: [],
      rejection_reasons:
        decision === "deny" ? [{ key, category: "mandate", description: key }] : [],
    },
    claims: { decision, because: key },
    events: [],
    receipt: null,
  };
}

interface Spend {
  root: string;
  transaction: string;
  amount: number;
  budget?: number;
  maxOccurrences?: number;
}

/** A commit as the Worker makes one, for a payment of `amount` under an open mandate. */
function commitOf(spend: Spend | null, decision: "approve" | "deny" = "approve"): AssessmentCommit {
  const id = newId();
  const content = crypto.randomUUID();
  return {
    once: [`assessment:${content}`],
    actor: { type: "api_key", id: newId() },
    receivedAt: Date.now(),
    record: {
      id,
      created: new Date().toISOString(),
      livemode: true,
      kind: "ap2_payment",
      mandate_type: "payment",
      mandate_id: newId(),
      content_hash: content,
      idempotency_key: null,
      agent: null,
      policy_version: 0,
      verify_url: "https://risk.test/.well-known/jwks.json",
      a2a: null,
      amount: spend?.amount ?? 100,
      currency: "USD",
      counterparty: null,
    },
    mandate: {
      id: newId(),
      kind: "ap2_payment",
      mandate_type: "payment",
      vct: "mandate.payment.1",
      content_hash: content,
      mandate_hash: `sha256:${"0".repeat(64)}`,
      mandate: { transaction_id: spend?.transaction ?? content },
    },
    verdict: verdict(decision, "model"),
    spend: spend && {
      root: spend.root,
      transaction: spend.transaction,
      amount: spend.amount,
      currency: "USD",
      budgets: spend.budget === undefined ? [] : [{ max: spend.budget, currency: "USD" }],
      maxOccurrences: spend.maxOccurrences ?? null,
      instead: {
        already_consumed: verdict("deny", "credential_already_consumed"),
        budget_exceeded: verdict("deny", "credential_budget_exceeded"),
      },
    },
    review: null,
    faults: [],
  };
}

const DIGEST = `sha256:${"ab".repeat(32)}`;

/** The ledger object's private state, reached into to hold a write in flight. */
interface Internals {
  commits: { writing: boolean; flushOnce: () => Promise<void> };
  sections: { queued: unknown[] };
}

function sequenceOf(answer: CommitAnswer): number {
  return answer.kind === "stored" ? answer.record.audit_sequence : Number.NaN;
}

function commit(org: TestOrg, value: AssessmentCommit): Promise<CommitAnswer> {
  return ledgerOf(env, org.id).commitAssessment(org.id, value) as unknown as Promise<CommitAnswer>;
}

/** The decision the stored, signed verdict carries, checked against its own signature's claims. */
function decided(answer: CommitAnswer): string {
  if (answer.kind !== "stored") throw new Error(`not stored: ${answer.kind}`);
  const claims = decodeJwt(answer.record.jws);
  expect(claims.decision).toBe(answer.record.decision);
  return answer.record.rejection_reasons[0]?.key ?? answer.record.decision;
}

describe("one consent pays once", () => {
  it("answers already_consumed to a second approval of the same root and transaction", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    expect(decided(await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 })))).toBe(
      "approve",
    );
    const again = await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 }));
    expect(decided(again)).toBe("credential_already_consumed");
    // The refusal is the signed, stored verdict: a deny, with its own entry.
    const [row] = await ownerSql`select decision from assessments where id = ${
      again.kind === "stored" ? again.record.id : ""
    }`;
    expect(row?.decision).toBe("deny");
  });

  it("lets another transaction under the same root, and the same transaction under another root", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 }));
    expect(decided(await commit(org, commitOf({ root, transaction: "tx-2", amount: 100 })))).toBe(
      "approve",
    );
    expect(
      decided(
        await commit(
          org,
          commitOf({ root: crypto.randomUUID(), transaction: "tx-1", amount: 100 }),
        ),
      ),
    ).toBe("approve");
  });

  it("keeps no spend for a verdict that is not an approval", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    const denied = commitOf({ root, transaction: "tx-1", amount: 100 }, "deny");
    expect(decided(await commit(org, denied))).toBe("model");
    expect(decided(await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 })))).toBe(
      "approve",
    );
  });

  it("answers a retry of the same commit with its first answer, spending nothing more", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    const first = commitOf({ root, transaction: "tx-1", amount: 100, budget: 100 });
    const a = await commit(org, first);
    const b = await commit(org, first);
    expect(b).toEqual({ ...a, replayed: true });
    expect(decided(a)).toBe("approve");
  });
});

describe("an open mandate's budget holds across its closed mandates", () => {
  it("refuses the approval that would pass the budget, counting only approvals", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    const at = (transaction: string, amount: number) =>
      commit(org, commitOf({ root, transaction, amount, budget: 300 }));
    expect(decided(await at("tx-1", 200))).toBe("approve");
    expect(decided(await at("tx-2", 150))).toBe("credential_budget_exceeded");
    // The refusal spent nothing: 100 more still fits exactly.
    expect(decided(await at("tx-3", 100))).toBe("approve");
    expect(decided(await at("tx-4", 1))).toBe("credential_budget_exceeded");
  });

  it("refuses past the recurrence's occurrences", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    const at = (transaction: string) =>
      commit(org, commitOf({ root, transaction, amount: 1, maxOccurrences: 2 }));
    expect(decided(await at("tx-1"))).toBe("approve");
    expect(decided(await at("tx-2"))).toBe("approve");
    expect(decided(await at("tx-3"))).toBe("credential_budget_exceeded");
  });

  it("approves exactly as many as fit, whatever the concurrency: 50 at once, 10 fit", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        commit(org, commitOf({ root, transaction: `tx-${i}`, amount: 100, budget: 1_000 })),
      ),
    );
    const outcomes = answers.map(decided);
    expect(outcomes.filter((o) => o === "approve")).toHaveLength(10);
    expect(outcomes.filter((o) => o === "credential_budget_exceeded")).toHaveLength(40);
    const [stored] = await ownerSql`select count(*)::int as n, sum((decision = 'approve')::int)::int
      as approved from assessments where org_id = ${org.id}`;
    expect(stored).toEqual({ n: 50, approved: 10 });
  });
});

describe("the spending cap and a credential's spend", () => {
  it("takes back the spend of an approval the cap refused, so the consent stays unconsumed", async () => {
    const org = await newOrg();
    const root = crypto.randomUUID();
    // The period's meter at the plan's included assessments, and a cap of 0: the next billable
    // assessment would cost more than the cap.
    await ownerSql`insert into billing_accounts (org_id, plan, spending_cap)
      values (${org.id}, 'starter', 0)`;
    await ownerSql`insert into billing_usage (org_id, period_start, assessments)
      values (${org.id}, date_trunc('month', now() at time zone 'UTC')::date, 10000)`;
    const refused = await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 }));
    expect(refused).toEqual({ kind: "refused" });
    await ownerSql`update billing_accounts set spending_cap = null where org_id = ${org.id}`;
    expect(decided(await commit(org, commitOf({ root, transaction: "tx-1", amount: 100 })))).toBe(
      "approve",
    );
  });
});

describe("the group commit", () => {
  it("stores concurrent assessments of one org, each with its own entry, in sequence", async () => {
    const org = await newOrg();
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => commit(org, commitOf(null))),
    );
    const sequences = answers.map((a) => (a.kind === "stored" ? a.record.audit_sequence : 0));
    expect(new Set(sequences).size).toBe(30);
    const rows = await ownerSql`select a.audit_sequence, e.subject_id = a.id::text as matches
      from assessments a join audit_entries e on e.org_id = a.org_id and e.id = a.audit_entry_id
      where a.org_id = ${org.id}`;
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.matches === true)).toBe(true);
  });

  it("sequences what arrives during a write together, in one storage transaction before the next", async () => {
    const org = await newOrg();
    const ledger = ledgerOf(env, org.id);
    const first = await commit(org, commitOf(null));
    const after = sequenceOf(first);
    // The object's outermost storage transactions (each is one commit to its disk), and a gate
    // that holds its next write to Postgres in flight until the test opens it.
    const count = { outer: 0, depth: 0 };
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    await runInDurableObject(ledger, (object, state) => {
      const storage = state.storage;
      const run = storage.transactionSync.bind(storage);
      storage.transactionSync = <T>(closure: () => T): T => {
        if (count.depth === 0) count.outer += 1;
        count.depth += 1;
        try {
          return run(closure);
        } finally {
          count.depth -= 1;
        }
      };
      const commits = (object as unknown as Internals).commits;
      const flushOnce = commits.flushOnce.bind(commits);
      let held = false;
      commits.flushOnce = async () => {
        if (!held) {
          held = true;
          await gate;
        }
        return flushOnce();
      };
    });
    const inside = <T>(read: (object: Internals) => T) =>
      runInDurableObject(ledger, (object) => read(object as unknown as Internals));
    const until = async (ready: (object: Internals) => boolean) => {
      while (!(await inside(ready))) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    // An append whose write is held: every commit below arrives while a write is in flight.
    const held = ledger.append(org.id, [
      { type: "test.held", actor: { type: "api_key", id: "k" }, subject: null, digest: DIGEST },
    ]);
    await until((object) => object.commits.writing);
    const spendOf = (i: number) => ({ root: "root-1", transaction: `tx-${i}`, amount: 100 });
    const commits = Array.from({ length: 20 }, (_, i) => commitOf({ ...spendOf(i), budget: 500 }));
    // A retry of one of them, racing it: answered with the first's entry, never a second one.
    const answering = Promise.all(
      [...commits, commits[7] as AssessmentCommit].map((c) => commit(org, c)),
    );
    await until((object) => object.sections.queued.length === 21);
    expect(count.outer).toBe(1);
    open();
    const [appended] = await held;
    const answers = await answering;
    expect(appended?.sequence).toBe(after + 1);
    const sequences = answers.map(sequenceOf);
    expect(sequences[20]).toBe(sequences[7]);
    // Each signs before it queues, so either may reach the section first: that one is sequenced,
    // the other answered as its replay.
    const pair = [answers[7], answers[20]].map((a) => (a?.kind === "stored" ? a.replayed : a));
    expect(pair.sort()).toEqual([false, true]);
    // In sequence order (the order the batch ran them in, their arrival's), exactly the first
    // five fit the budget.
    const bySequence = answers.slice(0, 20).sort((a, b) => sequenceOf(a) - sequenceOf(b));
    expect(bySequence.map(sequenceOf)).toEqual(Array.from({ length: 20 }, (_, i) => after + 2 + i));
    expect(bySequence.map(decided)).toEqual([
      ...Array(5).fill("approve"),
      ...Array(15).fill("credential_budget_exceeded"),
    ]);
    // The held append's own transaction, the batch's one, and the one recording the write:
    // three, where a transaction per commit made 23.
    expect(count.outer).toBe(3);
  });
});
