import { describe, expect, it } from "vitest";
import { newOrg } from "./support/api";
import { appSql, ownerSql } from "./support/db";
import { anchor } from "./support/ledger";

// Isolation is proven in the database itself: these queries run as the Worker's role with no
// org filter at all, and only RLS stands between one org and another.
describe("row-level security as the application role", () => {
  it("shows only the current org's rows to a query without any org filter", async () => {
    const a = await newOrg();
    const b = await newOrg();
    await a.key(["assess:read"]);
    await b.key(["assess:read"]);
    const [, keys, orgs, members] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`select org_id from api_keys`,
      sql`select id from organizations`,
      sql`select org_id from memberships`,
    ]);
    expect(keys?.length).toBeGreaterThan(0);
    expect(new Set(keys?.map((r) => r.org_id))).toEqual(new Set([a.id]));
    expect(orgs?.map((r) => r.id)).toEqual([a.id]);
    expect(new Set(members?.map((r) => r.org_id))).toEqual(new Set([a.id]));
  });

  it("shows nothing when no org is set", async () => {
    await newOrg();
    const [keys, orgs, users] = await appSql.transaction((sql) => [
      sql`select * from api_keys`,
      sql`select * from organizations`,
      sql`select * from users`,
    ]);
    expect([keys?.length, orgs?.length, users?.length]).toEqual([0, 0, 0]);
  });

  it("refuses an insert for another org", async () => {
    const a = await newOrg();
    const b = await newOrg();
    const attempt = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`insert into api_keys (id, org_id, name, key_hash, prefix, mode, scopes)
          values (${crypto.randomUUID()}, ${b.id}, 'x', ${crypto.randomUUID()}, 'aar_live_xxxx', 'live', '{assess:read}')`,
    ]);
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("refuses to move a row to another org", async () => {
    const a = await newOrg();
    const b = await newOrg();
    await a.key(["assess:read"]);
    const attempt = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`update api_keys set org_id = ${b.id}`,
    ]);
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("cannot delete anything", async () => {
    const a = await newOrg();
    const attempt = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`delete from api_keys`,
    ]);
    await expect(attempt).rejects.toMatchObject({ code: "42501" });
  });

  it("keeps the tenant setting inside its transaction", async () => {
    const a = await newOrg();
    await a.key(["assess:read"]);
    await appSql.transaction((sql) => [sql`select set_config('app.org_id', ${a.id}, true)`]);
    const [rows] = await appSql.transaction((sql) => [sql`select * from api_keys`]);
    expect(rows).toHaveLength(0);
  });

  it("isolates the ledger, its checkpoints and the outbox the same way", async () => {
    const a = await newOrg();
    const b = await newOrg();
    await anchor(a.id);
    await anchor(b.id);
    const [, entries, checkpoints, events] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`select org_id from audit_entries`,
      sql`select org_id from audit_checkpoints`,
      sql`select org_id from events`,
    ]);
    expect(new Set(entries?.map((r) => r.org_id))).toEqual(new Set([a.id]));
    expect(new Set(checkpoints?.map((r) => r.org_id))).toEqual(new Set([a.id]));
    expect(events?.every((r) => r.org_id === a.id)).toBe(true);
    const forged = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.id}, true)`,
      sql`insert into events (id, org_id, type, data) values (${crypto.randomUUID()}, ${b.id}, 'x', '{}')`,
    ]);
    await expect(forged).rejects.toMatchObject({ code: "42501" });
  });

  it("lets a public lookup by leaf hash or log id see exactly that row and nothing else", async () => {
    const a = await newOrg();
    await newOrg();
    const checkpoint = await anchor(a.id);
    const [leaf] = await ownerSql`select leaf_hash from audit_entries where org_id = ${a.id}`;
    const [, byLeaf, otherEntries] = await appSql.transaction((sql) => [
      sql`select set_config('app.leaf_hash', ${leaf?.leaf_hash}, true)`,
      sql`select leaf_hash from audit_entries where leaf_hash = ${leaf?.leaf_hash}`,
      sql`select count(*)::int as n from audit_entries`,
    ]);
    expect(byLeaf).toHaveLength(1);
    expect(otherEntries?.[0]?.n).toBe(1);
    const [, byLog, otherCheckpoints, orgs] = await appSql.transaction((sql) => [
      sql`select set_config('app.log_id', ${checkpoint?.log_id}, true)`,
      sql`select count(*)::int as n from audit_checkpoints`,
      sql`select count(*)::int as n from audit_checkpoints where log_id <> ${checkpoint?.log_id}`,
      sql`select count(*)::int as n from organizations`,
    ]);
    expect(byLog?.[0]?.n).toBe(1);
    expect(otherCheckpoints?.[0]?.n).toBe(0);
    expect(orgs?.[0]?.n).toBe(0);
  });
});

describe("every org-scoped table", () => {
  // Two ways to be safe: forced row-level security with a policy on `app.org_id`, or no
  // privilege at all for the application role (the network's tables, drizzle/0021: read and
  // written only through SECURITY DEFINER functions scoped to the calling org).
  it("has forced row-level security scoped to app.org_id, or grants the application role nothing", async () => {
    const [role] = (await appSql`select current_user as name`) as { name: string }[];
    const tables = (await ownerSql`
      select c.relname, c.relrowsecurity, c.relforcerowsecurity,
        exists (select 1 from pg_policies p
                where p.tablename = c.relname and p.qual like '%app.org_id%') as scoped,
        has_table_privilege(${role?.name}, c.oid, 'SELECT, INSERT, UPDATE, DELETE') as granted
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      where c.relkind = 'r'
        and exists (select 1 from information_schema.columns col
                    where col.table_schema = 'public' and col.table_name = c.relname
                      and col.column_name = 'org_id')
      order by c.relname`) as {
      relname: string;
      relrowsecurity: boolean;
      relforcerowsecurity: boolean;
      scoped: boolean;
      granted: boolean;
    }[];
    expect(tables.map((t) => t.relname)).toEqual(
      expect.arrayContaining([
        "webhook_endpoints",
        "webhook_deliveries",
        "webhook_attempts",
        "eval_sets",
        "evals",
        "assessments",
        "network_members",
        "network_contributions",
      ]),
    );
    const unprotected = tables.filter(
      (t) => t.granted && (!t.relrowsecurity || !t.relforcerowsecurity || !t.scoped),
    );
    expect(unprotected).toEqual([]);
    expect(tables.filter((t) => !t.granted).map((t) => t.relname)).toEqual([
      "network_contributions",
      "network_members",
    ]);
  });

  it("refuses the application role any read of the network's tables", async () => {
    await expect(appSql`select count(*) from network_contributions`).rejects.toThrow(
      /permission denied/,
    );
    await expect(appSql`select count(*) from network_members`).rejects.toThrow(/permission denied/);
  });
});
