import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { principals } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { getById, listById } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  type MasterKey,
  masterKey,
  openPersonalData,
  sealPersonalData,
} from "../identity/personal-data";
import { record } from "../ledger/ledger";
import { payloadDigest } from "../lib/digest";
import { newId } from "../lib/ids";
import { listOf, Metadata, PageQuery, plainText } from "../schemas/common";

const PRINCIPAL_TYPES = ["individual", "company"] as const;

const Address = z
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
const PersonalData = z.object({
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
type PersonalData = z.infer<typeof PersonalData>;

const CreatePrincipal = PersonalData.extend({
  type: z.enum(PRINCIPAL_TYPES).default("individual"),
  metadata: Metadata.optional(),
})
  .strict()
  .openapi("CreatePrincipalRequest");

const Principal = z
  .object({
    object: z.literal("principal"),
    id: z.string(),
    type: z.enum(PRINCIPAL_TYPES),
    status: z.enum(["active", "erased"]),
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    address: Address.nullable(),
    external_ref: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created: z.string(),
    erased_at: z.string().nullable(),
  })
  .openapi("Principal", {
    description: "After erasure every personal field reads null and metadata is empty.",
  });

const ListPrincipalsQuery = PageQuery.extend({
  status: z.enum(["active", "erased"]).optional(),
});

const tags = ["Principals"];

const create = createRoute(
  guarded(
    "agents:write",
    {
      method: "post",
      path: "/v1/principals",
      tags,
      summary: "Create a principal (a person or company that agents act for)",
      description: "Personal fields are encrypted at rest with a data key of this principal's own.",
      request: { body: jsonBody(CreatePrincipal) },
      responses: {
        201: json(Principal, "The principal"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/principals",
    tags,
    summary: "List principals, newest first",
    request: { query: ListPrincipalsQuery },
    responses: {
      200: json(listOf(Principal, "PrincipalList"), "A page of principals"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/principals/{id}",
    tags,
    summary: "Retrieve a principal",
    request: { params: IdParam },
    responses: { 200: json(Principal, "The principal"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const erase = createRoute(
  guarded(
    "gdpr:erase",
    {
      method: "post",
      path: "/v1/principals/{id}/erase",
      tags,
      summary: "Crypto-erase a principal's personal data",
      description:
        "Destroys the principal's data key, so the stored ciphertext can never be opened again, " +
        "clears its metadata, and erases the personal members of its agents' stored mandates " +
        "(`erased_fields` on the mandate). Erasing an erased principal answers 200 with the " +
        "same record, and erases what its agents' mandates stored since.",
      request: { params: IdParam },
      responses: {
        200: json(Principal, "The erased principal"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

type PrincipalRow = typeof principals.$inferSelect;

async function toPrincipal(master: MasterKey | null, row: PrincipalRow) {
  let data: Partial<PersonalData> = {};
  if (row.wrappedKey && row.ciphertext && master) {
    const sealed = { wrappedKey: row.wrappedKey, ciphertext: row.ciphertext };
    data = (await openPersonalData(
      master,
      { orgId: row.orgId, principalId: row.id },
      sealed,
    )) as Partial<PersonalData>;
  }
  return {
    object: "principal" as const,
    id: row.id,
    type: row.type,
    status: row.status,
    name: data.name ?? null,
    email: data.email ?? null,
    phone: data.phone ?? null,
    address: data.address ?? null,
    external_ref: data.external_ref ?? null,
    metadata: row.metadata,
    created: row.createdAt.toISOString(),
    erased_at: row.erasedAt?.toISOString() ?? null,
  };
}

/** The master key, needed only when some row still has personal data to open. */
async function keyFor(c: AppContext, rows: PrincipalRow[]): Promise<MasterKey | null> {
  return rows.some((row) => row.wrappedKey) ? masterKey(c.env) : null;
}

/** The ledger holds what happened, never the personal data, nor a guessable digest of it. */
function ledgerPayload(row: PrincipalRow) {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    sealed_digest: row.ciphertext ? payloadDigest(row.ciphertext) : null,
    erased_at: row.erasedAt?.toISOString() ?? null,
  };
}

export function registerPrincipals(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { type, metadata, ...personal } = c.req.valid("json");
    // Who is asking first (401/403 before anything else), then fail before writing anything
    // when the key is missing: never store unsealed data.
    const who = await c.var.tenant.caller();
    const master = await masterKey(c.env);
    const id = newId();
    const sealed = await sealPersonalData(master, { orgId: who.orgId, principalId: id }, personal);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .insert(principals)
        .values({ id, type, metadata: metadata ?? {}, ...sealed })
        .returning(),
    ]);
    const row = rows[0];
    if (!row) throw new ApiError("internal_error");
    await record(c.env, who, {
      type: "principal.created",
      subject: { type: "principal", id },
      payload: ledgerPayload(row),
    });
    return c.json(await toPrincipal(master, row), 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, status } = c.req.valid("query");
    const list = await listById(
      c.var.tenant,
      principals,
      { limit, cursor },
      status ? eq(principals.status, status) : undefined,
    );
    const master = await keyFor(c, list.data);
    const data = await Promise.all(list.data.map((row) => toPrincipal(master, row)));
    return c.json({ ...list, data }, 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getById(c.var.tenant, principals, id);
    return c.json(await toPrincipal(await keyFor(c, [row]), row), 200);
  });

  app.openapi(erase, async (c) => {
    const id = rowId(c.req.valid("param").id);
    // The data key is overwritten in place; the ciphertext stays, unreadable by anyone. A
    // repeated erase matches no active row and reads the erased one back unchanged. In the same
    // transaction, the copies of the principal's data in its agents' mandates and assessments
    // are erased (a repeat reaches only those stored since): docs/identity.md.
    const [, , current] = await c.var.tenant.batch((db) => [
      db
        .update(principals)
        .set({ status: "erased", wrappedKey: null, metadata: {}, erasedAt: sql`now()` })
        .where(and(eq(principals.id, id), eq(principals.status, "active"))),
      db.execute(sql`select erase_principal_copies(${id}::uuid)`),
      db.select().from(principals).where(eq(principals.id, id)),
    ]);
    const row = orNotFound(current[0]);
    await record(c.env, await c.var.tenant.caller(), {
      type: "principal.erased",
      subject: { type: "principal", id },
      payload: ledgerPayload(row),
      once: `principal.erased:${id}`,
    });
    return c.json(await toPrincipal(null, row), 200);
  });
}
