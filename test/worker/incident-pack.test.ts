import { describe, expect, it } from "vitest";
import { allowed, CAPTURE, decide, type Json, redeem } from "./support/action";
import { call, newOrg } from "./support/api";

// GET /v1/action-decisions/{id}/incident-pack, checked the way a third party would: by the
// verifier below, written from docs/action-authority.md with WebCrypto (Ed25519, SHA-256) and
// nothing else: no service code, no network, only the pack.

const utf8 = (text: string) => new TextEncoder().encode(text);
const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const unhex = (text: string) =>
  Uint8Array.from(text.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
const unbase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const unbase64url = (text: string) =>
  unbase64(
    text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - (text.length % 4)) % 4),
  );
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replaceAll("=", "");

/** RFC 8785: members sorted by UTF-16 code units, ECMAScript number and string forms. */
function jcs(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error("not JSON");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  const members = Object.keys(value)
    .sort()
    .filter((k) => (value as Json)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${jcs((value as Json)[k])}`);
  return `{${members.join(",")}}`;
}

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", joined));
}

/** RFC 9162 §2.1.3.2. */
async function inclusionRoot(leaf: string, index: number, size: number, path: string[]) {
  if (index >= size) return null;
  let [fn, sn] = [index, size - 1];
  let r: Uint8Array = unhex(leaf);
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await sha256(new Uint8Array([1]), unhex(p), r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else {
      r = await sha256(new Uint8Array([1]), r, unhex(p));
    }
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 ? hex(r) : null;
}

/** Every problem found in a pack; none means it verifies. */
async function verifyPack(pack: Json): Promise<string[]> {
  const problems: string[] = [];
  const keys = new Map<string, CryptoKey>();
  for (const k of pack.keys) {
    const jwk = { kty: "OKP", crv: "Ed25519", x: k.x };
    // A key that does not import verifies nothing.
    const key = await crypto.subtle
      .importKey("jwk", jwk, "Ed25519", false, ["verify"])
      .catch(() => null);
    if (key) keys.set(k.kid, key);
  }
  /** The payload of a compact JWS of the given typ by one of the pack's keys, or null. */
  async function jws(token: string, typ: string, detached?: Uint8Array) {
    const [h = "", p = "", s = ""] = token.split(".");
    const header = JSON.parse(new TextDecoder().decode(unbase64url(h)));
    const payload = detached ? base64url(detached) : p;
    const key = keys.get(header.kid);
    if (!key || header.alg !== "EdDSA" || header.typ !== typ || (detached && p !== "")) return null;
    const ok = await crypto.subtle.verify("Ed25519", key, unbase64url(s), utf8(`${h}.${payload}`));
    return ok ? unbase64url(payload) : null;
  }

  // 1. The pack's own signature: over the RFC 8785 form of everything but `signature`.
  const { signature, ...unsigned } = pack;
  if (!(await jws(signature, "incident-pack+jws", utf8(jcs(unsigned)))))
    problems.push("pack signature");

  // 2. The checkpoint: signed, and its note states exactly its fields.
  const cp = pack.checkpoint;
  const note = await jws(cp.jws, "tlog-checkpoint");
  if (!note || new TextDecoder().decode(note) !== cp.note) problems.push("checkpoint signature");
  const [origin, size, root, time, end] = cp.note.split("\n");
  if (
    origin !== `agent-risk/log/${cp.log_id}` ||
    size !== String(cp.tree_size) ||
    hex(unbase64(root)) !== cp.root_hash ||
    time !== `time ${cp.time}` ||
    end !== ""
  ) {
    problems.push("checkpoint note");
  }

  // 3. Each entry: its hash, leaf hash, payload digest, and its proof up to the checkpoint.
  for (const item of pack.ledger) {
    const { entry } = item;
    const at = `entry ${entry.sequence}`;
    if (entry.org_id !== pack.org_id || entry.v !== 1) problems.push(`${at} org`);
    if (hex(await sha256(unhex(item.prev_hash), utf8(jcs(entry)))) !== item.hash) {
      problems.push(`${at} hash`);
    }
    if (hex(await sha256(new Uint8Array([0]), unhex(item.hash))) !== item.leaf_hash) {
      problems.push(`${at} leaf hash`);
    }
    if (entry.digest !== `sha256:${hex(await sha256(utf8(jcs(item.payload))))}`) {
      problems.push(`${at} digest`);
    }
    const { leaf_index, tree_size, audit_path } = item.inclusion;
    const proven = await inclusionRoot(item.leaf_hash, leaf_index, tree_size, audit_path);
    if (
      leaf_index !== entry.sequence - 1 ||
      tree_size !== cp.tree_size ||
      proven !== cp.root_hash
    ) {
      problems.push(`${at} inclusion`);
    }
  }
  for (const [i, item] of pack.ledger.entries()) {
    const next = pack.ledger[i + 1];
    if (next?.entry.sequence === item.entry.sequence + 1 && next.prev_hash !== item.hash) {
      problems.push(`entry ${next.entry.sequence} link`);
    }
  }

  // 4. The records are what the entries recorded.
  const recorded = (type: string, subject: Json) =>
    pack.ledger.find((l: Json) => l.entry.type === type && jcs(l.entry.subject) === jcs(subject));
  const same = (a: unknown, b: unknown) => jcs(a) === jcs(b);
  const { decision, mandate, grant, redemption } = pack;
  const made = recorded("action_decision.created", { type: "action_decision", id: decision.id });
  const { grant_status, audit, ...decisionRecord } = decision;
  // A grant with a place is signed after its entry: the entry records its id and expiry only.
  const recordedGrant = decision.grant && {
    id: decision.grant.id,
    ...(decision.grant.status_list ? {} : { jws: decision.grant.jws }),
    expires_at: decision.grant.expires_at,
  };
  const decisionPayload = { ...decisionRecord, grant: recordedGrant };
  if (!made || made.entry.id !== audit.entry_id || !same(made.payload, decisionPayload)) {
    problems.push("decision");
  }
  const created = recorded("action_mandate.created", { type: "action_mandate", id: mandate.id });
  const { status, uses, amount_used, revoked_at, audit: _, ...terms } = mandate;
  if (!created || !same(created.payload, terms)) problems.push("mandate");
  if (grant) {
    const claims = await jws(grant.jws, "action-grant+jwt");
    const parsed = claims && JSON.parse(new TextDecoder().decode(claims));
    if (
      !parsed ||
      !same(parsed, grant.claims) ||
      parsed.jti !== decision.grant.id ||
      !same(parsed.status?.status_list ?? null, decision.grant.status_list) ||
      parsed.decision !== decision.id ||
      parsed.org !== pack.org_id
    ) {
      problems.push("grant");
    }
  }
  if (redemption) {
    const entry = recorded("action_grant.redeemed", { type: "action_grant", id: grant?.id });
    const { redeemed, proves, audit: __, ...payload } = redemption;
    const receipt = await jws(redemption.receipt_jws, "action-redemption+jwt");
    if (!entry || !same(entry.payload, payload) || !receipt) problems.push("redemption");
  }
  return problems;
}

async function packOf(org: Json, decisionId: string) {
  const res = await call(`/v1/action-decisions/${decisionId}/incident-pack`, { token: org.token });
  expect(res.status).toBe(200);
  return res.json;
}

describe("the incident pack", () => {
  it("of a redeemed ALLOW verifies offline, with only the pack and Ed25519", async () => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    await redeem(executor.key, { grant, ...CAPTURE });
    const pack = await packOf(org, decision.id);
    expect(await verifyPack(pack)).toEqual([]);
    expect(pack).toMatchObject({
      object: "incident_pack",
      version: 1,
      org_id: org.id,
      decision: { id: decision.id, grant_status: "redeemed" },
      grant: { id: decision.grant!.id, jws: grant },
      redemption: { grant_id: decision.grant!.id, redeemed: true },
    });
    expect(pack.ledger.map((l: Json) => l.entry.type)).toEqual([
      "action_mandate.created",
      "action_decision.created",
      "action_grant.redeemed",
    ]);
    expect(Object.keys(pack.ledger[0]!.entry).sort()).toEqual(
      ["actor", "digest", "id", "org_id", "sequence", "subject", "time", "type", "v"].sort(),
    );
    // The keys in the pack are the service's published keys.
    const { json: keySet } = await call("/.well-known/jwks.json");
    expect(pack.keys).toEqual(keySet.keys);
  });

  it("of a DENY on a revoked mandate carries the revocation and verifies", async () => {
    const org = await newOrg();
    const { key, mandate } = await allowed(org);
    await call(`/v1/action-mandates/${mandate.id}/revoke`, { method: "POST", token: org.token });
    const denied = await decide(key, mandate.id, { ...CAPTURE, grant: false });
    const pack = await packOf(org, denied.json.id);
    expect(await verifyPack(pack)).toEqual([]);
    expect(pack).toMatchObject({ grant: null, redemption: null, mandate: { status: "revoked" } });
    expect(pack.ledger.map((l: Json) => l.entry.type)).toEqual([
      "action_mandate.created",
      "action_mandate.revoked",
      "action_decision.created",
    ]);
  });

  it("of an ALLOW whose grant is still unredeemed verifies, without a redemption", async () => {
    const org = await newOrg();
    const { decision } = await allowed(org);
    const pack = await packOf(org, decision.id);
    expect(await verifyPack(pack)).toEqual([]);
    expect(pack).toMatchObject({ redemption: null, decision: { grant_status: "issued" } });
  });

  it.each<[string, (pack: Json) => void, string[]]>([
    ["the decision's amount", (p) => (p.decision.amount = 1), ["pack signature", "decision"]],
    [
      "a payload",
      (p) => (p.ledger[1].payload.amount = 1),
      ["pack signature", "entry ? digest", "decision"],
    ],
    [
      "an entry's time",
      (p) => (p.ledger[0].entry.time = "2020-01-01T00:00:00.000Z"),
      ["pack signature", "entry ? hash"],
    ],
    [
      "an entry's hash",
      (p) => (p.ledger[0].hash = "00".repeat(32)),
      ["pack signature", "entry ? leaf hash"],
    ],
    [
      "the checkpoint root",
      (p) => (p.checkpoint.root_hash = "11".repeat(32)),
      ["pack signature", "checkpoint note"],
    ],
    ["the grant", (p) => (p.grant.claims.amount = 1), ["pack signature", "grant"]],
    [
      "a key",
      (p) => (p.keys[0].x = p.keys[0].x.replace(/^./, (c: string) => (c === "A" ? "B" : "A"))),
      ["pack signature", "checkpoint signature"],
    ],
  ])("is refused when %s is changed", async (_, tamper, expected) => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    await redeem(executor.key, { grant, ...CAPTURE });
    const pack = await packOf(org, decision.id);
    tamper(pack);
    const problems = (await verifyPack(pack)).map((p) => p.replace(/entry \d+/, "entry ?"));
    for (const problem of expected) expect(problems).toContain(problem);
  });

  it("answers 404 for a decision that does not exist", async () => {
    const org = await newOrg();
    const res = await call(
      "/v1/action-decisions/0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e/incident-pack",
      {
        token: org.token,
      },
    );
    expect(res.status).toBe(404);
  });
});
