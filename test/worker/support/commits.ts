import { env, runInDurableObject } from "cloudflare:test";
import { decodeJwt } from "jose";
import { expect } from "vitest";
import type { AssessmentCommit, CommitAnswer, Verdict } from "../../../src/assess/commit";
import { ledgerOf } from "../../../src/ledger/ledger";
import { newId } from "../../../src/lib/ids";
import type { TestOrg } from "./api";

// Assessment commits as the Worker hands them to the org's ledger object, for the tests that
// drive the object's commit directly (ledger-commit, assessment-commit).

export function verdict(decision: "approve" | "deny", key: string): Verdict {
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

export interface Spend {
  root: string;
  transaction: string;
  amount: number;
  budget?: number;
  maxOccurrences?: number;
}

/** A commit as the Worker makes one, for a payment of `amount` under an open mandate. */
export function commitOf(
  spend: Spend | null,
  decision: "approve" | "deny" = "approve",
): AssessmentCommit {
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

/** The ledger object's private state, reached into to hold a write in flight. */
export interface Internals {
  commits: { writing: boolean; flushOnce: () => Promise<void> };
  sections: { queued: unknown[] };
}

export function sequenceOf(answer: CommitAnswer): number {
  return answer.kind === "stored" ? answer.record.audit_sequence : Number.NaN;
}

export function commit(org: TestOrg, value: AssessmentCommit): Promise<CommitAnswer> {
  return ledgerOf(env, org.id).commitAssessment(org.id, value) as unknown as Promise<CommitAnswer>;
}

/** The decision the stored, signed verdict carries, checked against its own signature's claims. */
export function decided(answer: CommitAnswer): string {
  if (answer.kind !== "stored") throw new Error(`not stored: ${answer.kind}`);
  const claims = decodeJwt(answer.record.jws);
  expect(claims.decision).toBe(answer.record.decision);
  return answer.record.rejection_reasons[0]?.key ?? answer.record.decision;
}

/**
 * Holds the ledger object's next write to Postgres in flight until the returned `open` is
 * called: what commits meanwhile queues its critical section for the write after it.
 */
export async function holdNextWrite(ledger: DurableObjectStub): Promise<() => void> {
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  await runInDurableObject(ledger, (object) => {
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
  return open;
}

/** Waits until `ready` holds of the ledger object's private state. */
export async function until(
  ledger: DurableObjectStub,
  ready: (object: Internals) => boolean,
): Promise<void> {
  const inside = () =>
    runInDurableObject(ledger, (object) => ready(object as unknown as Internals));
  while (!(await inside())) await new Promise((resolve) => setTimeout(resolve, 5));
}
