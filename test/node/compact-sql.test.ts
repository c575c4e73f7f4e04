/**
 * `compactSql` (src/db/compact-sql.ts): the hot-path statements' text is sent without layout,
 * and nothing inside a literal, an identifier or a parameter may change with it.
 */
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { compactSql } from "../../src/db/compact-sql";

describe("compactSql", () => {
  it("drops comments and indentation, keeping one space where tokens meet", () => {
    const text = `
      with chosen as (
        -- the agent, by key
        select k.agent_id   from agent_keys k /* by thumbprint */ where k.thumbprint = $1
      )
      select coalesce( (select agent_id from chosen), $2::uuid ) as id`;
    expect(compactSql(text)).toBe(
      "with chosen as(select k.agent_id from agent_keys k where k.thumbprint = $1)" +
        "select coalesce((select agent_id from chosen),$2::uuid)as id",
    );
  });

  it("keeps literals and quoted identifiers as they are, doubled quotes included", () => {
    const text = `select 'a  -- not a comment',   "odd  ""name"" -- too"  ,  'it''s  /* here */'`;
    expect(compactSql(text)).toBe(
      `select 'a  -- not a comment',"odd  ""name"" -- too",'it''s  /* here */'`,
    );
  });

  it("answers text it cannot read whole unchanged", () => {
    for (const text of [
      "select $$ a  b $$",
      "select $tag$ a  b $tag$",
      "select E'a\\'  b'",
      "select e'x'",
      "select 'unterminated  ",
      "select 1 /* unterminated  ",
      "select 1 /* outer /* inner */ still a comment */  + 1",
    ]) {
      expect(compactSql(text)).toBe(text);
    }
  });

  it("reads a parameter as a parameter, not as a dollar quote", () => {
    expect(compactSql("select $1,   $2::text")).toBe("select $1,$2::text");
  });

  it("reads an identifier ending in e before a quote as no escape string", () => {
    expect(compactSql("select   'x'  as  type, value'y'")).toBe("select 'x' as type,value'y'");
  });

  describe("in PostgreSQL", () => {
    const db = new PGlite();
    afterAll(() => db.close());

    it("answers what the laid-out text answers", async () => {
      const text = `
        select 'a  -- b' as "odd  name",   -- a comment
               (1 +   2) * 3 as n, /* a block
               comment */ array['x  y', 'z'] as list,
               $1::text || ' ' || $2::text as joined
        where  $3::int  >  0`;
      const params = ["p  q", "r", 1];
      const laidOut = await db.query(text, params);
      const compacted = await db.query(compactSql(text), params);
      expect(compacted.rows).toEqual(laidOut.rows);
      expect(compacted.rows).toEqual([
        { "odd  name": "a  -- b", n: 9, list: ["x  y", "z"], joined: "p  q r" },
      ]);
    });
  });
});
