import { describe, expect, it } from "vitest";
import { entryHash } from "#audit/chain";
import { verifyExport } from "#audit/export-format";
import { call, newOrg, type TestOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { anchor, appendMany } from "./support/ledger";

// An insider with the database owner's role edits the stored rows directly. Verification must
// name the exact first break, raise one integrity alert, and the offline verifier must agree.

async function ledgerOf10(anchored: boolean): Promise<TestOrg> {
  const org = await newOrg();
  await appendMany(org.id, 9);
  if (anchored) await anchor(org.id);
  return org;
}

async function verify(org: TestOrg) {
  const res = await call("/v1/audit/verify", { token: org.token });
  expect(res.status).toBe(200);
  return res.json;
}

async function offline(org: TestOrg) {
  const res = await call("/v1/audit/export", { token: org.token });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/x-ndjson");
  async function* lines() {
    for (const line of res.text.split("\n")) if (line) yield line;
  }
  return verifyExport(lines());
}

/** The endpoint's report less what only the service knows (its witness and the alert). */
function rowsOnly(report: any) {
  const { alert: _alert, ledger: _ledger, ...rows } = report;
  return { ...rows, ok: rows.first_break === null && rows.checkpoints.first_invalid === null };
}

async function expectBreak(org: TestOrg, expected: Record<string, unknown>) {
  const report = await verify(org);
  expect(report.ok).toBe(false);
  expect(report.first_break).toMatchObject(expected);
  expect(report.alert).toMatchObject({ type: "audit.integrity_alert" });
  const { report: offlineReport, truncated } = await offline(org);
  expect(truncated).toBe(false);
  expect(offlineReport).toEqual(rowsOnly(report));
  return report;
}

describe("tampering found by verify and by the offline verifier", () => {
  it("passes an untouched ledger, online and offline alike", async () => {
    const org = await ledgerOf10(true);
    const report = await verify(org);
    expect(report).toMatchObject({ ok: true, checked: 10, head: { sequence: 10 }, alert: null });
    const { report: offlineReport } = await offline(org);
    expect(offlineReport).toEqual(rowsOnly(report));
  });

  it("names a changed field as a hash mismatch at its sequence", async () => {
    const org = await ledgerOf10(false);
    await ownerSql`update audit_entries set type = 'forged' where org_id = ${org.id} and sequence = 4`;
    await expectBreak(org, { sequence: 4, reason: "hash_mismatch" });
  });

  it("names a deleted row as a gap where it was", async () => {
    const org = await ledgerOf10(false);
    await ownerSql`delete from audit_entries where org_id = ${org.id} and sequence = 5`;
    await expectBreak(org, { sequence: 5, reason: "sequence_gap", expected: "5", actual: "6" });
  });

  it("names two swapped rows at the first of them", async () => {
    const org = await ledgerOf10(false);
    await ownerSql.transaction((sql) => [
      sql`update audit_entries set sequence = -6 where org_id = ${org.id} and sequence = 6`,
      sql`update audit_entries set sequence = 6 where org_id = ${org.id} and sequence = 7`,
      sql`update audit_entries set sequence = 7 where org_id = ${org.id} and sequence = -6`,
    ]);
    await expectBreak(org, { sequence: 6, reason: "link_mismatch" });
  });

  it("catches a rewritten hash that covers a change, at the next link and in the checkpoint", async () => {
    const org = await ledgerOf10(true);
    const [row] =
      await ownerSql`select * from audit_entries where org_id = ${org.id} and sequence = 3`;
    const forged = {
      v: 1 as const,
      org_id: org.id,
      sequence: 3,
      id: row?.id,
      type: "forged",
      actor: { type: row?.actor_type, id: row?.actor_id },
      subject: row?.subject_type ? { type: row.subject_type, id: row.subject_id } : null,
      digest: row?.digest,
      time: new Date(row?.time).toISOString(),
    };
    const hash = entryHash(row?.prev_hash, forged);
    await ownerSql`update audit_entries set type = 'forged', hash = ${hash}
                   where org_id = ${org.id} and sequence = 3`;
    const report = await expectBreak(org, { sequence: 4, reason: "link_mismatch" });
    expect(report.checkpoints.first_invalid).toMatchObject({
      tree_size: 10,
      reason: "root_mismatch",
    });
  });

  it("raises one alert per distinct break, however often verify runs", async () => {
    const org = await ledgerOf10(false);
    await ownerSql`update audit_entries set digest = 'sha256:00' where org_id = ${org.id} and sequence = 2`;
    const first = await verify(org);
    const second = await verify(org);
    expect(second.alert!.event_id).toBe(first.alert!.event_id);
    const alerts = await ownerSql`select type, data from events
                                  where org_id = ${org.id} and type = 'audit.integrity_alert'`;
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.data.first_break).toMatchObject({ sequence: 2, reason: "hash_mismatch" });
  });

  it("reports a checkpoint whose signature was forged", async () => {
    const org = await ledgerOf10(true);
    await ownerSql`update audit_checkpoints set jws = regexp_replace(jws, '.{4}$', 'AAAA')
                   where org_id = ${org.id}`;
    const report = await verify(org);
    expect(report.ok).toBe(false);
    expect(report.first_break).toBeNull();
    expect(report.checkpoints.first_invalid).toMatchObject({
      tree_size: 10,
      reason: "signature_invalid",
    });
  });
});

describe("what rows alone cannot show, the ledger object's witness does", () => {
  it("catches the newest entries deleted before any checkpoint covered them", async () => {
    const org = await ledgerOf10(false);
    await ownerSql`delete from audit_entries where org_id = ${org.id} and sequence > 8`;
    const report = await verify(org);
    expect(report.ok).toBe(false);
    expect(report.ledger).toMatchObject({ tree_size: 10, entries_stored: false });
    expect(report.alert).toMatchObject({ type: "audit.integrity_alert" });
  });

  it("catches deleted checkpoints, which would let rewritten rows pass as consistent", async () => {
    const org = await ledgerOf10(true);
    await ownerSql`delete from audit_checkpoints where org_id = ${org.id}`;
    const report = await verify(org);
    expect(report.first_break).toBeNull();
    expect(report.ok).toBe(false);
    expect(report.ledger).toMatchObject({ tree_size: 10, checkpoint_stored: false });
  });
});

describe("GET /v1/audit/export", () => {
  it("streams a header with the keys, the entries and checkpoints in order, and an end line", async () => {
    const org = await ledgerOf10(true);
    await appendMany(org.id, 2);
    const res = await call("/v1/audit/export", { token: org.token });
    const lines = res.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      type: "header",
      format: "agent-risk-audit-export/1",
      org_id: org.id,
    });
    expect(lines[0].keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(lines.map((l) => (l.type === "entry" ? l.entry.sequence : l.type))).toEqual([
      "header",
      ...Array.from({ length: 10 }, (_, i) => i + 1),
      "checkpoint",
      11,
      12,
      "end",
    ]);
    expect(lines.at(-1)).toEqual({ type: "end", entries: 12, checkpoints: 1 });
  });
});
