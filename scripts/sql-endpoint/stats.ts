/** Counters that tests and benchmarks read to count database round trips. */
export interface SqlEndpointStats {
  /** HTTP POSTs to /sql. */
  requests: number;
  /** SQL statements sent on behalf of clients, each batch member included. */
  statements: number;
  /** Requests carrying `{queries: [...]}`. */
  batches: number;
  /** Requests to /sql not answered 200. */
  errors: number;
  /** Bytes of the /sql requests' bodies, and of their answers' bodies: what crosses the wire. */
  bytesIn: number;
  bytesOut: number;
}

export function emptyStats(): SqlEndpointStats {
  return { requests: 0, statements: 0, batches: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
}
