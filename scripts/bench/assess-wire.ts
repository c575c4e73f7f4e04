/**
 * Sorts every request the SQL endpoint receives into what sent it, by its statements (read
 * through sql-tap.ts, as ledger-wire.ts does):
 *
 * - `persist`: the assess pipeline's write transaction (it stores an assessment: calls the
 *   database function `persist_assessment`, or inserts into `assessments` itself);
 * - `flush`: the ledger Durable Object writing entries (its alarm re-sends, idempotently,
 *   the entries the pipeline already wrote), with or without checkpoints;
 * - `checkpoint`: the ledger Durable Object writing checkpoints only;
 * - `read`: everything else (the assess pipeline's context read, which also authenticates).
 */
import { insertedRows, type Statement, statementsOf, tapSqlRequests } from "./sql-tap.ts";

export interface Traffic {
  read: number;
  persist: number;
  flush: number;
  checkpoint: number;
  /** Entry rows the DO's flushes carried. */
  flushedRows: number;
}

const none = (): Traffic => ({ read: 0, persist: 0, flush: 0, checkpoint: 0, flushedRows: 0 });

export class TrafficWatch {
  #counts = none();
  readonly close: () => void;

  constructor(port: number) {
    this.close = tapSqlRequests(port, (body) => this.#classify(body));
  }

  /** The counts since the last call. */
  take(): Traffic {
    const counts = this.#counts;
    this.#counts = none();
    return counts;
  }

  #classify(body: string): void {
    let statements: Statement[] = [];
    try {
      statements = statementsOf(body);
    } catch {
      // unparsable: the endpoint answers it with an error; counted as a read
    }
    // Anywhere in the statement: the pipeline inserts its assessment inside a CTE.
    const inserts = (table: string) =>
      statements.filter((s) =>
        new RegExp(`\\binsert\\s+into\\s+"?${table}"?[\\s(]`, "i").test(String(s.query ?? "")),
      );
    const entries = inserts("audit_entries");
    const stores = statements.some((s) => /\bpersist_assessment\s*\(/i.test(String(s.query ?? "")));
    if (stores || inserts("assessments").length > 0) this.#counts.persist += 1;
    else if (entries.length > 0) {
      this.#counts.flush += 1;
      this.#counts.flushedRows += entries.reduce(
        (sum, s) => sum + insertedRows(String(s.query), s.params),
        0,
      );
    } else if (inserts("audit_checkpoints").length > 0) this.#counts.checkpoint += 1;
    else this.#counts.read += 1;
  }
}
