/**
 * `npm run verify-audit -- [--jwks <jwks.json>] <export.jsonl>`: verifies an audit export
 * offline: a thin wrapper over `verifyAuditExport` of @agent-risk/client/audit, the same code
 * the service's verification endpoint runs (one copy, packages/client/src/audit).
 *
 * stdout: the VerifyReport as pretty JSON, and nothing else. stderr: a one-line verdict.
 * Exit 0 when ok; 1 when not ok, truncated or not an export; 2 on usage or I/O errors.
 * No network, no database: `--jwks` takes a key set you fetched yourself from the service's
 * /.well-known/jwks.json; without it the keys in the export's own header are trusted.
 */
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import {
  ExportFormatError,
  type VerificationKey,
  type VerifyReport,
  verifyAuditExport,
} from "../packages/client/src/audit/index.ts";

const USAGE = "usage: npm run verify-audit -- [--jwks <jwks.json>] <export.jsonl>";

function exit(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function verdict(report: VerifyReport, truncated: boolean): string {
  const problems: string[] = [];
  if (truncated) problems.push("export truncated (no end line, or its counts disagree)");
  const b = report.first_break;
  if (b) problems.push(`chain broken at sequence ${b.sequence}: ${b.reason}`);
  const c = report.checkpoints.first_invalid;
  if (c) problems.push(`checkpoint at tree size ${c.tree_size} invalid: ${c.reason}`);
  const latest = report.checkpoints.latest;
  const anchored = latest
    ? `latest valid checkpoint at tree size ${latest.tree_size}`
    : "no valid checkpoint";
  const summary = `${report.checked} entries, ${report.checkpoints.checked} checkpoints; ${anchored}`;
  return report.ok && !truncated ? `OK: ${summary}` : `FAIL: ${problems.join("; ")} (${summary})`;
}

async function readKeys(path: string): Promise<VerificationKey[]> {
  const parsed = JSON.parse(await readFile(path, "utf8")) as { keys?: unknown } | unknown[];
  const keys = Array.isArray(parsed) ? parsed : parsed.keys;
  if (!Array.isArray(keys)) throw new Error(`${path}: not a JWK set`);
  return keys as VerificationKey[];
}

async function main(): Promise<void> {
  let values: { jwks?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      options: { jwks: { type: "string" } },
      allowPositionals: true,
    }));
  } catch (error) {
    exit(2, `${(error as Error).message}\n${USAGE}`);
  }
  const [path, ...extra] = positionals;
  if (!path || extra.length > 0) exit(2, USAGE);

  let keys: VerificationKey[] | undefined;
  try {
    keys = values.jwks ? await readKeys(values.jwks) : undefined;
  } catch (error) {
    exit(2, `cannot read --jwks: ${(error as Error).message}`);
  }

  const stream = createReadStream(path);
  try {
    await new Promise((resolve, reject) => stream.once("open", resolve).once("error", reject));
  } catch (error) {
    exit(2, `cannot read ${path}: ${(error as Error).message}`);
  }

  try {
    const { report, truncated } = await verifyAuditExport(stream, keys ? { jwks: keys } : {});
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`${verdict(report, truncated)}\n`);
    process.exitCode = report.ok && !truncated ? 0 : 1;
  } catch (error) {
    if (error instanceof ExportFormatError)
      exit(1, `FAIL: not a valid audit export, ${error.message}`);
    // A read error after opening (or bytes that are not UTF-8) surfaces from the stream.
    exit(2, `verification failed to run: ${(error as Error).message}`);
  }
}

await main();
