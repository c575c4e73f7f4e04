import type { components } from "@agent-risk/client";
import { useState } from "preact/hooks";
import { api, type Failure, failureOf, useApiCall } from "../api";
import { ErrorBanner } from "../components/error-banner";
import { Field } from "../components/field";
import { CaughtView, PrCurve, type RiskModel } from "../components/model-charts";
import { Table, useKeyset } from "../components/table";
import { TrainForm, TrainingProgress } from "../components/train-model";
import { when } from "../format";
import { href } from "../router";
import {
  batchSize,
  CSV_COLUMNS,
  isRecordFaults,
  type ParsedFile,
  parseHistoryFile,
  type RowError,
  rowErrors,
} from "./history-file";
import { modelName, modeWord } from "./models";

type HistoryImport = components["schemas"]["HistoryImport"];

interface Upload {
  total: number;
  done: number;
  inserted: number;
  unchanged: number;
  calls: number;
  rejected: RowError[];
  conflicts: RowError[];
  finished: boolean;
  failure?: Failure;
}

/** Re-sends of one batch after the API named bad records (it stores a call whole or not). */
const MAX_RESENDS = 3;

/**
 * Sends the file's records in batches. A call with bad records stores nothing (400, or 409 for
 * ids stored with other content) and names each by index: those rows are reported and the rest
 * of the batch is sent again, so one bad row does not hold back its thousand neighbours.
 */
async function uploadRecords(file: ParsedFile, onProgress: (upload: Upload) => void) {
  const size = batchSize(file.records.length);
  const state: Upload = {
    total: file.records.length,
    done: 0,
    inserted: 0,
    unchanged: 0,
    calls: 0,
    rejected: [...file.errors],
    conflicts: [],
    finished: false,
  };
  onProgress({ ...state });
  for (let start = 0; start < file.records.length; start += size) {
    let sent = Array.from(
      { length: Math.min(size, file.records.length - start) },
      (_, k) => start + k,
    );
    for (let attempt = 0; sent.length > 0; attempt++) {
      state.calls++;
      try {
        const { data } = await api.POST("/v1/history/transactions", {
          body: { records: sent.map((i) => file.records[i]) } as never,
        });
        state.inserted += data.inserted;
        state.unchanged += data.unchanged;
        break;
      } catch (error) {
        const failure = failureOf(error);
        const named =
          (failure.status === 400 || failure.status === 409) && isRecordFaults(failure.details);
        if (!named || attempt >= MAX_RESENDS) {
          state.failure = failure;
          state.finished = true;
          onProgress({ ...state });
          return;
        }
        const faults = failure.details as Parameters<typeof rowErrors>[0];
        const errors = rowErrors(faults, sent, file.rows);
        if (failure.status === 409) state.conflicts.push(...errors);
        else state.rejected.push(...errors);
        const bad = new Set(faults.map((f) => f.index));
        sent = sent.filter((_, k) => !bad.has(k));
      }
    }
    state.done = Math.min(file.records.length, start + size);
    onProgress({ ...state });
  }
  state.finished = true;
  state.rejected.sort((a, b) => a.row - b.row);
  state.conflicts.sort((a, b) => a.row - b.row);
  onProgress({ ...state });
}

/** `#/retro-study`: upload a history, train on it, and read what would have been caught. */
export function RetroStudyPage(_: { params: string[] }) {
  const [round, setRound] = useState(0);
  return (
    <>
      <h1>Retro study</h1>
      <p>
        Here are months of payments and their chargebacks: what would the model have caught, and how
        many good payments would it have stopped? Upload the history ({modeWord().toLowerCase()}{" "}
        mode), train a model as of a day of it, and read the answer on the later payments it did not
        train on (<a href="/docs#tag/history">the import in the API reference</a>).
      </p>
      <UploadHistory onUploaded={() => setRound((n) => n + 1)} />
      <Imports round={round} />
      <WhatWouldHaveBeenCaught />
    </>
  );
}

function UploadHistory({ onUploaded }: { onUploaded: () => void }) {
  const [file, setFile] = useState<{ name: string; parsed: ParsedFile } | null>(null);
  const [readFailure, setReadFailure] = useState<string | null>(null);
  const [upload, setUpload] = useState<Upload | null>(null);
  const [dragging, setDragging] = useState(false);
  const busy = upload !== null && !upload.finished;

  const choose = async (chosen: File | undefined) => {
    if (!chosen || busy) return;
    setUpload(null);
    setReadFailure(null);
    try {
      setFile({ name: chosen.name, parsed: parseHistoryFile(chosen.name, await chosen.text()) });
    } catch (error) {
      setFile(null);
      setReadFailure(error instanceof Error ? error.message : String(error));
    }
  };
  const start = async () => {
    if (!file) return;
    await uploadRecords(file.parsed, setUpload);
    onUploaded();
  };

  return (
    <section class="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload history</h2>
      <details class="numbers">
        <summary>The file's format</summary>
        <p>
          <strong>NDJSON</strong> (<code>.ndjson</code>, <code>.jsonl</code>): one record a line, as{" "}
          <code>POST /v1/history/transactions</code> takes it, e.g.{" "}
          <code>
            {
              '{"id":"txn_1042","occurred_at":"2026-09-14T10:21:07Z","agent_id":"…","payee":{"id":"merchant_7731"},"amount":{"amount":4599,"currency":"USD"},"label":{"label":"chargeback","labeled_at":"2026-10-02T08:00:00Z"}}'
            }
          </code>
        </p>
        <p>
          <strong>CSV</strong> (<code>.csv</code>): a header row naming the columns{" "}
          <code>{CSV_COLUMNS.join(",")}</code> (any order; <code>payee_name</code>,{" "}
          <code>kind</code>, <code>label</code> and <code>labeled_at</code> may be left out or
          empty). <code>amount</code> is an integer in minor units (cents); <code>label</code> is
          fraud, chargeback, legitimate or refund, with <code>labeled_at</code> the time the outcome
          became known. Times are ISO 8601 with an offset.
        </p>
        <p>
          The agents must be registered first (<a href={href("agents")}>Agents</a>). A record is
          stored once per id: sending a file again stores nothing twice. Rows are counted from 1,
          the CSV's header being row 1.
        </p>
      </details>
      <fieldset
        class={dragging ? "drop-zone dragging" : "drop-zone"}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          // The input no longer names the file in hand: the dropped one replaces it.
          const input = document.getElementById("history-file") as HTMLInputElement | null;
          if (input) input.value = "";
          void choose(event.dataTransfer?.files[0]);
        }}
      >
        <legend>Drop a CSV or NDJSON file here, or choose one</legend>
        <Field label="History file (CSV or NDJSON)" id="history-file">
          {(id) => (
            <input
              id={id}
              type="file"
              accept=".csv,.ndjson,.jsonl,.json,text/csv,application/x-ndjson"
              disabled={busy}
              onChange={(event) =>
                void choose((event.currentTarget as HTMLInputElement).files?.[0])
              }
            />
          )}
        </Field>
      </fieldset>
      {readFailure ? (
        <p class="error-banner" role="alert">
          The file could not be read: {readFailure}
        </p>
      ) : null}
      {file ? (
        file.parsed.fatal ? (
          <p class="error-banner" role="alert">
            {file.name} cannot be uploaded: {file.parsed.fatal}.
          </p>
        ) : (
          <>
            <p>
              {file.name}: {file.parsed.records.length.toLocaleString("en")} records (
              {file.parsed.format === "csv" ? "CSV" : "NDJSON"})
              {file.parsed.errors.length > 0
                ? `, ${file.parsed.errors.length} rows unreadable`
                : ""}
              ; sent {batchSize(file.parsed.records.length).toLocaleString("en")} a call.
            </p>
            <button
              type="button"
              disabled={busy || file.parsed.records.length === 0}
              onClick={() => void start()}
            >
              Upload {file.parsed.records.length.toLocaleString("en")} records
            </button>
          </>
        )
      ) : null}
      {upload ? <UploadReport upload={upload} /> : null}
    </section>
  );
}

const rows = (n: number) => `${n.toLocaleString("en")} ${n === 1 ? "row" : "rows"}`;

function UploadReport({ upload }: { upload: Upload }) {
  const faults = [
    ...upload.rejected.map((e) => ({ ...e, kind: "rejected" })),
    ...upload.conflicts.map((e) => ({ ...e, kind: "conflict" })),
  ].sort((a, b) => a.row - b.row);
  return (
    <div class="upload-report">
      <label for="upload-progress">
        {upload.finished
          ? `Upload finished: ${upload.done.toLocaleString("en")} of ${upload.total.toLocaleString("en")} records sent`
          : `Uploading: ${upload.done.toLocaleString("en")} of ${upload.total.toLocaleString("en")} records`}
      </label>
      <progress id="upload-progress" max={Math.max(1, upload.total)} value={upload.done} />
      <ErrorBanner failure={upload.failure} />
      {upload.finished ? (
        <p role="status">
          {upload.inserted.toLocaleString("en")} stored, {upload.unchanged.toLocaleString("en")}{" "}
          already stored unchanged, {rows(upload.rejected.length)} rejected,{" "}
          {rows(upload.conflicts.length)} in conflict with a stored record ({upload.calls}{" "}
          {upload.calls === 1 ? "call" : "calls"}).
        </p>
      ) : null}
      {faults.length > 0 ? (
        <div class="table-scroll">
          <table class="stack">
            <caption>Rows not stored</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Id</th>
                <th scope="col">Field</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {faults.slice(0, 500).map((e) => (
                <tr key={`${e.row}:${e.path}:${e.message}`}>
                  <td data-label="Row">Row {e.row}</td>
                  <td data-label="Id">{e.id ?? "—"}</td>
                  <td data-label="Field">{e.path ? <code>{e.path}</code> : "—"}</td>
                  <td data-label="Problem">
                    {e.kind === "conflict" ? "conflict: " : ""}
                    {e.message}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {faults.length > 500 ? <p class="muted">The first 500 of {faults.length}.</p> : null}
        </div>
      ) : null}
    </div>
  );
}

function Imports({ round }: { round: number }) {
  const keyset = useKeyset(
    async (cursor) =>
      (
        await api.GET("/v1/history/imports", {
          params: { query: { limit: 10, ...(cursor ? { cursor } : {}) } },
        })
      ).data,
    [round],
  );
  return (
    <section aria-labelledby="imports-heading">
      <h2 id="imports-heading">Imports</h2>
      <Table<HistoryImport>
        caption="History imports, newest first (one per call)"
        keyset={keyset}
        rowKey={(i) => i.id}
        empty="No history imported yet."
        columns={[
          { header: "When", cell: (i) => when(i.created) },
          { header: "Records", cell: (i) => i.records },
          { header: "Stored", cell: (i) => i.inserted },
          { header: "Unchanged", cell: (i) => i.unchanged },
          {
            header: "Labels",
            cell: (i) =>
              Object.entries(i.labels)
                .filter(([, n]) => n > 0)
                .map(([label, n]) => `${n} ${label}`)
                .join(", ") || "—",
          },
          {
            header: "Payments from – to",
            cell: (i) => `${when(i.first_occurred_at)} – ${when(i.last_occurred_at)}`,
          },
        ]}
      />
    </section>
  );
}

/** Pick a trained model, or train one on the history, and show what it would have caught. */
function WhatWouldHaveBeenCaught() {
  const [round, setRound] = useState(0);
  const models = useApiCall(
    async () => (await api.GET("/v1/risk-models", { params: { query: { limit: 100 } } })).data.data,
    [round],
  );
  const [picked, setPicked] = useState<string>("");
  const [training, setTraining] = useState<RiskModel | null>(null);
  const trained = (models.data ?? []).filter((m) => m.metrics !== null);
  const model = trained.find((m) => m.id === picked) ?? null;
  return (
    <section class="panel" aria-labelledby="caught-heading">
      <h2 id="caught-heading">What would have been caught</h2>
      <h3>Train a model on the history</h3>
      <p class="muted">
        As of a day of the history: it trains on what was known then and is measured on the latest
        quarter of the payments old enough to have their label.
      </p>
      <TrainForm onStarted={setTraining} />
      {training ? (
        <TrainingProgress
          key={training.id}
          model={training}
          onSettled={(done) => {
            setRound((n) => n + 1);
            if (done.metrics) setPicked(done.id);
          }}
        />
      ) : null}
      <h3>Or pick a trained model</h3>
      <ErrorBanner failure={models.failure} />
      <Field label="Model" id="caught-model">
        {(id) => (
          <select
            id={id}
            value={picked}
            onChange={(event) => setPicked((event.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">Choose a model</option>
            {trained.map((m) => (
              <option key={m.id} value={m.id}>
                {modelName(m)} ({m.status}, as of {when(m.as_of)})
              </option>
            ))}
          </select>
        )}
      </Field>
      {model?.metrics ? (
        model.metrics.caught ? (
          <>
            <p>
              <a href={href(`models/${model.id}`)}>Open {modelName(model)}</a> for its curves,
              calibration and feature importances, and to activate it.
            </p>
            <CaughtView metrics={model.metrics} />
            <PrCurve metrics={model.metrics} />
          </>
        ) : (
          <p class="notice" role="note">
            {modelName(model)} was trained before the service kept what each threshold would have
            caught: train a model again to see it.
          </p>
        )
      ) : null}
    </section>
  );
}
