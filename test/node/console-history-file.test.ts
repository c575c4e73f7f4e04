import { describe, expect, it } from "vitest";
import {
  batchSize,
  csvRecords,
  isRecordFaults,
  parseHistoryFile,
  rowErrors,
} from "../../console/src/pages/history-file";

// The retro study page's reading of a history file (console/src/pages/history-file.ts): what
// it sends to POST /v1/history/transactions and from which row of the file each record came.

describe("a history file", () => {
  it("reads a CSV with the documented header as the API's records, each with its row", () => {
    const csv = [
      "id,occurred_at,agent_id,payee_id,payee_name,amount,currency,kind,label,labeled_at",
      "t1,2026-09-14T10:21:07Z,a1,m1,Nimbus Books,4599,USD,,chargeback,2026-10-02T08:00:00Z",
      "",
      't2,2026-09-15T10:00:00Z,a1,m2,"Books, ""used""",12.5,eur,payment,,',
    ].join("\r\n");
    const file = parseHistoryFile("history.csv", csv);
    expect(file).toEqual({
      format: "csv",
      fatal: null,
      errors: [],
      rows: [2, 4],
      records: [
        {
          id: "t1",
          occurred_at: "2026-09-14T10:21:07Z",
          agent_id: "a1",
          payee: { id: "m1", name: "Nimbus Books" },
          amount: { amount: 4599, currency: "USD" },
          label: { label: "chargeback", labeled_at: "2026-10-02T08:00:00Z" },
        },
        {
          // A non-integer amount is sent as it is, for the API to name.
          id: "t2",
          occurred_at: "2026-09-15T10:00:00Z",
          agent_id: "a1",
          payee: { id: "m2", name: 'Books, "used"' },
          amount: { amount: "12.5", currency: "eur" },
          kind: "payment",
        },
      ],
    });
  });

  it("counts rows by the line a quoted field with a line break starts on", () => {
    expect(csvRecords('a,b\n"x\ny",1\nz,2')).toEqual([
      { line: 1, fields: ["a", "b"] },
      { line: 2, fields: ["x\ny", "1"] },
      { line: 4, fields: ["z", "2"] },
    ]);
  });

  it("accepts the record's dotted names as headers, and refuses unknown columns", () => {
    const dotted = parseHistoryFile(
      "h.csv",
      "id,occurred_at,agent_id,payee.id,amount.amount,amount.currency\nt,2026-01-01T00:00:00Z,a,p,1,USD\n",
    );
    expect(dotted.records[0]).toMatchObject({ payee: { id: "p" }, amount: { amount: 1 } });
    const unknown = parseHistoryFile("h.csv", "id,when\nt,now\n");
    expect(unknown.fatal).toBe(
      'unknown column "when" in the header row: the columns are id, occurred_at, agent_id, ' +
        "payee_id, payee_name, amount, currency, kind, label, labeled_at",
    );
    expect(unknown.records).toEqual([]);
  });

  it("reports a CSV row of the wrong width without sending it", () => {
    const file = parseHistoryFile("h.csv", "id,occurred_at\nt1,x\nt2,y,z\n");
    expect(file.rows).toEqual([2]);
    expect(file.errors).toEqual([
      { row: 3, id: "t2", path: "", message: "3 fields where the header has 2" },
    ]);
  });

  it("reads NDJSON line by line, skipping blank lines and reporting lines that are not JSON", () => {
    const file = parseHistoryFile("h.ndjson", '{"id":"a"}\n\n{oops\n{"id":"b"}\n');
    expect(file.records).toEqual([{ id: "a" }, { id: "b" }]);
    expect(file.rows).toEqual([1, 4]);
    expect(file.errors).toHaveLength(1);
    expect(file.errors[0]).toMatchObject({ row: 3, id: null });
    expect(file.errors[0]?.message).toMatch(/^not JSON: /);
    // Without a telling extension, an object on the first line is NDJSON.
    expect(parseHistoryFile("export.txt", '{"id":"a"}').format).toBe("ndjson");
  });

  it("maps the API's faults of a call back to the file's rows", () => {
    // The call sent records 3, 5 and 9 of the file (rows 4, 7 and 12).
    const rows = [1, 2, 3, 4, 5, 7, 8, 9, 10, 12];
    const faults = [
      { index: 1, id: "t5", path: "records.1.amount.currency", message: "3 letters" },
      { index: 2, id: null, path: "records.2", message: "not JSON", code: "invalid_json" },
    ];
    expect(isRecordFaults(faults)).toBe(true);
    expect(isRecordFaults([{ path: "records", message: "too big" }])).toBe(false);
    expect(rowErrors(faults, [3, 5, 9], rows)).toEqual([
      { row: 7, id: "t5", path: "amount.currency", message: "3 letters" },
      { row: 12, id: null, path: "", message: "not JSON" },
    ]);
  });

  it("sends 1,000 records a call until that takes more than 30 calls, at most 10,000", () => {
    expect(batchSize(1_800)).toBe(1_000);
    expect(batchSize(30_000)).toBe(1_000);
    expect(batchSize(60_000)).toBe(2_000);
    expect(batchSize(1_000_000)).toBe(10_000);
  });
});
