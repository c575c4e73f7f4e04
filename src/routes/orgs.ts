import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { foundOrg } from "../orgs/founding";
import { plainText } from "../schemas/common";

const CreateOrg = z
  .object({ name: plainText(200).optional() })
  .strict()
  .openapi("CreateOrganizationRequest");

const Organization = z
  .object({
    object: z.literal("organization"),
    id: z.string(),
    name: z.string(),
    created: z.string(),
    role: z.literal("owner"),
  })
  .openapi("Organization");

const route = createRoute(
  guarded(
    null,
    {
      method: "post",
      path: "/v1/orgs",
      tags: ["Console"],
      summary: "Create the organization of the signed-in user",
      description:
        "Idempotent per user: the first call creates the org and answers 201, every later call " +
        "answers 200 with the same org. The caller becomes its owner.",
      request: {
        body: { required: false, content: { "application/json": { schema: CreateOrg } } },
      },
      responses: {
        201: json(Organization, "Created"),
        200: json(Organization, "The user's existing organization"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { sessionOnly: true, orgless: true },
  ),
);

export function registerOrgs(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { body, created } = await foundOrg(c.var.tenant, c.req.valid("json").name);
    return created ? c.json(body, 201) : c.json(body, 200);
  });
}
