import {
  createExecutionContext,
  env,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { newId } from "../../src/lib/ids";
import { signer } from "../../src/signing/signer";
import worker from "../../workers/main";
import { BASE, call, newOrg } from "./support/api";
import {
  leafHashOf,
  publishedKeys,
  randomDigest,
  registerArtifact,
  verifyOffline,
} from "./support/artifacts";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { anchor, ledger, rfcVerifyInclusion } from "./support/ledger";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function orgWithKey(scopes = ["artifact:write", "audit:read"] as const) {
  const org = await newOrg();
  const { key } = await org.key([...scopes]);
  return { org, key };
}

async function ledgerEntries(key: string) {
  const res = await call("/v1/audit?type=artifact.registered", { key });
  expect(res.status).toBe(200);
  return res.json.data as { id: string; sequence: number; digest: string; hash: string }[];
}

/** RFC 8785 for the flat, ASCII-keyed objects of these tests: sorted keys, JSON.stringify values. */
function jcs(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : 1,
  );
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
}

/** The ledger object's store, reached into to expire attachments as a day passing would. */
interface Pruneable {
  store: { pruneAttachments(before: number): void };
}

/**
 * What a request that died right after its ledger append leaves behind: the entry and its
 * terms in the ledger object, under the registration's once key, and no row.
 */
async function diedAfterAppend(orgId: string, digest: string, name: string) {
  const created = new Date();
  const terms = {
    object: "artifact" as const,
    id: newId(created.getTime()),
    digest,
    name,
    media_type: null,
    size_bytes: null,
    metadata: {},
    livemode: true,
    created: created.toISOString(),
  };
  await ledger(orgId).appendDeferred(orgId, {
    type: "artifact.registered",
    actor: { type: "api_key", id: "k1" },
    subject: { type: "artifact", id: terms.id },
    digest: payloadDigest(terms),
    once: [`artifact:live:${digest}`],
    attachment: JSON.stringify(terms),
  });
  return terms;
}

describe("POST /v1/artifacts", () => {
  it("registers a digest: 201 with the record, a signed receipt and its ledger entry", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const body = {
      digest,
      name: "contract-v3.pdf",
      media_type: "application/pdf",
      size_bytes: 48213,
      metadata: { matter: "M-1" },
    };
    const res = await registerArtifact({ key }, body);
    expect(res.status).toBe(201);
    const [entry] = await ledgerEntries(key);
    expect(res.json).toEqual({
      object: "artifact",
      id: expect.stringMatching(UUID),
      ...body,
      livemode: true,
      created: expect.stringMatching(ISO_MS),
      receipt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      audit: { entry_id: entry?.id, sequence: entry?.sequence },
    });
    // The entry is a digest of the record as shown, without the receipt and the audit link.
    const { receipt: _r, audit: _a, ...terms } = res.json;
    expect(entry?.digest).toBe(`sha256:${createHash("sha256").update(jcs(terms)).digest("hex")}`);

    const [row] = await ownerSql`select * from artifacts where id = ${res.json.id}`;
    expect(row).toMatchObject({
      org_id: org.id,
      livemode: true,
      digest,
      name: "contract-v3.pdf",
      media_type: "application/pdf",
      receipt: res.json.receipt,
      audit_entry_id: entry?.id,
    });
    expect(Number(row?.size_bytes)).toBe(48213);
    expect(Number(row?.audit_sequence)).toBe(entry?.sequence);
  });

  it("signs a receipt that verifies offline (node:crypto, the published key) and binds org, digest, time and entry", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const res = await registerArtifact({ key }, { digest, name: "a.txt" });
    const keys = await publishedKeys();
    const { valid, header, payload } = verifyOffline(res.json.receipt, keys);
    expect(valid).toBe(true);
    expect(header).toEqual({ alg: "EdDSA", kid: keys[0]?.kid, typ: "artifact-receipt+jwt" });
    const [entry] = await ledgerEntries(key);
    const [stored] = await ownerSql`select leaf_hash from audit_entries
      where org_id = ${org.id} and id = ${entry?.id}`;
    const claims = JSON.parse(payload);
    expect(claims).toEqual({
      iss: "agent-risk",
      sub: res.json.id,
      org: org.id,
      livemode: true,
      digest,
      iat: Math.floor(Date.parse(res.json.created) / 1000),
      registered_at: res.json.created,
      log_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      entry: {
        id: entry?.id,
        sequence: entry?.sequence,
        hash: entry?.hash,
        leaf_hash: stored?.leaf_hash,
      },
    });
    // RFC 6962: the leaf is SHA-256(0x00 || the entry hash's 32 bytes), recomputed here.
    expect(claims.entry.leaf_hash).toBe(leafHashOf(entry?.hash ?? ""));
    // The log id is the org's pseudonymous one: first 16 bytes of SHA-256("agent-risk/log/v1\n" || org).
    const logId = createHash("sha256").update(`agent-risk/log/v1\n${org.id}`).digest("hex");
    expect(claims.log_id).toBe(logId.slice(0, 32));
    // A changed byte of the payload no longer verifies.
    const [h, p, s] = res.json.receipt.split(".");
    const forged = Buffer.from(payload.replace(digest, randomDigest())).toString("base64url");
    expect(verifyOffline(`${h}.${forged}.${s}`, keys).valid).toBe(false);
    expect(p).not.toBe(forged);
  });

  it("answers a repeat with 200 and the first registration unchanged, recording it once", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const first = await registerArtifact({ key }, { digest, name: "first.pdf" });
    const again = await registerArtifact(
      { key },
      { digest, name: "second.pdf", media_type: "text/plain", metadata: { x: "y" } },
    );
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(await ledgerEntries(key)).toHaveLength(1);
    const rows = await ownerSql`select id from artifacts where org_id = ${org.id}`;
    expect(rows).toEqual([{ id: first.json.id }]);
  });

  it("makes six racing registrations of one digest one row, one entry, one 201", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => registerArtifact({ key }, { digest, name: `n${i}` })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    const winner = answers.find((a) => a.status === 201)?.json;
    for (const answer of answers) expect(answer.json).toEqual(winner);
    const rows = await ownerSql`select id from artifacts where org_id = ${org.id}`;
    expect(rows).toEqual([{ id: winner!.id }]);
    const entries = await ledgerEntries(key);
    expect(entries.map((e) => e.id)).toEqual([winner!.audit.entry_id]);
  });

  it("finishes a registration whose writer died after its append: a retry within the day gets its terms, one entry", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const terms = await diedAfterAppend(org.id, digest, "died.pdf");
    const retry = await registerArtifact({ key }, { digest, name: "retry.pdf" });
    expect(retry.status).toBe(200);
    const entries = await ledgerEntries(key);
    expect(entries).toHaveLength(1);
    expect(retry.json).toEqual({
      ...terms,
      receipt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      audit: { entry_id: entries[0]?.id, sequence: entries[0]?.sequence },
    });
    expect(verifyOffline(retry.json.receipt, await publishedKeys()).valid).toBe(true);
    const rows = await ownerSql`select id, name from artifacts where org_id = ${org.id}`;
    expect(rows).toEqual([{ id: terms.id, name: "died.pdf" }]);
    expect((await registerArtifact({ key }, { digest, name: "again" })).json).toEqual(retry.json);
  });

  it("registers afresh past an orphan entry whose terms expired: the orphan stays in the ledger", async () => {
    const { org, key } = await orgWithKey();
    const digest = randomDigest();
    const orphan = await diedAfterAppend(org.id, digest, "died.pdf");
    // A day later the ledger object forgets the dead writer's terms (as its alarm does).
    await runInDurableObject(ledger(org.id), (object) => {
      (object as unknown as Pruneable).store.pruneAttachments(Date.now() + 1);
    });
    const answers = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        registerArtifact({ key }, { digest, name: `fresh-${i}.pdf` }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    const fresh = answers.find((a) => a.status === 201)?.json;
    for (const answer of answers) expect(answer.json).toEqual(fresh);
    expect(fresh).toMatchObject({ digest, name: expect.stringMatching(/^fresh-\d\.pdf$/) });
    expect(fresh!.id).not.toBe(orphan.id);
    // Both entries: the orphan (written out by the anchor) and, right after it, the registration.
    await anchor(org.id);
    const entries = await ledgerEntries(key);
    const [last, first] = entries.map((e) => e.sequence);
    expect(entries).toHaveLength(2);
    expect(last).toBe((first ?? 0) + 1);
    expect(fresh!.audit).toEqual({ entry_id: entries[0]?.id, sequence: last });
    expect(JSON.parse(verifyOffline(fresh!.receipt, await publishedKeys()).payload)).toMatchObject({
      sub: fresh!.id,
      digest,
      entry: { id: entries[0]?.id, sequence: last },
    });
    const rows = await ownerSql`select id from artifacts where org_id = ${org.id}`;
    expect(rows).toEqual([{ id: fresh!.id }]);
    const repeat = await registerArtifact({ key }, { digest, name: "later.pdf" });
    expect([repeat.status, repeat.json]).toEqual([200, fresh]);
    expect(await ledgerEntries(key)).toHaveLength(2);
  });

  it("keeps test and live registrations apart: same digest, two records, each visible in its mode only", async () => {
    const org = await newOrg();
    const { key: live } = await org.key(["artifact:write", "audit:read"], "live");
    const { key: test } = await org.key(["artifact:write", "audit:read"], "test");
    const digest = randomDigest();
    const a = await registerArtifact({ key: live }, { digest, name: "live" });
    const b = await registerArtifact({ key: test }, { digest, name: "test" });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.json.livemode).toBe(false);
    expect(b.json.id).not.toBe(a.json.id);
    expect((await call(`/v1/artifacts/${a.json.id}`, { key: test })).status).toBe(404);
    expect((await call(`/v1/artifacts/${b.json.id}`, { key: live })).status).toBe(404);
    const lists = await Promise.all([
      call("/v1/artifacts", { key: live }),
      call("/v1/artifacts", { key: test }),
    ]);
    expect(lists.map((l) => l.json.data.map((x: { id: string }) => x.id))).toEqual([
      [a.json.id],
      [b.json.id],
    ]);
  });

  it("answers 503 without a signing key, appending nothing to the ledger and storing nothing", async () => {
    const { org, key } = await orgWithKey();
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${BASE}/v1/artifacts`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ digest: randomDigest(), name: "f" }),
      }),
      { ...env, SIGNING_KEY: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(errorBody("signing_key_unavailable"));
    expect(await ownerSql`select id from artifacts where org_id = ${org.id}`).toEqual([]);
    // Anchoring writes out whatever the ledger object sequenced: nothing was.
    await anchor(org.id);
    expect(await ledgerEntries(key)).toEqual([]);
  });

  it("accepts assess:write in place of artifact:write", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:write"]);
    const res = await registerArtifact({ key }, { digest: randomDigest(), name: "x" });
    expect(res.status).toBe(201);
  });

  it.each([
    ["an uppercase hex digest", { digest: `sha256:${"AB".repeat(32)}`, name: "x" }, "digest"],
    ["a digest without its algorithm", { digest: "ab".repeat(32), name: "x" }, "digest"],
    ["a SHA-512-length digest", { digest: `sha256:${"ab".repeat(64)}`, name: "x" }, "digest"],
    ["an empty name", { digest: `sha256:${"ab".repeat(32)}`, name: "" }, "name"],
    [
      "a name over 500 characters",
      { digest: `sha256:${"ab".repeat(32)}`, name: "n".repeat(501) },
      "name",
    ],
    ["a NUL in the name", { digest: `sha256:${"ab".repeat(32)}`, name: "a\u0000b" }, "name"],
    [
      "a media type with parameters",
      { digest: `sha256:${"ab".repeat(32)}`, name: "x", media_type: "text/plain; charset=utf-8" },
      "media_type",
    ],
    [
      "a media type without subtype",
      { digest: `sha256:${"ab".repeat(32)}`, name: "x", media_type: "text" },
      "media_type",
    ],
    [
      "a negative size",
      { digest: `sha256:${"ab".repeat(32)}`, name: "x", size_bytes: -1 },
      "size_bytes",
    ],
    [
      "a fractional size",
      { digest: `sha256:${"ab".repeat(32)}`, name: "x", size_bytes: 1.5 },
      "size_bytes",
    ],
    [
      "non-string metadata",
      { digest: `sha256:${"ab".repeat(32)}`, name: "x", metadata: { a: 1 } },
      "metadata.a",
    ],
    ["an unknown field", { digest: `sha256:${"ab".repeat(32)}`, name: "x", file: "AAAA" }, ""],
    ["no digest", { name: "x" }, "digest"],
  ])("refuses %s with 400 invalid_request and writes nothing", async (_, body, path) => {
    const { org, key } = await orgWithKey();
    const res = await call("/v1/artifacts", { method: "POST", key, raw: true, body });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await ownerSql`select id from artifacts where org_id = ${org.id}`).toEqual([]);
    expect(await ledgerEntries(key)).toEqual([]);
  });

  it("refuses a body that is not JSON with 400", async () => {
    const { key } = await orgWithKey();
    const res = await call("/v1/artifacts", { method: "POST", key, raw: true, body: "{not json" });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_json");
  });
});

describe("GET /v1/artifacts", () => {
  it("lists the org's artifacts newest first, a page at a time, filtered by digest", async () => {
    const { key } = await orgWithKey();
    const other = await orgWithKey();
    const digests = [randomDigest(), randomDigest(), randomDigest()];
    const ids: string[] = [];
    for (const digest of digests) {
      ids.push((await registerArtifact({ key }, { digest, name: "f" })).json.id);
    }
    await registerArtifact({ key: other.key }, { digest: digests[0]!, name: "theirs" });
    const first = await call("/v1/artifacts?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json.data.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/artifacts?limit=2&cursor=${first.json.next_cursor}`, { key });
    expect(second.json).toEqual({
      object: "list",
      data: [expect.objectContaining({ id: ids[0], digest: digests[0], name: "f" })],
      has_more: false,
      next_cursor: null,
    });
    const filtered = await call(`/v1/artifacts?digest=${digests[1]}`, { key });
    expect(filtered.json.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
  });

  it("refuses a malformed digest filter, limit or cursor with 400", async () => {
    const { key } = await orgWithKey();
    for (const query of [
      `digest=sha256:${"AB".repeat(32)}`,
      "limit=0",
      "limit=101",
      "cursor=%%%",
    ]) {
      const res = await call(`/v1/artifacts?${query}`, { key });
      expect(res.status, query).toBe(400);
    }
  });

  it("answers 400 invalid_request naming an unknown parameter, never ignoring it", async () => {
    const { key } = await orgWithKey();
    const res = await call(`/v1/artifacts?digets=sha256:${"ab".repeat(32)}`, { key });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: "", message: 'Unrecognized key: "digets"', code: "unrecognized_keys" },
      ]),
    );
  });
});

describe("GET /v1/artifacts/{id}", () => {
  it("shows the receipt valid and the anchor pending, then anchored with a proof that verifies against the signed checkpoint", async () => {
    const { org, key } = await orgWithKey();
    const created = await registerArtifact({ key }, { digest: randomDigest(), name: "f" });
    const { sequence } = created.json.audit;
    const [entry] = await ownerSql`select hash, leaf_hash from audit_entries
      where org_id = ${org.id} and sequence = ${sequence}`;
    const pending = await call(`/v1/artifacts/${created.json.id}`, { key });
    expect(pending.status).toBe(200);
    const logId = createHash("sha256").update(`agent-risk/log/v1\n${org.id}`).digest("hex");
    expect(pending.json).toEqual({
      ...created.json,
      receipt_valid: true,
      anchor: {
        status: "pending",
        log_id: logId.slice(0, 32),
        leaf_hash: entry?.leaf_hash,
        leaf_index: sequence - 1,
        tree_size: null,
        audit_path: null,
        checkpoint: null,
      },
    });

    const checkpoint = await anchor(org.id);
    const res = await call(`/v1/artifacts/${created.json.id}`, { key });
    const proof = res.json.anchor;
    expect(proof).toMatchObject({
      status: "anchored",
      leaf_hash: leafHashOf(entry?.hash),
      leaf_index: sequence - 1,
      tree_size: checkpoint?.tree_size,
      checkpoint: { tree_size: checkpoint?.tree_size, root_hash: checkpoint?.root_hash },
    });
    // By hand: the inclusion proof (RFC 9162) reaches the root the checkpoint's note signs.
    expect(
      await rfcVerifyInclusion(
        proof.leaf_hash,
        proof.leaf_index,
        proof.tree_size!,
        proof.audit_path!,
        proof.checkpoint!.root_hash,
      ),
    ).toBe(true);
    const signed = verifyOffline(proof.checkpoint!.jws, await publishedKeys());
    expect(signed.valid).toBe(true);
    expect(signed.payload).toBe(proof.checkpoint!.note);
    const root = Buffer.from(proof.checkpoint!.root_hash, "hex").toString("base64");
    expect(signed.payload.split("\n").slice(0, 3)).toEqual([
      `agent-risk/log/${logId.slice(0, 32)}`,
      String(proof.tree_size),
      root,
    ]);
  });

  it("shows receipt_valid while the receipt's key is published, retired or current, and false once it is dropped", async () => {
    const { key } = await orgWithKey();
    const created = await registerArtifact({ key }, { digest: randomDigest(), name: "f" });
    const [deployed] = await publishedKeys();
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const rotated = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
    const validWith = async (retired: unknown[]) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${BASE}/v1/artifacts/${created.json.id}`, { headers: { "x-api-key": key } }),
        { ...env, SIGNING_KEY: rotated, SIGNING_KEYS_RETIRED: JSON.stringify(retired) },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return ((await res.json()) as { receipt_valid: boolean }).receipt_valid;
    };
    expect(await validWith([{ kty: "OKP", crv: "Ed25519", x: deployed?.x }])).toBe(true);
    expect(await validWith([])).toBe(false);
  });

  it("shows receipt_valid false when the stored receipt names another artifact or another digest", async () => {
    const { key } = await orgWithKey();
    const a = await registerArtifact({ key }, { digest: randomDigest(), name: "a" });
    const b = await registerArtifact({ key }, { digest: randomDigest(), name: "b" });
    const claimsA = JSON.parse(Buffer.from(a.json.receipt.split(".")[1]!, "base64url").toString());
    const otherDigest = await (await signer(env)).signClaims(
      { ...claimsA, digest: b.json.digest },
      "artifact-receipt+jwt",
    );
    const validWith = async (receipt: string) => {
      await ownerSql`update artifacts set receipt = ${receipt} where id = ${a.json.id}`;
      const res = await call(`/v1/artifacts/${a.json.id}`, { key });
      expect(res.status).toBe(200);
      return res.json.receipt_valid;
    };
    // Both signed by the current key, both well-shaped receipts: the claims are what differ.
    expect(await validWith(b.json.receipt)).toBe(false);
    expect(await validWith(otherDigest)).toBe(false);
    expect(await validWith(a.json.receipt)).toBe(true);
  });

  it("answers 404 for another org's artifact, an unknown id and a non-uuid", async () => {
    const { key } = await orgWithKey();
    const other = await orgWithKey();
    const theirs = await registerArtifact(
      { key: other.key },
      { digest: randomDigest(), name: "t" },
    );
    for (const id of [theirs.json.id, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", "not-a-uuid"]) {
      const res = await call(`/v1/artifacts/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.error).toEqual(errorBody("not_found"));
    }
  });
});
