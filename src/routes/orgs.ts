import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Caller } from "../auth/caller";
import { scopesOfRole } from "../auth/scopes";
import { database } from "../db/client";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";
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

interface OrgRow {
  id: string;
  name: string;
  created_at: string;
  user_id: string;
}

export function registerOrgs(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const tenant = c.var.tenant;
    if (tenant.credential.kind !== "session") throw new ApiError("session_required");
    const { subject, email } = tenant.credential;
    const name =
      c.req.valid("json").name ?? (email ? `${email}'s organization` : "My organization");
    const orgId = newId();
    const db = database(c.env);
    // One transaction; the unique founder makes a racing second call find the first one's org.
    const results = await db.batch([
      db.execute(sql`select set_config('app.user_subject', ${subject}, true),
                            set_config('app.org_id', ${orgId}, true)`),
      db.execute(sql`insert into users (id, idp_subject, email) values (${newId()}, ${subject}, ${email})
                     on conflict (idp_subject) do update set email = coalesce(excluded.email, users.email)`),
      db.execute(sql`insert into organizations (id, name, founder_user_id)
                     select ${orgId}, ${name}, id from users where idp_subject = ${subject}
                     on conflict (founder_user_id) do nothing`),
      db.execute(sql`insert into memberships (org_id, user_id, role)
                     select id, founder_user_id, 'owner' from organizations where id = ${orgId}
                     on conflict do nothing`),
      db.execute(sql`select o.id, o.name, o.created_at, u.id as user_id
                     from organizations o join users u on u.id = o.founder_user_id
                     where u.idp_subject = ${subject}`),
    ]);
    const org = results[4].rows[0] as unknown as OrgRow | undefined;
    if (!org) throw new ApiError("internal_error");
    const founder: Caller = {
      orgId: org.id,
      actor: { type: "user", id: org.user_id, subject, email, role: "owner" },
      scopes: scopesOfRole("owner"),
      livemode: true,
    };
    tenant.adopt(founder);
    const created = org.id === orgId;
    const body = {
      object: "organization" as const,
      id: org.id,
      name: org.name,
      created: new Date(org.created_at).toISOString(),
      role: "owner" as const,
    };
    // Recorded on every call, once: a retry after a failed append still gets it into the ledger.
    await record(c.env, founder, {
      type: "org.created",
      subject: { type: "organization", id: org.id },
      payload: body,
      once: "org.created",
    });
    return created ? c.json(body, 201) : c.json(body, 200);
  });
}
