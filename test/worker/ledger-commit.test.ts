import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AssessmentCommit } from "../../src/assess/commit";
import { ledgerOf } from "../../src/ledger/ledger";
import { newOrg } from "./support/api";
import { commit, commitOf, decided, holdNextWrite, sequenceOf, until } from "./support/commits";
import { ownerSql } from "./support/db";

// The ledger object's commit of an assessment (docs/architecture.md, "The assess path"): the
// spend of a credential-backed approval is decided there, once per org, under concurrency.

const DIGEST = `sha256:${"ab".repeat(32)}`;

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
    // The object's outermost storage transactions (each is one commit to its disk), and its
    // next write to Postgres held in flight until the test opens it.
    const count = { outer: 0, depth: 0 };
    await runInDurableObject(ledger, (_, state) => {
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
    });
    const open = await holdNextWrite(ledger);
    // An append whose write is held: every commit below arrives while a write is in flight.
    const held = ledger.append(org.id, [
      { type: "test.held", actor: { type: "api_key", id: "k" }, subject: null, digest: DIGEST },
    ]);
    await until(ledger, (object) => object.commits.writing);
    const spendOf = (i: number) => ({ root: "root-1", transaction: `tx-${i}`, amount: 100 });
    const commits = Array.from({ length: 20 }, (_, i) => commitOf({ ...spendOf(i), budget: 500 }));
    // A retry of one of them, racing it: answered with the first's entry, never a second one.
    const answering = Promise.all(
      [...commits, commits[7] as AssessmentCommit].map((c) => commit(org, c)),
    );
    await until(ledger, (object) => object.sections.queued.length === 21);
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
