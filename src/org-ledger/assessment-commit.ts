import { payloadDigest } from "#audit/digest";
import type { AssessmentCommit, Verdict } from "../assess/commit";
import { MANDATE_RECEIPT_TYP } from "../assess/mandate-receipt";
import type { PersistPlan } from "../assess/persist";
import { RISK_PAYLOAD_TYP } from "../assess/risk-payload";
import type { Head, LedgerStore, StoredEntry } from "../ledger/ledger-store";
import { sequenceUnder } from "../ledger/sequencing";
import type { Signer } from "../signing/signer";
import { assessmentPlan } from "./assessment-write";
import type { Section } from "./critical-sections";
import type { GroupCommit } from "./group-commit";
import { termsOf } from "./spend-decision";

/** A candidate verdict's signatures: its Risk Payload and, for a credential, its Mandate Receipt. */
export interface VerdictSignature {
  jws: string;
  mandate_receipt: string | null;
}

/**
 * Signs one candidate verdict with the verdict's place in the org's status list (`status`):
 * the Risk Payload and the Mandate Receipt carry the same place, so voiding the verdict voids
 * its receipt (docs/status-lists.md, "Issued").
 */
export async function signVerdict(
  key: Signer,
  verdict: Verdict,
  status: Record<string, unknown>,
): Promise<VerdictSignature> {
  const [jws, receipt] = await Promise.all([
    key.signClaims({ ...verdict.claims, status }, RISK_PAYLOAD_TYP),
    // The Mandate Receipt beside its Risk Payload (issue 42's ADR, point 2).
    verdict.receipt
      ? key.es256.signClaims({ ...verdict.receipt, status }, MANDATE_RECEIPT_TYP)
      : null,
  ]);
  return { jws, mandate_receipt: receipt };
}

/**
 * Runs `commit` counted among the spends in flight under its consent root (`spending`, per
 * root), and tells it whether another was in flight when it started (`racing`): that one may
 * change its spend choice before its turn. A commit without a spend never races.
 */
export async function whileSpending<T>(
  spending: Map<string, number>,
  root: string | null,
  commit: (racing: boolean) => Promise<T>,
): Promise<T> {
  if (root === null) return await commit(false);
  const racing = (spending.get(root) ?? 0) > 0;
  spending.set(root, (spending.get(root) ?? 0) + 1);
  try {
    return await commit(racing);
  } finally {
    const left = (spending.get(root) ?? 1) - 1;
    if (left > 0) spending.set(root, left);
    else spending.delete(root);
  }
}

/** What a commit needs of its ledger object to sign and sequence its chosen verdict. */
export interface ChoiceSteps<T> {
  /** How many candidate verdicts there are (`candidateVerdicts`), numbered from 0. */
  candidates: number;
  /** Whether another spend under the same consent was in flight when this one started. */
  racing: boolean;
  /** The spend choice as the ledger reads it now (`spendChoice`): synchronous, final in a section. */
  choose: () => number;
  sign: (choice: number) => Promise<VerdictSignature>;
  /** An earlier commit's answer under the same keys, looked up in the section. */
  earlier: () => T | undefined;
  /** Sequences the chosen, signed verdict from `head`, in the section. */
  sequence: (choice: number, signature: VerdictSignature, head: Head | null) => [T, Head | null];
  /** Runs a critical section in its turn (`CriticalSections.inTurn`). */
  inTurn: <R>(section: Section<R>) => Promise<R>;
}

/** A turn in the section: its commit done, or the choice it found still to sign. */
type Turn<T> = { done: T } | { unsigned: number };

/**
 * Signs the verdict the section will choose and sequences it there. Signatures are made before
 * the section, which must not await, and only the choice read now is signed: the section reads
 * it again, where it is final. While another spend under the same consent is in flight the
 * choice may change in between, so every candidate is signed then, and the section never waits
 * for a signature. Should it still change (the other was not in flight yet), the commit goes
 * round again to sign the verdict chosen then: each round signs a candidate not signed before,
 * so there are at most as many rounds as candidates.
 */
export async function commitChosen<T>(steps: ChoiceSteps<T>): Promise<T> {
  const signed = new Map<number, VerdictSignature>();
  const sign = async (choice: number) => {
    signed.set(choice, await steps.sign(choice));
  };
  if (steps.racing) {
    await Promise.all(Array.from({ length: steps.candidates }, (_, choice) => sign(choice)));
  } else {
    await sign(steps.choose());
  }
  for (;;) {
    const turn = await steps.inTurn<Turn<T>>((head) => {
      const earlier = steps.earlier();
      if (earlier !== undefined) return [{ done: earlier }, head];
      const choice = steps.choose();
      const signature = signed.get(choice);
      if (!signature) return [{ unsigned: choice }, head];
      const [done, next] = steps.sequence(choice, signature, head);
      return [{ done }, next];
    });
    if ("done" in turn) return turn.done;
    await sign(turn.unsigned);
  }
}

/** What sequencing an assessment writes to: the object's store, and the plans the next write sends. */
export interface AssessmentLedger {
  store: LedgerStore;
  commits: Pick<GroupCommit, "hold">;
}

/** An assessment sequenced by the commit that made it, with the plan it is written from. */
export interface SequencedAssessment {
  entry: StoredEntry;
  plan: PersistPlan;
}

/**
 * The section's write of a chosen verdict, from `head`: the `assessment.completed` entry under
 * the commit's keys, the write it is flushed from, and for an approved credential (the model's
 * verdict, choice 0) the spend with the consent's terms, in the same transaction.
 */
export function sequenceAssessment(
  ledger: AssessmentLedger,
  orgId: string,
  commit: AssessmentCommit,
  chosen: { choice: number; verdict: Verdict; signature: VerdictSignature; kid: string },
  head: Head | null,
): [SequencedAssessment, Head | null] {
  const { store } = ledger;
  const plan = assessmentPlan(commit, chosen.verdict, { ...chosen.signature, kid: chosen.kid });
  const { record } = plan;
  const subject = { type: "assessment", id: record.id };
  const digest = payloadDigest(record);
  const input = { type: "assessment.completed", actor: commit.actor, subject, digest };
  const [entry, next] = sequenceUnder(store, orgId, input, commit.once, head);
  const { sequence } = entry;
  store.setWrite(sequence, JSON.stringify(plan), Date.now());
  ledger.commits.hold(sequence, entry.hash, plan);
  if (commit.spend && chosen.choice === 0 && record.decision === "approve") {
    const { root, transaction, amount, currency, at } = commit.spend;
    store.addSpend(record.livemode, root, transaction, amount, currency, sequence, at);
    store.setConsentTerms(record.livemode, root, termsOf(commit.spend));
  }
  return [{ entry, plan }, next];
}
