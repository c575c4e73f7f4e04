import { z } from "@hono/zod-openapi";

const Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const Party = z.object({ type: z.string(), id: z.string() }).openapi("Party");

export const AuditEntry = z
  .object({
    object: z.literal("audit_entry"),
    id: z.string(),
    sequence: z.number().int(),
    type: z.string().openapi({ example: "api_key.created" }),
    actor: Party,
    // A union, not .nullable(): the generator renders a nullable reference as an allOf that
    // no null satisfies.
    subject: z.union([Party, z.null()]),
    digest: z.string().openapi({ description: "`sha256:` + hex of the RFC 8785 payload" }),
    time: z.string(),
    prev_hash: Hex,
    hash: Hex.openapi({ description: "SHA-256(prev_hash || JCS(entry)), see docs/ledger.md" }),
    leaf_hash: Hex.openapi({ description: "RFC 6962 leaf hash of `hash`" }),
    status: z.enum(["pending", "anchored"]),
  })
  .openapi("AuditEntry");

export const Checkpoint = z
  .object({
    object: z.literal("checkpoint"),
    log_id: z.string(),
    tree_size: z.number().int(),
    root_hash: Hex,
    time: z.string(),
    note: z.string().openapi({ description: "C2SP tlog-checkpoint body" }),
    jws: z.string().openapi({ description: "Compact JWS (EdDSA) whose payload is `note`" }),
    previous_tree_size: z.number().int(),
    consistency_proof: z.array(Hex),
  })
  .openapi("Checkpoint");

const CheckpointRecord = Checkpoint.omit({ object: true });

export const AuditProof = z
  .object({
    object: z.literal("audit_proof"),
    entry_id: z.string(),
    sequence: z.number().int(),
    leaf_hash: Hex,
    status: z.enum(["pending", "anchored"]),
    leaf_index: z.number().int(),
    tree_size: z.number().int().nullable(),
    audit_path: z.array(Hex).nullable(),
    checkpoint: CheckpointRecord.nullable(),
  })
  .openapi("AuditProof");

export const VerifyReport = z
  .object({
    ok: z.boolean(),
    checked: z.number().int(),
    head: z.object({ sequence: z.number().int(), hash: Hex }).nullable(),
    first_break: z
      .object({
        sequence: z.number().int(),
        reason: z.enum(["sequence_gap", "link_mismatch", "hash_mismatch"]),
        expected: z.string(),
        actual: z.string(),
      })
      .nullable(),
    checkpoints: z.object({
      checked: z.number().int(),
      latest: z
        .object({ tree_size: z.number().int(), root_hash: Hex, time: z.string() })
        .nullable(),
      first_invalid: z
        .object({
          tree_size: z.number().int(),
          reason: z.string(),
          expected: z.string().optional(),
          actual: z.string().optional(),
        })
        .nullable(),
    }),
    ledger: z
      .object({
        tree_size: z.number().int(),
        root_hash: Hex.nullable(),
        entries_stored: z.boolean(),
        checkpoint_stored: z.boolean(),
      })
      .openapi({
        description:
          "The ledger object's own signed head, checked against the stored rows: it catches " +
          "deleted newest entries and deleted checkpoints, which rows alone cannot show",
      }),
    alert: z
      .object({ type: z.literal("audit.integrity_alert"), event_id: z.string() })
      .nullable()
      .openapi({ description: "The integrity alert recorded for a failed verification" }),
  })
  .openapi("AuditVerifyReport");
