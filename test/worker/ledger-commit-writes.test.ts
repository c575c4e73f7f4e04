import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { newSigner } from "../support/ap2-chains";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { publicJwk, register } from "./support/issuers";

// commit() (src/ledger/commit.ts): a change and its ledger entry are one transaction, so a
// change never lands without its entry. Made visible by refusing the entry's row in Postgres:
// when the change and its entry went out in two transactions, the change stayed.

type Json = Record<string, unknown>;

/** Runs `body` while Postgres refuses the audit entries `when` (SQL over `new`) names. */
async function whileEntriesRefused(name: string, when: string, body: () => Promise<void>) {
  const trigger = `refuse_entry_${name.replaceAll("-", "")}`;
  await ownerSql.query(`create function ${trigger}() returns trigger language plpgsql as $$
    begin
      if ${when} then raise exception 'test: entry refused'; end if;
      return new;
    end $$`);
  await ownerSql.query(`create trigger ${trigger} before insert on audit_entries
    for each row execute function ${trigger}()`);
  try {
    await body();
  } finally {
    await ownerSql.query(`drop trigger ${trigger} on audit_entries`);
    await ownerSql.query(`drop function ${trigger}()`);
  }
}

describe("a change whose entry cannot be written", () => {
  it("stores no API key: the key and api_key.created land together or not at all", async () => {
    const org = await newOrg();
    await whileEntriesRefused(
      org.id,
      `new.org_id = '${org.id}' and new.type = 'api_key.created'`,
      async () => {
        const res = await call("/v1/api-keys", {
          method: "POST",
          token: org.token,
          body: { name: "unaudited", scopes: ["assess:read"], mode: "live" },
        });
        expect(res.status).toBeGreaterThanOrEqual(500);
        expect(res.json.key).toBeUndefined();
      },
    );
    // Not even a revoked row, as the write before the ledger's used to leave behind.
    const rows = (await ownerSql`select id from api_keys
      where org_id = ${org.id} and name = 'unaudited'`) as Json[];
    expect(rows).toEqual([]);
  });

  it("leaves a revoked issuer active, and a retry revokes it with its entry", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const created = await register(key, {
      name: "Bank",
      jwks: { keys: [publicJwk(await newSigner("EdDSA"))] },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const revoke = () => call(`/v1/credential-issuers/${id}/revoke`, { method: "POST", key });
    await whileEntriesRefused(
      id,
      `new.subject_id = '${id}' and new.type = 'credential_issuer.revoked'`,
      async () => {
        expect((await revoke()).status).toBeGreaterThanOrEqual(500);
      },
    );
    const [row] = (await ownerSql`select status, revoked_at from credential_issuers
      where id = ${id}`) as Json[];
    expect(row).toEqual({ status: "active", revoked_at: null });
    const retry = await revoke();
    expect(retry.status).toBe(200);
    expect(retry.json.status).toBe("revoked");
    // In Postgres as the answer arrives: written in the revocation's own transaction.
    const entries = (await ownerSql`select subject_id from audit_entries
      where org_id = ${org.id} and type = 'credential_issuer.revoked'`) as Json[];
    expect(entries).toEqual([{ subject_id: id }]);
  });
});

describe("a change committed with its entry", () => {
  it("records agent.created over the agent the route answered, but for its status-list place", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const principal = await call("/v1/principals", { method: "POST", key, body: { name: "P" } });
    const res = await call("/v1/agents", {
      method: "POST",
      key,
      body: { principal_id: principal.json.id, name: "buyer", metadata: { team: "a" } },
    });
    expect(res.status).toBe(201);
    const entries = (await ownerSql`select subject_id, digest from audit_entries
      where org_id = ${org.id} and type = 'agent.created'`) as Json[];
    // The place comes from the entry's sequence, so the payload hashed before it has none.
    const { status_list, ...recorded } = res.json;
    expect(status_list).not.toBeNull();
    expect(entries).toEqual([{ subject_id: res.json.id, digest: payloadDigest(recorded) }]);
    // The row as stored reads back as the same agent.
    expect((await call(`/v1/agents/${res.json.id}`, { key })).json).toEqual(res.json);
  });
});
