import { describe, expect, it } from "vitest";
import { newOrg } from "./support/api";
import { appSql } from "./support/db";

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
});
