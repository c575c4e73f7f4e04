import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { callerOrgName } from "../auth/caller-org";
import { scopeSchema } from "../auth/scopes";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";

const Actor = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("api_key"),
      id: z.string(),
      name: z.string(),
      mode: z.enum(["live", "test"]),
    }),
    z.object({
      type: z.literal("user"),
      id: z.string(),
      subject: z.string(),
      email: z.string().nullable(),
      role: z.enum(["owner", "admin", "member"]),
    }),
  ])
  .openapi("Actor");

const CallerContext = z
  .object({
    orgId: z.string(),
    orgName: z.string().openapi({
      description: "The organization's name, as `POST /v1/orgs` set it: the console shows it",
    }),
    actor: Actor,
    scopes: z.array(scopeSchema),
    livemode: z.boolean(),
  })
  .openapi("CallerContext");

const route = createRoute(
  guarded(null, {
    method: "get",
    path: "/v1/me",
    tags: ["Console"],
    summary: "Who is calling: the organization, the actor and its scopes",
    description: "Accepts an API key or a session token (`x-org-id` picks the org of a session).",
    responses: { 200: json(CallerContext, "The caller context"), ...errorResponses(401, 403, 503) },
  }),
);

export function registerMe(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const tenant = c.var.tenant;
    // The org's row rides in the credential check's round trip.
    const name = await callerOrgName(tenant);
    const who = await tenant.caller();
    return c.json(
      {
        orgId: who.orgId,
        orgName: name,
        actor: who.actor,
        scopes: who.scopes,
        livemode: who.livemode,
      },
      200,
    );
  });
}
