import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { logIdFor } from "#audit/checkpoint";
import {
  formatCheckpointLine,
  formatEndLine,
  formatEntryLine,
  formatHeaderLine,
} from "#audit/export-format";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses } from "../http/schemas";
import { ledgerRecords } from "../ledger/ledger-reader";
import { signer } from "../signing/signer";

const tags = ["Audit"];

const exportRoute = createRoute(
  guarded(
    "audit:read",
    {
      method: "get",
      path: "/v1/audit/export",
      tags,
      summary: "All entries and checkpoints as JSON Lines, with the keys to check them",
      responses: {
        200: {
          description: "agent-risk-audit-export/1 (see docs/ledger.md), streamed",
          content: { "application/x-ndjson": { schema: z.string() } },
        },
        ...errorResponses(401, 403, 503),
      },
    },
    { rateLimit: "expensive" },
  ),
);

export function registerAuditExport(app: OpenAPIHono<AppEnv>) {
  app.openapi(exportRoute, async (c) => {
    const keys = (await signer(c.env)).keys;
    const who = await c.var.tenant.caller();
    const records = ledgerRecords(c.var.tenant);
    const encoder = new TextEncoder();
    const line = (text: string) => encoder.encode(`${text}\n`);
    let entries = 0;
    let checkpoints = 0;
    // Pull-based: the next page is read only when the client has taken the last one, so memory
    // stays constant and a slow reader slows the export, not the service.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const header = { org_id: who.orgId, log_id: logIdFor(who.orgId), keys };
        controller.enqueue(
          line(formatHeaderLine({ ...header, exported_at: new Date().toISOString() })),
        );
      },
      async pull(controller) {
        const next = await records.next();
        if (next.done) {
          controller.enqueue(line(formatEndLine(entries, checkpoints)));
          controller.close();
        } else if (next.value.kind === "entry") {
          entries++;
          controller.enqueue(line(formatEntryLine(next.value.entry)));
        } else {
          checkpoints++;
          controller.enqueue(line(formatCheckpointLine(next.value.checkpoint)));
        }
      },
      async cancel() {
        await records.return(undefined);
      },
    });
    return c.body(stream, 200, {
      "content-type": "application/x-ndjson",
      "content-disposition": `attachment; filename="audit-${who.orgId}.jsonl"`,
    }) as never;
  });
}
