/**
 * Erasure reaches every copy: after `POST /v1/principals/{id}/erase`, none of the personal data
 * the principal's agents submitted in mandates is left in any table, nor in the audit export,
 * and the ledger still verifies (docs/identity.md, "What erasure reaches").
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { call, newOrg, type TestOrg } from "./support/api";
import { assessOk, type Json, payment } from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newPrincipal } from "./support/identity";
import { ledger } from "./support/ledger";
import { createEndpoint, eventually, receiver } from "./support/webhooks";

/** Values no other test writes: found anywhere means this test's data was left behind. */
function personalData() {
  const tag = crypto.randomUUID().replaceAll("-", "");
  return {
    email: `grace.${tag}@example.org`,
    device: `device-${tag}`,
    ip: `ip-${tag}`,
    instrument: `pm_${tag}`,
    card: `Card of Grace ${tag}`,
    sms: `+1${BigInt(`0x${tag.slice(0, 12)}`)
      .toString()
      .padStart(10, "7")
      .slice(0, 10)}`,
    callee: `callee-${tag}@example.org`,
    testDevice: `test-device-${tag}`,
  };
}

type Values = ReturnType<typeof personalData>;

/** A principal, its agent, and assessments whose mandates carry the principal's data. */
async function assessedWithPersonalData(org: TestOrg, key: string, values: Values) {
  const principalId = await newPrincipal(org, { name: "Grace Hopper", email: values.email });
  const agent = await call("/v1/agents", {
    method: "POST",
    key,
    body: { principal_id: principalId, name: "Checkout agent" },
  });
  expect(agent.status).toBe(201);
  const agentId = agent.json.id as string;
  const payed = await assessOk(key, {
    agent_id: agentId,
    mandate: payment({
      risk_data: { device_id: values.device, ip_address: values.ip, geo: { country: "GB" } },
      payment_instrument: { id: values.instrument, type: "card", description: values.card },
    }),
  });
  const messaged = await assessOk(key, {
    kind: "message_send",
    agent_id: agentId,
    mandate: { to: values.sms, channel: "sms", risk_data: { device_id: values.device } },
  });
  const called = await assessOk(key, {
    kind: "voice_call",
    agent_id: agentId,
    mandate: { recipient: values.callee },
  });
  return { principalId, agentId, mandates: [payed, messaged, called].map((a) => a.mandateId) };
}

/** Every base table of the database, whatever its schema, as the owner sees it. */
async function everyTable(): Promise<{ schema: string; name: string }[]> {
  const rows = await ownerSql`select table_schema, table_name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
    order by 1, 2`;
  return rows.map((r) => ({ schema: r.table_schema as string, name: r.table_name as string }));
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `table: value` for every row of every table whose text holds one of the values. */
async function whereFound(values: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const table of await everyTable()) {
    const anyValue = values.map((_, i) => `strpos(t::text, $${i + 1}) > 0`).join(" or ");
    const rows = await ownerSql.query(
      `select t::text as row from ${quoted(table.schema)}.${quoted(table.name)} t
       where ${anyValue}`,
      values,
    );
    for (const { row } of rows as { row: string }[]) {
      for (const value of values) if (row.includes(value)) found.push(`${table.name}: ${value}`);
    }
  }
  return [...new Set(found)].sort();
}

/** The values found in any table of the org ledger object's own storage. */
async function foundInLedgerObject(orgId: string, values: string[]): Promise<string[]> {
  return runInDurableObject(ledger(orgId), (_object, state) => {
    const found: string[] = [];
    const tables = state.storage.sql
      .exec<{ name: string }>("select name from sqlite_master where type = 'table'")
      .toArray();
    for (const { name } of tables) {
      if (name.startsWith("_cf_") || name.startsWith("sqlite_")) continue;
      const text = JSON.stringify(state.storage.sql.exec(`select * from "${name}"`).toArray());
      for (const value of values) if (text.includes(value)) found.push(`${name}: ${value}`);
    }
    return found;
  });
}

describe("POST /v1/principals/{id}/erase reaches every copy", () => {
  it("leaves none of the principal's data in any table or the export, and the ledger verifies", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, { url: hook.url, event_types: [] });
    const values = personalData();
    // The recipients' digests too: the history matched counterparties by them, and a digest of
    // a phone number or an address is found again by hashing a guess.
    const digests = [payloadDigest(values.sms), payloadDigest(values.callee)];
    const searched = [...Object.values(values), ...digests];
    const { principalId, agentId, mandates } = await assessedWithPersonalData(org, key, values);
    // Test mode shares the agent: its assessments are the principal's as much.
    const testKey = (await org.key(undefined, "test")).key;
    await assessOk(testKey, {
      agent_id: agentId,
      mandate: payment({ risk_data: { device_id: values.testDevice } }),
    });
    // The outbox fanned each assessment's events out to the endpoint.
    const delivered = await eventually(async () => {
      const [row] = await ownerSql`select count(*)::int as n from webhook_deliveries
        where org_id = ${org.id} and endpoint_id = ${endpoint.id}`;
      return (row?.n as number) >= 3 ? row?.n : undefined;
    });
    expect(delivered).toBeGreaterThanOrEqual(3);

    // Before: the search finds what the mandates carry (the principal's own record is sealed).
    const before = await whereFound(searched);
    expect(before).toEqual(
      expect.arrayContaining([
        `mandates: ${values.device}`,
        `mandates: ${values.ip}`,
        `mandates: ${values.instrument}`,
        `mandates: ${values.card}`,
        `mandates: ${values.sms}`,
        `mandates: ${values.callee}`,
        `mandates: ${values.testDevice}`,
        `assessments: ${values.sms}`,
        `assessments: ${values.callee}`,
        `assessments: ${digests[0]}`,
        `assessments: ${digests[1]}`,
      ]),
    );
    expect(before.filter((hit) => hit.endsWith(values.email))).toEqual([]);

    const erased = await call(`/v1/principals/${principalId}/erase`, { method: "POST", key });
    expect(erased.status).toBe(200);
    expect(erased.json.status).toBe("erased");

    expect(await whereFound(searched)).toEqual([]);
    // The ledger object keeps, past each write, only the record it answers a retry with.
    expect(await foundInLedgerObject(org.id, searched)).toEqual([]);
    const exported = await call("/v1/audit/export", { key });
    expect(exported.status).toBe(200);
    expect(exported.text).toContain('"type":"end"');
    for (const value of searched) expect(exported.text).not.toContain(value);
    const verify = await call("/v1/audit/verify", { key });
    expect(verify.status).toBe(200);
    expect(verify.json).toMatchObject({ ok: true, first_break: null });
    expect(mandates).toHaveLength(3);
  });

  it("reads an erased mandate with its personal members null and named, the rest as submitted", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const values = personalData();
    const { principalId, mandates } = await assessedWithPersonalData(org, key, values);
    const [payed, messaged, called] = await Promise.all(
      mandates.map(async (id) => (await call(`/v1/mandates/${id}`, { key })).json),
    );
    // Another principal's agent, in the same org: its mandate is not touched.
    const other = await assessedWithPersonalData(org, key, personalData());
    const untouched = await call(`/v1/mandates/${other.mandates[0]}`, { key });
    const outcome = await call(`/v1/assessments/${payed?.assessment_id}`, { key });

    expect(
      (await call(`/v1/principals/${principalId}/erase`, { method: "POST", key })).status,
    ).toBe(200);
    const after = await call(`/v1/mandates/${payed?.id}`, { key });
    expect(after.status).toBe(200);
    expect(after.json).toEqual({
      ...payed,
      mandate: { ...payed?.mandate, risk_data: null, payment_instrument: null },
      erased_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      erased_fields: ["payment_instrument", "risk_data"],
    });
    const message = (await call(`/v1/mandates/${messaged?.id}`, { key })).json;
    expect(message.mandate).toEqual({ to: null, channel: "sms", risk_data: null });
    expect(message.erased_fields).toEqual(["risk_data", "to"]);
    const call_ = (await call(`/v1/mandates/${called?.id}`, { key })).json;
    expect(call_.mandate).toEqual({ recipient: null });
    expect(call_.erased_fields).toEqual(["recipient"]);
    // The listing answers the same records.
    const listed = (await call("/v1/mandates?limit=100", { key })).json.data as Json[];
    expect(listed.find((m) => m.id === payed?.id)).toEqual(after.json);
    // What was signed and sequenced stays: the mandate hash, and the assessment as answered.
    expect(after.json.mandate_hash).toBe(payed?.mandate_hash);
    const outcomeAfter = await call(`/v1/assessments/${payed?.assessment_id}`, { key });
    expect({ ...outcomeAfter.json, audit: null }).toEqual({ ...outcome.json, audit: null });
    expect((await call(`/v1/mandates/${other.mandates[0]}`, { key })).json).toEqual(untouched.json);
    expect(untouched.json.erased_at).toBeNull();
  });

  it("stores a later mandate of the erased principal's agent already erased", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const values = personalData();
    const { principalId, agentId } = await assessedWithPersonalData(org, key, values);
    const first = await call(`/v1/principals/${principalId}/erase`, { method: "POST", key });
    expect(first.status).toBe(200);
    const firstMandates = await ownerSql`select id, erased_at from mandates
      where org_id = ${org.id} and erased_at is not null order by id`;
    expect(firstMandates).toHaveLength(3);
    // The agent stays usable; what its new mandates carry is erased as it is stored.
    const later = personalData();
    const again = await assessOk(key, {
      kind: "message_send",
      agent_id: agentId,
      mandate: { to: later.sms, body: "hello" },
    });
    expect(await whereFound([...Object.values(later), payloadDigest(later.sms)])).toEqual([]);
    expect(await foundInLedgerObject(org.id, Object.values(later))).toEqual([]);
    const stored = (await call(`/v1/mandates/${again.mandateId}`, { key })).json;
    expect(stored.mandate).toEqual({ to: null, body: "hello" });
    expect(stored.erased_fields).toEqual(["to"]);
    expect(stored.erased_at).toEqual(expect.any(String));
    // The answer to the caller is its own mandate, as submitted, payload aside.
    expect(again.mandate.to).toBe(later.sms);
    // Erasing again answers the same record, and leaves the first erasure's times as they were.
    const second = await call(`/v1/principals/${principalId}/erase`, { method: "POST", key });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    const kept = await ownerSql`select id, erased_at from mandates
      where org_id = ${org.id} and id <> ${again.mandateId} and erased_at is not null order by id`;
    expect(kept).toEqual(firstMandates);
  });

  it("answers 404 to another org, and erases nothing there", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const values = personalData();
    const { principalId } = await assessedWithPersonalData(org, key, values);
    const stranger = await newOrg();
    const strangerKey = (await stranger.key()).key;
    const res = await call(`/v1/principals/${principalId}/erase`, {
      method: "POST",
      key: strangerKey,
    });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
    const mandates = await ownerSql`select erased_at from mandates where org_id = ${org.id}`;
    expect(mandates.map((m) => m.erased_at)).toEqual([null, null, null]);
    expect(await whereFound([values.device])).toContain(`mandates: ${values.device}`);
  });
});
