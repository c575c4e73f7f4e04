import { and, eq } from "drizzle-orm";
import { AuditVerifier, type VerifyReport as Report } from "#audit/verify";
import type { Tenant } from "../auth/tenant";
import { events } from "../db/schema";
import { ApiError } from "../errors";
import { newId } from "../lib/ids";
import type { IntegrityAlertData } from "../schemas/webhook-events";
import { signer } from "../signing/signer";
import { anchorNow } from "./ledger";
import { ledgerRecords } from "./ledger-reader";

interface Witness {
  tree_size: number;
  root_hash: string | null;
  entries_stored: boolean;
  checkpoint_stored: boolean;
}

/**
 * A failed verification raises one `audit.integrity_alert` per distinct break: verifying the
 * same broken rows again finds the same event instead of raising another.
 */
async function raiseAlert(tenant: Tenant, report: Report & { ledger: Witness }): Promise<string> {
  const broken = report.first_break;
  const invalid = report.checkpoints.first_invalid;
  const dedupeKey = `integrity:${broken?.sequence ?? "-"}:${broken?.reason ?? "-"}:${invalid?.tree_size ?? "-"}:${invalid?.reason ?? "-"}`;
  const data = {
    checked: report.checked,
    head: report.head,
    first_break: broken,
    first_invalid: invalid,
  } satisfies IntegrityAlertData;
  const [, found] = await tenant.batch(
    (db) => [
      db
        .insert(events)
        .values({ id: newId(), type: "audit.integrity_alert", data, dedupeKey })
        .onConflictDoNothing(),
      db
        .select({ id: events.id })
        .from(events)
        .where(and(eq(events.type, "audit.integrity_alert"), eq(events.dedupeKey, dedupeKey))),
    ],
    { webhooks: true },
  );
  const event = found[0];
  if (!event) throw new ApiError("internal_error");
  return event.id;
}

/**
 * Verifies the org's stored ledger against the ledger object's own signed head, raising an
 * integrity alert (once per distinct break) when it fails.
 */
export async function verifyLedger(tenant: Tenant) {
  const keys = (await signer(tenant.env)).keys;
  const who = await tenant.caller();
  // The ledger object is the witness Postgres cannot rewrite: it signs a checkpoint over its
  // own head first, and the stored rows must then reach that head and hold that checkpoint.
  const witness = await anchorNow(tenant.env, who.orgId);
  const verifier = new AuditVerifier(who.orgId, keys);
  let checkpointStored = witness === null;
  for await (const record of ledgerRecords(tenant)) {
    if (record.kind === "entry") {
      verifier.addEntry(record.entry);
    } else {
      await verifier.addCheckpoint(record.checkpoint);
      const cp = record.checkpoint;
      if (cp.tree_size === witness?.tree_size && cp.root_hash === witness.root_hash) {
        checkpointStored = true;
      }
    }
  }
  const rows = await verifier.finish();
  const entriesStored = (rows.head?.sequence ?? 0) >= (witness?.tree_size ?? 0);
  const ledger = {
    tree_size: witness?.tree_size ?? 0,
    root_hash: witness?.root_hash ?? null,
    entries_stored: entriesStored,
    checkpoint_stored: checkpointStored,
  };
  const report = { ...rows, ok: rows.ok && entriesStored && checkpointStored, ledger };
  const alert = report.ok
    ? null
    : { type: "audit.integrity_alert" as const, event_id: await raiseAlert(tenant, report) };
  return { ...report, alert };
}
