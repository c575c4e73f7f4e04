import { z } from "@hono/zod-openapi";
import { PageQuery, plainText } from "../schemas/common";
import { PolicyRules } from "./policy";

export const CreatePolicy = z
  .object({
    name: plainText(200),
    rules: PolicyRules,
    activate: z.boolean().default(false),
  })
  .strict()
  .openapi("CreatePolicyRequest");

export const Policy = z
  .object({
    object: z.literal("policy"),
    id: z.string(),
    name: z.string(),
    status: z.enum(["draft", "active"]),
    version: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "Assigned at each activation from an org-wide counter (the `policy_version` of the " +
          "assessments it governs); null for a policy never activated",
      }),
    rules: PolicyRules,
    shadow: z.boolean().openapi({
      description:
        "The org's shadow policy: a draft evaluated on every assessment next to the active " +
        "one, recorded and never acted on",
    }),
    created: z.string(),
    activated_at: z.string().nullable(),
  })
  .openapi("Policy");

export const ListPoliciesQuery = PageQuery.extend({
  status: z.enum(["draft", "active"]).optional(),
  shadow: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "`true`: the org's shadow policy only (docs/shadow-policies.md)" }),
});
