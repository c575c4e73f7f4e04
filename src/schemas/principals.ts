import { z } from "@hono/zod-openapi";
import { Metadata, PageQuery, plainText } from "./common";

export const PRINCIPAL_TYPES = ["individual", "company"] as const;

export const Address = z
  .object({
    line1: plainText(200),
    line2: plainText(200).optional(),
    city: plainText(100).optional(),
    region: plainText(100).optional(),
    postal_code: plainText(20).optional(),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, "an ISO 3166-1 alpha-2 code")
      .optional(),
  })
  .strict()
  .openapi("Address");

/** The personal data: only ever stored sealed under the principal's own data key. */
export const PersonalData = z.object({
  name: plainText(200),
  email: z.email().max(254).optional(),
  phone: z
    .string()
    .regex(/^\+[1-9][0-9]{6,14}$/, "an E.164 number such as +14155550100")
    .optional()
    .openapi({ example: "+14155550100" }),
  address: Address.optional(),
  external_ref: plainText(200).optional().openapi({
    description: "Your own reference for this principal (a customer id)",
  }),
});
export type PersonalData = z.infer<typeof PersonalData>;

export const CreatePrincipal = PersonalData.extend({
  type: z.enum(PRINCIPAL_TYPES).default("individual"),
  metadata: Metadata.optional(),
})
  .strict()
  .openapi("CreatePrincipalRequest");

export const Principal = z
  .object({
    object: z.literal("principal"),
    id: z.string(),
    type: z.enum(PRINCIPAL_TYPES),
    status: z.enum(["active", "erased"]),
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    address: z.union([Address, z.null()]),
    external_ref: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created: z.string(),
    erased_at: z.string().nullable(),
  })
  .openapi("Principal", {
    description: "After erasure every personal field reads null and metadata is empty.",
  });

export const ListPrincipalsQuery = PageQuery.extend({
  status: z.enum(["active", "erased"]).optional(),
});
