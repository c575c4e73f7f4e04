import { z } from "@hono/zod-openapi";
import { RowUuid } from "../schemas/agents";
import { PageQuery, plainText } from "../schemas/common";
import { CONSTRAINT_TYPES } from "./constraint-types";
import { isPinned, pinKey } from "./keys";

export const credentialIssuerTags = ["Credential issuers"];

export const ISSUER_STATUSES = ["active", "revoked"] as const;

/** At most this many keys in an inline key set (a JWKS URL's answer is bounded alike). */
export const MAX_ISSUER_KEYS = 20;

/** A `kid` as a JWS header can carry it: printable ASCII, bounded. */
export const ISSUER_KID = /^[\x21-\x7e]{1,200}$/;

/**
 * Why a JWK cannot be an issuer key, or null: the verifier's own rule (`pinKey`: public EC
 * P-256 or Ed25519 only, an `alg` that agrees with the type) and a `kid` it can match.
 */
export function issuerKeyProblem(jwk: Record<string, unknown>): string | null {
  const pinned = pinKey(jwk);
  if (!isPinned(pinned)) return `the key ${pinned.problem} (ES256 or EdDSA public keys only)`;
  if (Object.hasOwn(jwk, "kid") && !(typeof jwk.kid === "string" && ISSUER_KID.test(jwk.kid))) {
    return "kid must be 1 to 200 printable ASCII characters";
  }
  return null;
}

const IssuerKeyInput = z
  .record(z.string(), z.unknown())
  .superRefine((jwk, ctx) => {
    const problem = issuerKeyProblem(jwk);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi("CredentialIssuerKeyInput", {
    additionalProperties: true,
    description:
      "A public JWK: EC P-256 (ES256) or OKP Ed25519 (EdDSA). Private members (`d`, …) are " +
      "refused. `kid`, when present, is what a root's header `kid` is matched against.",
    example: {
      kty: "EC",
      crv: "P-256",
      kid: "issuer-2026-01",
      x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
      y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    },
  });

export const IssuerKeySet = z
  .object({ keys: z.array(IssuerKeyInput).min(1).max(MAX_ISSUER_KEYS) })
  .superRefine((set, ctx) => {
    const kids = set.keys.map((k) => k.kid).filter((kid) => kid !== undefined);
    const twice = kids.find((kid, i) => kids.indexOf(kid) !== i);
    if (twice !== undefined) {
      ctx.addIssue({ code: "custom", path: ["keys"], message: `kid ${String(twice)} is twice` });
    }
  });

/** The constraint types an issuer requires disclosed: known types only, each once. */
export const RequiredConstraints = z
  .array(z.enum(CONSTRAINT_TYPES))
  .max(CONSTRAINT_TYPES.length)
  .superRefine((types, ctx) => {
    const twice = types.find((type, i) => types.indexOf(type) !== i);
    if (twice !== undefined) ctx.addIssue({ code: "custom", message: `${twice} is twice` });
  })
  .openapi("RequiredConstraints", {
    description:
      "Constraint types every open mandate this issuer signs must disclose: a root whose open " +
      "mandate lacks one (its holder withheld a selectively disclosable constraint, AP2 #339) " +
      "is refused as `constraint_withheld`. Only the types of the mandate's kind apply " +
      "(`payment.*` to payment mandates, `checkout.*` to checkout mandates). Default none.",
    example: ["payment.budget", "payment.amount_range"],
  });

export const CreateCredentialIssuer = z
  .object({
    name: plainText(200),
    jwks: IssuerKeySet.optional().openapi({
      description: "Inline public keys, as a JWK Set. Exactly one of `jwks` and `jwks_url`.",
    }),
    jwks_url: z
      .string()
      .max(2048)
      .optional()
      .openapi({
        description:
          "An https URL serving the issuer's JWK Set, fetched through the outbound guard and " +
          "cached (docs/credentials.md). Exactly one of `jwks` and `jwks_url`.",
        example: "https://issuer.example/.well-known/jwks.json",
      }),
    principal_id: RowUuid.optional().openapi({
      description: "The principal whose own key this is, when the user signs the root",
    }),
    required_constraints: RequiredConstraints.optional(),
    status_required: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Whether a credential of this issuer that names a status list " +
          "(draft-ietf-oauth-status-list `status.status_list`) is reviewed, never approved, " +
          "when the list cannot be fetched or trusted. Default false: the rest of the evidence " +
          "decides. A list that says INVALID denies and SUSPENDED reviews either way " +
          "(docs/status-lists.md).",
        example: true,
      }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.jwks === undefined) === (body.jwks_url === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["jwks"],
        message: "give exactly one of jwks, jwks_url",
      });
    }
  })
  .openapi("CreateCredentialIssuerRequest");

export type CreateCredentialIssuer = z.infer<typeof CreateCredentialIssuer>;

export const UpdateCredentialIssuer = z
  .object({
    name: plainText(200).optional(),
    required_constraints: RequiredConstraints.optional(),
    status_required: z.boolean().optional(),
  })
  .strict()
  .openapi("UpdateCredentialIssuerRequest", {
    description:
      "The members to change; absent members are kept. Keys are not updated: register a new " +
      "issuer and revoke this one.",
  });

export type UpdateCredentialIssuer = z.infer<typeof UpdateCredentialIssuer>;

const IssuerKey = z
  .object({
    kty: z.string(),
    crv: z.string(),
    x: z.string(),
    y: z.string().optional(),
    kid: z.string().optional(),
  })
  .openapi("CredentialIssuerKey");

export const CredentialIssuer = z
  .object({
    object: z.literal("credential_issuer"),
    id: z.string(),
    name: z.string(),
    jwks: z
      .object({ keys: z.array(IssuerKey) })
      .nullable()
      .openapi({
        description: "The inline keys; null for an issuer whose keys come from `jwks_url`",
      }),
    jwks_url: z.string().nullable(),
    jwks_cache: z
      .object({ keys: z.array(IssuerKey), fetched_at: z.string() })
      .nullable()
      .openapi({
        description: "For `jwks_url`: the keys last fetched and when; null before the first",
      }),
    principal_id: z.string().nullable(),
    required_constraints: z.array(z.string()).openapi({
      description:
        "Constraint types every open mandate this issuer signs must disclose (`constraint_withheld` otherwise)",
    }),
    status_required: z.boolean().openapi({
      description: "An unfetchable status list reviews (true) or is ignored (false)",
    }),
    status: z.enum(ISSUER_STATUSES),
    created: z.string(),
    revoked_at: z.string().nullable(),
  })
  .openapi("CredentialIssuer");

export type CredentialIssuer = z.infer<typeof CredentialIssuer>;

export const ListCredentialIssuersQuery = PageQuery.extend({
  status: z.enum(ISSUER_STATUSES).optional(),
});
