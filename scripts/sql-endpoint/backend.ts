/** What every database backend of the endpoint understands, independent of HTTP. */

export type BackendName = "pglite" | "postgres";

export type IsolationLevel =
  | "ReadUncommitted"
  | "ReadCommitted"
  | "RepeatableRead"
  | "Serializable";

export interface SqlStatement {
  query: string;
  /** Already serialized by the driver: Postgres text input, or null. */
  params: (string | null)[];
}

export interface TransactionOptions {
  isolationLevel?: IsolationLevel;
  readOnly?: boolean;
  deferrable?: boolean;
}

export interface SqlRequest {
  /** Role to `SET LOCAL ROLE` to; null runs as the endpoint's own (owner) connection role. */
  role: string | null;
  statements: SqlStatement[];
  /** A `{queries: [...]}` body: answered as `{results: [...]}`. */
  batch: boolean;
  options: TransactionOptions;
}

export interface FieldDescription {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: string;
}

/** One statement's outcome; `rows` hold Postgres text output, left for the driver to parse. */
export interface StatementResult {
  command: string;
  rowCount: number | null;
  rows: (string | null)[][];
  fields: FieldDescription[];
}

export interface Backend {
  readonly name: BackendName;
  /** Runs the whole request as one transaction; `onStatement` fires before each statement. */
  run(request: SqlRequest, onStatement: () => void): Promise<StatementResult[]>;
  close(): Promise<void>;
}

/** The database cannot be reached at all (answered 503, unlike SQL errors which are 400). */
export class BackendUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BackendUnavailableError";
  }
}
