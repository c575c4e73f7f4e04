/**
 * Audit: verify the organization's ledger now (GET /v1/audit/verify: every hash, link and
 * checkpoint recomputed, and the first break if any), the signed checkpoints
 * (GET /v1/audit/checkpoints), and the export for offline checking (GET /v1/audit/export,
 * `npm run verify-audit`; docs/ledger.md).
 */
import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, download, useAction, useSettings } from "../api";
import { ErrorBanner } from "../components/error-banner";
import { type Column, Table, useKeyset } from "../components/table";
import { when } from "../format";

type Report = components["schemas"]["AuditVerifyReport"];
type Checkpoint = components["schemas"]["Checkpoint"];

const CHECKPOINT_COLUMNS: Column<Checkpoint>[] = [
  { header: "Tree size", cell: (row) => row.tree_size },
  { header: "Signed", cell: (row) => when(row.time) },
  { header: "Root hash", cell: (row) => <code class="hash">{row.root_hash}</code> },
  {
    header: "Consistency",
    cell: (row) =>
      row.previous_tree_size === 0
        ? "first checkpoint"
        : `from ${row.previous_tree_size} (${row.consistency_proof.length} hashes)`,
  },
];

export function AuditPage(_: { params: string[] }) {
  const { mode } = useSettings();
  const [report, setReport] = useState<Report>();
  const { busy: verifying, error: failure, run: runVerify } = useAction();
  const { busy: exporting, error: exportFailure, run: runExport } = useAction();
  const checkpoints = useKeyset<Checkpoint>(
    async (cursor) =>
      (
        await api.GET("/v1/audit/checkpoints", {
          params: { query: { limit: 10, ...(cursor ? { cursor } : {}) } },
        })
      ).data,
    [],
  );

  const verify = () =>
    runVerify(async () => {
      setReport((await api.GET("/v1/audit/verify")).data);
      // Verifying signs a checkpoint over the ledger's head first: the list gains it.
      checkpoints.reload();
    });

  const exportLedger = () =>
    runExport(async () => {
      const day = new Date().toISOString().slice(0, 10);
      await download("/v1/audit/export", `audit-export-${day}.jsonl`);
    });

  return (
    <>
      <h1>Audit</h1>
      <p class="muted">
        The audit trail is the organization's whole ledger, test and live events alike
        {mode === "test" ? " (the test-mode switch does not apply here)" : ""}.
      </p>
      <section class="panel" aria-labelledby="verify">
        <h2 id="verify">Verify the audit trail</h2>
        <p>
          Recomputes every entry's hash and link and every checkpoint's signature and proofs on the
          server, against the ledger's own signed head.
        </p>
        <button type="button" class="primary" onClick={verify} disabled={verifying}>
          {verifying ? "Verifying…" : "Verify now"}
        </button>
        <ErrorBanner failure={failure} />
        {report ? <VerifyReport report={report} /> : null}
      </section>

      <section class="panel" aria-labelledby="export">
        <h2 id="export">Export</h2>
        <p>
          Every entry and checkpoint as JSON Lines, with the keys to check them offline (
          <code>npm run verify-audit -- file.jsonl</code>).
        </p>
        <button type="button" onClick={exportLedger} disabled={exporting}>
          {exporting ? "Exporting…" : "Download export"}
        </button>
        <ErrorBanner failure={exportFailure} />
      </section>

      <h2>Checkpoints</h2>
      <Table
        caption="Signed checkpoints, newest first"
        columns={CHECKPOINT_COLUMNS}
        rowKey={(row) => String(row.tree_size)}
        keyset={checkpoints}
        empty="No checkpoint yet: the ledger signs one shortly after its first entries."
      />
    </>
  );
}

function VerifyReport({ report }: { report: Report }) {
  const broken = report.first_break;
  const invalid = report.checkpoints.first_invalid;
  return (
    <div class={report.ok ? "notice" : "error-banner"} role="status">
      <p>
        <strong>
          {report.ok ? "The audit trail verifies" : "The audit trail does NOT verify"}
        </strong>
      </p>
      <dl class="facts">
        <dt>Entries checked</dt>
        <dd>{report.checked}</dd>
        <dt>Head</dt>
        <dd>
          {report.head ? (
            <>
              sequence {report.head.sequence}, <code class="hash">{report.head.hash}</code>
            </>
          ) : (
            "empty ledger"
          )}
        </dd>
        <dt>Checkpoints checked</dt>
        <dd>
          {report.checkpoints.checked}
          {report.checkpoints.latest
            ? `, the latest at tree size ${report.checkpoints.latest.tree_size} (${when(report.checkpoints.latest.time)})`
            : ""}
        </dd>
        <dt>Ledger's signed head</dt>
        <dd>
          tree size {report.ledger.tree_size}; entries stored:{" "}
          {report.ledger.entries_stored ? "yes" : "NO"}; checkpoint stored:{" "}
          {report.ledger.checkpoint_stored ? "yes" : "NO"}
        </dd>
        {broken ? (
          <>
            <dt>First break</dt>
            <dd>
              sequence {broken.sequence}: {broken.reason} (expected <code>{broken.expected}</code>,
              found <code>{broken.actual}</code>)
            </dd>
          </>
        ) : null}
        {invalid ? (
          <>
            <dt>First invalid checkpoint</dt>
            <dd>
              tree size {invalid.tree_size}: {invalid.reason}
            </dd>
          </>
        ) : null}
        {report.alert ? (
          <>
            <dt>Alert</dt>
            <dd>
              {report.alert.type} (event <code>{report.alert.event_id}</code>)
            </dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}
