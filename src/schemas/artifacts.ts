import { z } from "@hono/zod-openapi";
import { Checkpoint } from "./audit";
import { Metadata, PageQuery, storableText } from "./common";

export const artifactTags = ["Artifacts"];

/** The `iss` of every artifact receipt. */
export const RECEIPT_ISSUER = "agent-risk";
export const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/** `sha256:` and 64 lowercase hex digits: the one way a digest is written. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** A compact JWS as far as its shape goes: three base64url parts. */
export const COMPACT_JWS_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** What a receipt says; anything else in a token that verifies is not a receipt of ours. */
export const ReceiptClaims = z
  .object({
    iss: z.literal(RECEIPT_ISSUER),
    sub: z.uuid().openapi({ description: "The artifact id" }),
    org: z.uuid(),
    livemode: z.boolean(),
    digest: z.string().regex(DIGEST_PATTERN),
    iat: z.number().int(),
    registered_at: z.string(),
    log_id: z.string().regex(/^[0-9a-f]{32}$/),
    entry: z.object({
      id: z.uuid(),
      sequence: z.number().int().min(1),
      hash: Hex64,
      leaf_hash: Hex64,
    }),
  })
  .strict()
  .openapi("ArtifactReceiptClaims");
export type ReceiptClaims = z.infer<typeof ReceiptClaims>;

/** A digest exactly as the service writes it; `SHA256:` or uppercase hex is refused, not fixed. */
export const Digest = z
  .string()
  .regex(DIGEST_PATTERN, "must be sha256: followed by 64 lowercase hex digits")
  .openapi({
    description: "`sha256:` and the 64 lowercase hex digits of the file's SHA-256",
    example: `sha256:${"9f".repeat(32)}`,
  });

/** RFC 6838 `type/subtype` (restricted names), without parameters. */
const MediaType = z
  .string()
  .max(255)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/,
    "must be an RFC 6838 type/subtype without parameters",
  )
  .openapi({ example: "application/pdf" });

export const RegisterArtifact = z
  .object({
    digest: Digest,
    name: storableText(500)
      .min(1)
      .openapi({ description: "The caller's name for the file", example: "contract-v3.pdf" }),
    media_type: MediaType.optional(),
    size_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .openapi("RegisterArtifactRequest");

export const Audit = z
  .object({ entry_id: z.string(), sequence: z.number().int() })
  .openapi({ description: "The `artifact.registered` ledger entry" });

export const Artifact = z
  .object({
    object: z.literal("artifact"),
    id: z.string(),
    digest: z.string(),
    name: z.string(),
    media_type: z.string().nullable(),
    size_bytes: z.number().int().nullable(),
    metadata: z.record(z.string(), z.string()),
    livemode: z.boolean(),
    created: z.string(),
    receipt: z.string().openapi({
      description: "Compact JWS (EdDSA, `typ` artifact-receipt+jwt), see docs/artifacts.md",
    }),
    audit: Audit,
  })
  .openapi("Artifact");

/** Where an entry stands in its log: the inclusion proof against the newest signed checkpoint. */
export const Anchor = z
  .object({
    status: z.enum(["pending", "anchored"]),
    log_id: z.string(),
    leaf_hash: Hex64,
    leaf_index: z.number().int(),
    tree_size: z.number().int().nullable(),
    audit_path: z.array(Hex64).nullable(),
    checkpoint: Checkpoint.omit({ object: true }).nullable(),
  })
  .openapi("ArtifactAnchor");

export const ArtifactWithState = Artifact.extend({
  receipt_valid: z.boolean().openapi({
    description:
      "The stored receipt's signature verifies under the currently published key set, it is " +
      "an artifact receipt, and its claims name this artifact (`sub`), its digest, its org and " +
      "its mode (`livemode`)",
  }),
  anchor: Anchor,
}).openapi("ArtifactWithState");

/** Strict: an unknown parameter (a typo such as `digets`) is a 400 naming it, never ignored. */
export const ListArtifactsQuery = PageQuery.extend({ digest: Digest.optional() }).strict();

/** Strict: an unknown parameter (a typo such as `digets`) is a 400 naming it, never ignored. */
export const VerifyArtifactQuery = z.strictObject({
  receipt: z
    .string()
    .max(4096)
    .regex(COMPACT_JWS_PATTERN, "must be a compact JWS")
    .optional()
    .openapi({ description: "The receipt as returned at registration" }),
  digest: Digest.optional().openapi({
    description:
      "With a receipt: must equal the signed digest. Alone: is this digest registered (live)?",
  }),
});

const Reason = z.object({
  code: z.enum([
    "malformed_receipt",
    "unknown_key",
    "signature_invalid",
    "not_a_receipt",
    "digest_mismatch",
    "signed_after_retirement",
    "entry_mismatch",
    "not_found",
    "digest_not_registered",
  ]),
  message: z.string(),
});

export const ArtifactVerification = z
  .object({
    object: z.literal("artifact_verification"),
    valid: z
      .boolean()
      .nullable()
      .openapi({
        description:
          "With a receipt: the verdict (true exactly when `reasons` is empty). With a digest " +
          "alone: always null, the answer is `digest.registered`",
      }),
    reasons: z.array(Reason),
    receipt: z
      .object({
        signature_valid: z.boolean(),
        kid: z.string().nullable(),
        key_status: z.enum(["current", "retired", "unknown"]),
        claims: ReceiptClaims.nullable(),
      })
      .nullable(),
    digest: z
      .object({
        value: z.string(),
        matches: z.boolean().nullable().openapi({
          description: "With a receipt: equals the signed digest (null if no claims verified)",
        }),
        registered: z.boolean().nullable().openapi({
          description: "Digest alone: a live registration exists in some org (null otherwise)",
        }),
      })
      .nullable(),
    anchor: z.object({
      status: z.enum(["anchored", "pending", "unknown"]),
      log_id: z.string().nullable(),
      leaf_hash: Hex64.nullable(),
      leaf_index: z.number().int().nullable(),
      tree_size: z.number().int().nullable(),
      audit_path: z.array(Hex64).nullable(),
      checkpoint: Checkpoint.omit({ object: true }).nullable(),
    }),
  })
  .openapi("ArtifactVerification");

export type ArtifactVerification = z.infer<typeof ArtifactVerification>;
