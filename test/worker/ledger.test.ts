import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { anchor, appendMany, rfcVerifyInclusion, verifyJws } from "./support/ledger";

async function entries(orgId: string) {
  return ownerSql`select sequence, prev_hash, hash from audit_entries
                  where org_id = ${orgId} order by sequence`;
}

describe("the org ledger", () => {
  it("sequences 200 concurrent appends 1..200 with no gap, no duplicate and a valid chain", async () => {
    const org = await newOrg(); // sequence 1 is org.created
    const answers = (await appendMany(org.id, 200)).flat();
    const sequences = answers.map((a) => a.sequence).sort((a, b) => a - b);
    expect(sequences).toEqual(Array.from({ length: 200 }, (_, i) => i + 2));

    const rows = await entries(org.id);
    expect(rows.map((r) => Number(r.sequence))).toEqual(
      Array.from({ length: 201 }, (_, i) => i + 1),
    );
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.prev_hash).toBe(rows[i - 1]?.hash);

    const { key } = await org.key(["audit:read"]);
    const report = await call("/v1/audit/verify", { key });
    expect(report.json).toMatchObject({ ok: true, checked: 202, first_break: null, alert: null });
  });

  it("lets two orgs' appends interleave freely, each with its own sequence and chain", async () => {
    const a = await newOrg();
    const b = await newOrg();
    await Promise.all([appendMany(a.id, 30), appendMany(b.id, 30)]);
    for (const org of [a, b]) {
      const rows = await entries(org.id);
      expect(rows.map((r) => Number(r.sequence))).toEqual(
        Array.from({ length: 31 }, (_, i) => i + 1),
      );
      for (let i = 1; i < rows.length; i++) expect(rows[i]?.prev_hash).toBe(rows[i - 1]?.hash);
      const report = await call("/v1/audit/verify", { token: org.token });
      expect(report.json).toMatchObject({ ok: true, checked: 31 });
    }
  });

  it("answers an append with its id, sequence, hash and pending status", async () => {
    const org = await newOrg();
    const appended = (await appendMany(org.id, 1))[0]?.[0];
    expect(appended).toMatchObject({ sequence: 2, status: "pending" });
    expect(appended?.hash).toMatch(/^[0-9a-f]{64}$/);
    const [row] = await ownerSql`select id, hash from audit_entries
                                 where org_id = ${org.id} and sequence = 2`;
    expect(row).toEqual({ id: appended?.entry_id, hash: appended?.hash });
  });
});

describe("every state change appends", () => {
  it("records org creation, key creation and key revocation, once each", async () => {
    const org = await newOrg();
    const { id } = await org.key(["audit:read"]);
    await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    await call("/v1/orgs", { method: "POST", token: org.token });

    const list = await call("/v1/audit", { token: org.token });
    expect(list.status).toBe(200);
    expect(list.json.data.map((e: any) => [e.sequence, e.type, e.subject?.id])).toEqual([
      [3, "api_key.revoked", id],
      [2, "api_key.created", id],
      [1, "org.created", org.id],
    ]);
    const [revoked] = list.json.data;
    expect(revoked).toMatchObject({
      object: "audit_entry",
      actor: { type: "user" },
      status: "pending",
    });
    expect(revoked!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("GET /v1/audit", () => {
  it("filters by type and time and pages newest first", async () => {
    const org = await newOrg();
    await appendMany(org.id, 5, "a.thing");
    await appendMany(org.id, 2, "b.thing");
    const first = await call("/v1/audit?type=a.thing&limit=3", { token: org.token });
    expect(first.json.data).toHaveLength(3);
    expect(first.json.data.every((e: any) => e.type === "a.thing")).toBe(true);
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/audit?type=a.thing&limit=3&cursor=${first.json.next_cursor}`, {
      token: org.token,
    });
    expect(second.json.data).toHaveLength(2);
    expect(second.json.has_more).toBe(false);
    const sequences = [...first.json.data, ...second.json.data].map((e: any) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((x, y) => y - x));

    const future = new Date(Date.now() + 60_000).toISOString();
    const none = await call(`/v1/audit?from=${encodeURIComponent(future)}`, { token: org.token });
    expect(none.json.data).toEqual([]);
    const past = "2000-01-01T00:00:00Z";
    const upTo = await call(`/v1/audit?to=${past}`, { token: org.token });
    expect(upTo.json.data).toEqual([]);
  });

  it.each(["from=yesterday", "limit=0", "cursor=zzz", "type="])(
    "refuses %s with 400",
    async (q) => {
      const org = await newOrg();
      const res = await call(`/v1/audit?${q}`, { token: org.token });
      expect(res.status).toBe(400);
    },
  );
});

describe("anchoring", () => {
  it("signs a checkpoint that verifies with WebCrypto and covers the entries", async () => {
    const org = await newOrg();
    await appendMany(org.id, 6);
    const anchored = await anchor(org.id);
    if (!anchored) throw new Error("no checkpoint");
    const checkpoint = anchored;
    expect(checkpoint.tree_size).toBe(7);

    const { json: keySet } = await call("/.well-known/jwks.json");
    const signed = await verifyJws(checkpoint?.jws as string, keySet.keys);
    expect(signed.valid).toBe(true);
    expect(signed.header).toMatchObject({ alg: "EdDSA", typ: "tlog-checkpoint" });
    expect(signed.payload).toBe(checkpoint?.note);
    const lines = checkpoint.note.split("\n");
    expect(lines[1]).toBe("7");
    const root = (checkpoint.root_hash.match(/../g) ?? []).map((h: string) =>
      Number.parseInt(h, 16),
    );
    expect(lines[2]).toBe(btoa(String.fromCharCode(...root)));

    const list = await call("/v1/audit", { token: org.token });
    expect(list.json.data.every((e: any) => e.status === "anchored")).toBe(true);
  });

  it("proves each entry's inclusion with a verifier written from RFC 9162", async () => {
    const org = await newOrg();
    await appendMany(org.id, 9);
    const checkpoint = await anchor(org.id);
    const list = await call("/v1/audit?limit=100", { token: org.token });
    for (const entry of list.json.data) {
      const res = await call(`/v1/audit/${entry.id}/proof`, { token: org.token });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        status: "anchored",
        tree_size: 10,
        leaf_index: entry.sequence - 1,
      });
      const ok = await rfcVerifyInclusion(
        entry.leaf_hash,
        res.json.leaf_index,
        res.json.tree_size!,
        res.json.audit_path!,
        checkpoint?.root_hash as string,
      );
      expect(ok, `entry ${entry.sequence}`).toBe(true);
      const wrong = await rfcVerifyInclusion(
        entry.leaf_hash,
        (res.json.leaf_index + 1) % 10,
        10,
        res.json.audit_path!,
        checkpoint?.root_hash as string,
      );
      expect(wrong).toBe(false);
    }
  });

  it("keeps every checkpoint, each consistent with the previous one", async () => {
    const org = await newOrg();
    await appendMany(org.id, 3);
    await anchor(org.id);
    await appendMany(org.id, 4);
    const second = await anchor(org.id);
    expect(second).toMatchObject({ tree_size: 8, previous_tree_size: 4 });
    expect(second?.consistency_proof.length).toBeGreaterThan(0);
    const again = await anchor(org.id);
    expect(again?.tree_size).toBe(8);
    const list = await call("/v1/audit/checkpoints", { token: org.token });
    expect(list.json.data.map((c: any) => c.tree_size)).toEqual([8, 4]);
    const report = await call("/v1/audit/verify", { token: org.token });
    expect(report.json).toMatchObject({
      ok: true,
      checked: 8,
      checkpoints: { checked: 2, latest: { tree_size: 8 }, first_invalid: null },
    });
  });

  it("reports a pending entry's proof as pending", async () => {
    const org = await newOrg();
    const list = await call("/v1/audit", { token: org.token });
    const res = await call(`/v1/audit/${list.json.data[0]!.id}/proof`, { token: org.token });
    expect(res.json).toMatchObject({ status: "pending", audit_path: null, checkpoint: null });
  });
});
