import type { Head } from "../ledger/ledger-store";
import type { GroupCommit } from "./group-commit";

/**
 * A critical section: sequences from `head` and writes what goes with it, synchronously, and
 * answers its result and the new head.
 */
export type Section<T> = (head: Head | null) => [T, Head | null];

/** A section waiting for the write in flight to return, and its caller's promise. */
interface Queued {
  section: Section<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The ledger object's critical sections and the chain head they move: the one place a
 * sequence is assigned. The head is a mirror of storage, read once at activation, and moves
 * only once the transaction that wrote it has committed.
 */
export class CriticalSections {
  private queued: Queued[] = [];

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly commits: () => GroupCommit,
    private current: Head | null,
  ) {}

  /** The chain head as committed: only a section moves it. */
  get head(): Head | null {
    return this.current;
  }

  /** Runs a section now, in a storage transaction of its own. */
  now<T>(section: Section<T>): T {
    const [value, next] = this.storage.transactionSync(() => section(this.current));
    this.current = next;
    return value;
  }

  /**
   * Runs a section whose caller waits for the group commit anyway. With no write to Postgres
   * in flight (and none queued before it) it runs now. Otherwise it waits for that write to
   * return and runs, with every section that queued meanwhile, in one transaction just before
   * the next write, which carries them all: one commit to the object's storage per batch
   * instead of one per caller. Waiting for its turn costs the caller nothing; a crash before
   * its turn loses a section that nothing was told of, nor wrote anywhere.
   */
  async inTurn<T>(section: Section<T>): Promise<T> {
    const commits = this.commits();
    if (!commits.writing && this.queued.length === 0) return this.now(section);
    const settled = new Promise<T>((resolve, reject) => {
      this.queued.push({ section, resolve: resolve as (value: unknown) => void, reject });
    });
    await commits.afterWrite();
    return settled;
  }

  /**
   * The first step of every write: the queued sections, in arrival order, in one transaction.
   * A section that throws rolls the whole batch back and fails every caller in it: sections
   * throw on no input (a duplicate is answered, not refused), so only a fault of the code or of
   * the storage can, and either leaves nothing half-written and the head where it was.
   */
  runQueued(): void {
    const queued = this.queued.splice(0);
    if (queued.length === 0) return;
    let values: unknown[];
    try {
      values = this.now((from) => {
        let head = from;
        const answers = queued.map(({ section }) => {
          const [value, next] = section(head);
          head = next;
          return value;
        });
        return [answers, head];
      });
    } catch (error) {
      for (const { reject } of queued) reject(error);
      return;
    }
    queued.forEach(({ resolve }, i) => {
      resolve(values[i]);
    });
  }
}
