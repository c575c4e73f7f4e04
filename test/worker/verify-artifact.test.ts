import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { fileDigest, verifyAnchor, verifyReceipt } from "../../docs/examples/artifact-verify";
import type { ErrorCode } from "../../src/errors";
import { signer } from "../../src/signing/signer";
import worker from "../../workers/main";
import { BASE, call, newOrg } from "./support/api";
import {
  leafHashOf,
  newServiceKey,
  publishedKeys,
  randomDigest,
  registerArtifact,
  seedKeyWindow,
  verifyOffline,
} from "./support/artifacts";
import { appSql, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { anchor, rfcVerifyInclusion } from "./support/ledger";

async function registered(mode: "live" | "test" = "live", digest = randomDigest()) {
  const org = await newOrg();
  const { key } = await org.key(["artifact:write", "audit:read"], mode);
  const res = await registerArtifact({ key }, { digest, name: "secret-merger-plan.pdf" });
  if (res.status !== 201) throw new Error(res.text);
  return { org, key, digest, artifact: res.json };
}

function verify(query: Record<string, string>) {
  return call(`/v1/verify/artifact?${new URLSearchParams(query)}`);
}

function claimsOf(receipt: string) {
  return JSON.parse(Buffer.from(receipt.split(".")[1] ?? "", "base64url").toString("utf8"));
}

const UNKNOWN_ANCHOR = {
  status: "unknown",
  log_id: null,
  leaf_hash: null,
  leaf_index: null,
  tree_size: null,
  audit_path: null,
  checkpoint: null,
};

describe("GET /v1/verify/artifact with a receipt", () => {
  it("answers valid, with the signed claims, the current key and a pending anchor, without a credential", async () => {
    const { org, digest, artifact } = await registered();
    const res = await verify({ receipt: artifact.receipt, digest });
    expect(res.status).toBe(200);
    const [current] = await publishedKeys();
    const claims = claimsOf(artifact.receipt);
    expect(res.json).toEqual({
      object: "artifact_verification",
      valid: true,
      reasons: [],
      receipt: { signature_valid: true, kid: current?.kid, key_status: "current", claims },
      digest: { value: digest, matches: true, registered: null },
      anchor: {
        status: "pending",
        log_id: claims.log_id,
        leaf_hash: claims.entry.leaf_hash,
        leaf_index: artifact.audit.sequence - 1,
        tree_size: null,
        audit_path: null,
        checkpoint: null,
      },
    });
    // Nothing the holder does not already hold: no name, no metadata.
    expect(res.text).not.toContain("secret-merger-plan");
    expect(claims.org).toBe(org.id);
  });

  it("answers anchored once a checkpoint covers the entry, with a proof that verifies by hand", async () => {
    const { org, artifact } = await registered();
    const checkpoint = await anchor(org.id);
    const res = await verify({ receipt: artifact.receipt });
    expect(res.json.valid).toBe(true);
    expect(res.json.digest).toBeNull();
    const proof = res.json.anchor;
    expect(proof).toMatchObject({ status: "anchored", tree_size: checkpoint?.tree_size });
    const claims = claimsOf(artifact.receipt);
    expect(proof.leaf_hash).toBe(leafHashOf(claims.entry.hash));
    expect(
      await rfcVerifyInclusion(
        proof.leaf_hash!,
        proof.leaf_index!,
        proof.tree_size!,
        proof.audit_path!,
        proof.checkpoint!.root_hash,
      ),
    ).toBe(true);
    expect(verifyOffline(proof.checkpoint!.jws, await publishedKeys()).valid).toBe(true);
  });

  it("answers digest_mismatch for a digest the receipt does not sign", async () => {
    const { artifact } = await registered();
    const other = randomDigest();
    const res = await verify({ receipt: artifact.receipt, digest: other });
    expect(res.status).toBe(200);
    expect(res.json.valid).toBe(false);
    expect(res.json.reasons).toEqual([
      { code: "digest_mismatch", message: "the digest is not the one the receipt signs" },
    ]);
    expect(res.json.receipt!.signature_valid).toBe(true);
    expect(res.json.digest).toEqual({ value: other, matches: false, registered: null });
  });

  it("answers signature_invalid for a receipt whose payload was re-encoded with another digest", async () => {
    const { artifact } = await registered();
    const [h, , s] = artifact.receipt.split(".");
    const claims = { ...claimsOf(artifact.receipt), digest: randomDigest() };
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
    const res = await verify({ receipt: forged, digest: claims.digest });
    expect(res.status).toBe(200);
    const [current] = await publishedKeys();
    expect(res.json).toEqual({
      object: "artifact_verification",
      valid: false,
      reasons: [{ code: "signature_invalid", message: "the signature does not verify" }],
      receipt: { signature_valid: false, kid: current?.kid, key_status: "current", claims: null },
      digest: { value: claims.digest, matches: null, registered: null },
      anchor: UNKNOWN_ANCHOR,
    });
  });

  it("answers signature_invalid for a flipped signature byte", async () => {
    const { artifact } = await registered();
    const [h, p, s] = artifact.receipt.split(".");
    const signature = Buffer.from(s!, "base64url");
    signature[10] = (signature[10] ?? 0) ^ 0x01;
    const res = await verify({ receipt: `${h}.${p}.${signature.toString("base64url")}` });
    expect(res.json.valid).toBe(false);
    expect(res.json.reasons.map((r: { code: string }) => r.code)).toEqual(["signature_invalid"]);
    expect(res.json.receipt!.claims).toBeNull();
  });

  it("answers unknown_key for a receipt signed by a key the service does not publish", async () => {
    const { artifact } = await registered();
    const { privateKey, publicKey } = await generateKeyPair("EdDSA");
    const jwk = await exportJWK(publicKey);
    const stranger = await new SignJWT(claimsOf(artifact.receipt))
      .setProtectedHeader({ alg: "EdDSA", kid: `${jwk.x}`, typ: "artifact-receipt+jwt" })
      .sign(privateKey);
    const res = await verify({ receipt: stranger });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      valid: false,
      reasons: [{ code: "unknown_key" }],
      receipt: { signature_valid: false, kid: jwk.x, key_status: "unknown", claims: null },
      anchor: UNKNOWN_ANCHOR,
    });
  });

  it("answers not_a_receipt for another token the service signed (a different typ)", async () => {
    const { artifact } = await registered();
    const key = await signer(env);
    const other = await key.signClaims(claimsOf(artifact.receipt), "action-grant+jwt");
    const res = await verify({ receipt: other });
    expect(res.json).toMatchObject({
      valid: false,
      reasons: [{ code: "not_a_receipt" }],
      receipt: { signature_valid: true, key_status: "current", claims: null },
    });
  });

  it("answers not_found for a well-signed receipt naming an entry the ledger does not hold", async () => {
    const { artifact } = await registered();
    const claims = claimsOf(artifact.receipt);
    const hash = "cd".repeat(32);
    const made = { ...claims, entry: { ...claims.entry, hash, leaf_hash: leafHashOf(hash) } };
    const receipt = await (await signer(env)).signClaims(made, "artifact-receipt+jwt");
    const res = await verify({ receipt });
    expect(res.json).toMatchObject({
      valid: false,
      reasons: [{ code: "not_found" }],
      receipt: { signature_valid: true, claims: made },
      anchor: UNKNOWN_ANCHOR,
    });
  });

  it("answers entry_mismatch for a receipt naming another org's entry", async () => {
    const { artifact } = await registered();
    const theirs = claimsOf((await registered()).artifact.receipt);
    const made = { ...claimsOf(artifact.receipt), entry: theirs.entry };
    const receipt = await (await signer(env)).signClaims(made, "artifact-receipt+jwt");
    const res = await verify({ receipt });
    expect(res.json.valid).toBe(false);
    expect(res.json.reasons.map((r: { code: string }) => r.code)).toEqual(["entry_mismatch"]);
  });

  it("answers entry_mismatch when the stored entry was rewritten after the receipt was signed", async () => {
    const { org, artifact } = await registered();
    await ownerSql`update audit_entries set type = 'forged'
      where org_id = ${org.id} and sequence = ${artifact.audit.sequence}`;
    const res = await verify({ receipt: artifact.receipt });
    expect(res.json).toMatchObject({
      valid: false,
      reasons: [{ code: "entry_mismatch", message: "the ledger entry is not the one signed" }],
      receipt: { signature_valid: true },
      anchor: UNKNOWN_ANCHOR,
    });
  });

  it("answers malformed_receipt for a signature whose last character differs only in its unused bits", async () => {
    const { artifact } = await registered();
    const [h, p, s] = artifact.receipt.split(".");
    // 64 bytes are 86 characters: the last carries 2 bits and 4 unused ones, which a lenient
    // decoder ignores. Flipping the lowest unused bit gives the same signature bytes.
    const last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const flipped = `${s!.slice(0, -1)}${last[last.indexOf(s!.at(-1) ?? "A") ^ 1]}`;
    expect(Buffer.from(flipped, "base64url")).toEqual(Buffer.from(s!, "base64url"));
    const res = await verify({ receipt: `${h}.${p}.${flipped}` });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "artifact_verification",
      valid: false,
      reasons: [
        { code: "malformed_receipt", message: "a part is not canonical unpadded base64url" },
      ],
      receipt: { signature_valid: false, kid: null, key_status: "unknown", claims: null },
      digest: null,
      anchor: UNKNOWN_ANCHOR,
    });
  });

  it.each([
    ["an extra claim", (claims: Record<string, unknown>) => ({ ...claims, admin: true })],
    ["a missing claim", ({ entry: _, ...claims }: Record<string, unknown>) => claims],
    ["a digest of another shape", (claims: Record<string, unknown>) => ({ ...claims, digest: 7 })],
  ])(
    "answers not_a_receipt for a receipt-typed token the service signed with %s",
    async (_, change) => {
      const { artifact } = await registered();
      const key = await signer(env);
      const token = await key.signClaims(
        change(claimsOf(artifact.receipt)),
        "artifact-receipt+jwt",
      );
      const res = await verify({ receipt: token });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        object: "artifact_verification",
        valid: false,
        reasons: [
          { code: "not_a_receipt", message: "signed by this service, but not an artifact receipt" },
        ],
        receipt: { signature_valid: true, kid: key.kid, key_status: "current", claims: null },
        digest: null,
        anchor: UNKNOWN_ANCHOR,
      });
    },
  );

  it("answers digest_not_registered for a well-signed receipt whose artifact is not registered with its digest, org and mode", async () => {
    const { artifact } = await registered();
    const other = await registered();
    const claims = claimsOf(artifact.receipt);
    const key = await signer(env);
    const reasonsFor = async (made: Record<string, unknown>) => {
      const res = await verify({ receipt: await key.signClaims(made, "artifact-receipt+jwt") });
      expect(res.status).toBe(200);
      expect(res.json.valid).toBe(false);
      expect(res.json.receipt!.signature_valid).toBe(true);
      return res.json.reasons;
    };
    const notRegistered = {
      code: "digest_not_registered",
      message: "no artifact with this id is registered with this digest, org and mode",
    };
    // The entry is the real one (it does not carry the digest): only the row tells.
    expect(await reasonsFor({ ...claims, digest: randomDigest() })).toEqual([notRegistered]);
    expect(await reasonsFor({ ...claims, digest: other.digest })).toEqual([notRegistered]);
    expect(await reasonsFor({ ...claims, livemode: false })).toEqual([notRegistered]);
    expect(await reasonsFor({ ...claims, sub: other.artifact.id })).toEqual([
      { code: "entry_mismatch", message: "the ledger entry is not the one signed" },
      notRegistered,
    ]);
  });

  it("answers signed_after_retirement for a receipt its retired key signed after the window the sweep noted closed", async () => {
    const { artifact } = await registered();
    const claims = claimsOf(artifact.receipt);
    const old = await newServiceKey();
    const retiredAt = new Date(Date.now() - 3_600_000);
    const cleanup = await seedKeyWindow(
      old.published,
      "2026-01-01T00:00:00.000Z",
      retiredAt.toISOString(),
    );
    try {
      const verifyWith = async (made: Record<string, unknown>) => {
        const receipt = await old.key.signClaims(made, "artifact-receipt+jwt");
        const ctx = createExecutionContext();
        const res = await worker.fetch(
          new Request(`${BASE}/v1/verify/artifact?${new URLSearchParams({ receipt })}`),
          { ...env, SIGNING_KEYS_RETIRED: JSON.stringify([old.retiredEntry]) },
          ctx,
        );
        await waitOnExecutionContext(ctx);
        return (await res.json()) as { valid: boolean; reasons: unknown[]; receipt: any };
      };
      const late = await verifyWith(claims);
      expect(late).toMatchObject({
        valid: false,
        reasons: [
          { code: "signed_after_retirement", message: "issued after its signing key was retired" },
        ],
        receipt: { signature_valid: true, kid: old.published.kid, key_status: "retired" },
      });
      // Issued (by its iat) before the window closed: valid, named retired.
      const before = Math.floor(retiredAt.getTime() / 1000) - 60;
      const inTime = await verifyWith({ ...claims, iat: before });
      expect(inTime).toMatchObject({
        valid: true,
        reasons: [],
        receipt: { key_status: "retired" },
      });
    } finally {
      await cleanup();
    }
  });

  it("verifies a test-mode receipt, whose claims say livemode false", async () => {
    const { artifact } = await registered("test");
    const res = await verify({ receipt: artifact.receipt });
    expect(res.json.valid).toBe(true);
    expect(res.json.receipt!.claims!.livemode).toBe(false);
  });

  it("still verifies a receipt signed by a retired key that remains published, naming it retired", async () => {
    const { artifact } = await registered();
    const [current] = await publishedKeys();
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const rotated = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
    const retired = JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: current?.x }]);
    const query = new URLSearchParams({ receipt: artifact.receipt });
    const fetchWith = async (keys: Partial<typeof env>) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${BASE}/v1/verify/artifact?${query}`),
        { ...env, ...keys },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return (await res.json()) as { valid: boolean; reasons: { code: string }[]; receipt: any };
    };
    const kept = await fetchWith({ SIGNING_KEY: rotated, SIGNING_KEYS_RETIRED: retired });
    expect(kept.valid).toBe(true);
    expect(kept.receipt.key_status).toBe("retired");
    // Dropped from the published set: no longer trusted.
    const dropped = await fetchWith({ SIGNING_KEY: rotated, SIGNING_KEYS_RETIRED: "[]" });
    expect(dropped.valid).toBe(false);
    expect(dropped.reasons.map((r) => r.code)).toEqual(["unknown_key"]);
  });
});

describe("GET /v1/verify/artifact with a digest alone", () => {
  it("proves a live registration exists, with its anchor, and reveals no org, name or time", async () => {
    const { org, key, digest, artifact } = await registered();
    await anchor(org.id);
    const res = await verify({ digest });
    expect(res.status).toBe(200);
    const claims = claimsOf(artifact.receipt);
    // The proof the org itself sees for its artifact, against the same newest checkpoint.
    const own = (await call(`/v1/artifacts/${artifact.id}`, { key })).json.anchor;
    expect(own).toMatchObject({ status: "anchored", log_id: claims.log_id });
    expect(res.json).toEqual({
      object: "artifact_verification",
      // Not a verdict on anything the caller holds: the answer is `registered`.
      valid: null,
      reasons: [],
      receipt: null,
      digest: { value: digest, matches: null, registered: true },
      anchor: {
        status: "anchored",
        log_id: claims.log_id,
        leaf_hash: claims.entry.leaf_hash,
        leaf_index: artifact.audit.sequence - 1,
        tree_size: own.tree_size,
        audit_path: own.audit_path,
        checkpoint: own.checkpoint,
      },
    });
    expect(res.text).not.toContain(org.id);
    expect(res.text).not.toContain("secret-merger-plan");
    expect(res.text).not.toContain(artifact.id);
    expect(res.text).not.toContain(artifact.created);
  });

  it("answers not registered for an unknown digest and for a test-mode registration", async () => {
    const { digest: testOnly } = await registered("test");
    for (const digest of [randomDigest(), testOnly]) {
      const res = await verify({ digest });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        object: "artifact_verification",
        valid: null,
        reasons: [{ code: "not_found", message: "no live registration of this digest" }],
        receipt: null,
        digest: { value: digest, matches: null, registered: false },
        anchor: UNKNOWN_ANCHOR,
      });
    }
  });

  it("answers with the earliest live registration when several orgs registered the digest", async () => {
    const first = await registered();
    const second = await registered("live", first.digest);
    const res = await verify({ digest: first.digest });
    const logOf = (a: { receipt: string }) => claimsOf(a.receipt).log_id;
    expect(logOf(first.artifact)).not.toBe(logOf(second.artifact));
    expect(res.json.anchor.log_id).toBe(logOf(first.artifact));
    expect(res.json.anchor.status).toBe("pending");
    expect(res.json.valid).toBeNull();
  });

  it("answers a registration pending, then anchored once a checkpoint covers it", async () => {
    const { org, digest } = await registered();
    expect((await verify({ digest })).json.anchor.status).toBe("pending");
    await anchor(org.id);
    expect((await verify({ digest })).json.anchor.status).toBe("anchored");
  });
});

describe("GET /v1/verify/artifact when the ledger object fails", () => {
  /** A ledger namespace whose objects fail every call with `message` (or are missing). */
  function failingLedger(message: string) {
    return {
      idFromName: (name: string) => env.ORG_LEDGER?.idFromName(name),
      get: () => ({ inclusion: () => Promise.reject(new Error(message)) }),
    };
  }

  it.each([
    ["an unexpected error", failingLedger("boom"), "ledger_unavailable"],
    ["its database outage", failingLedger("ledger_unavailable: down"), "database_unavailable"],
    ["no ledger binding", undefined, "ledger_unavailable"],
  ])("answers 503, never 500, for %s", async (_, ORG_LEDGER, error) => {
    const { digest, artifact } = await registered();
    const queries: Record<string, string>[] = [{ receipt: artifact.receipt }, { digest }];
    for (const query of queries) {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${BASE}/v1/verify/artifact?${new URLSearchParams(query)}`),
        { ...env, ORG_LEDGER } as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual(errorBody(error as ErrorCode));
    }
  });
});

describe("GET /v1/verify/artifact with malformed input", () => {
  it.each([
    ["nothing", ""],
    ["an uppercase digest", `digest=sha256:${"AB".repeat(32)}`],
    ["a digest of the wrong length", `digest=sha256:${"ab".repeat(31)}`],
    ["a receipt that is not a compact JWS", "receipt=not-a-jws"],
    ["a receipt with four parts", "receipt=a.b.c.d"],
    ["a receipt with characters outside base64url", "receipt=a.b+c.d"],
    // `+` in a query is a space; `%2B` is a real `+`, base64 but not base64url.
    ["a receipt with an escaped + (base64, not base64url)", "receipt=a.b%2Bc.d"],
    ["a receipt with an escaped /", "receipt=a.b%2Fc.d"],
    ["a receipt over 4096 characters", `receipt=${"a".repeat(2048)}.${"b".repeat(2048)}.c`],
  ])("answers 400 invalid_request for %s", async (_, query) => {
    const res = await call(`/v1/verify/artifact?${query}`);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it.each([
    ["beside a digest", { digest: `sha256:${"ab".repeat(32)}`, digets: "x" }, "digets"],
    ["beside a receipt", { receipt: "aaaa.bbbb.cccc", format: "json" }, "format"],
    ["alone", { org: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e" }, "org"],
  ])("answers 400 invalid_request naming an unknown parameter given %s", async (_, query, name) => {
    const res = await verify(query);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    const messages = res.error.details.map((d: { message: string }) => d.message).join(" ");
    expect(messages).toContain(`"${name}"`);
  });

  it("answers 200 malformed_receipt for three base64url parts that are not JSON", async () => {
    const res = await verify({ receipt: "aaaa.bbbb.cccc" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "artifact_verification",
      valid: false,
      reasons: [
        {
          code: "malformed_receipt",
          message: "not a compact JWS with a JSON protected header",
        },
      ],
      receipt: { signature_valid: false, kid: null, key_status: "unknown", claims: null },
      digest: null,
      anchor: UNKNOWN_ANCHOR,
    });
  });
});

describe("the public digest lookup in the database", () => {
  it("lets app.artifact_digest see the live rows of exactly that digest, in any org, and nothing else", async () => {
    const digest = randomDigest();
    const a = await registered("live", digest);
    await registered("live", digest);
    await registered("test", digest);
    await registered();
    const [, same, all, entries] = await appSql.transaction((sql) => [
      sql`select set_config('app.artifact_digest', ${digest}, true)`,
      sql`select org_id, livemode from artifacts where digest = ${digest}`,
      sql`select count(*)::int as n from artifacts`,
      sql`select count(*)::int as n from audit_entries`,
    ]);
    expect(same?.map((r) => r.livemode)).toEqual([true, true]);
    expect(same?.map((r) => r.org_id)).toContain(a.org.id);
    expect(all?.[0]?.n).toBe(2);
    expect(entries?.[0]?.n).toBe(0);
    const [none] = await appSql.transaction((sql) => [
      sql`select count(*)::int as n from artifacts`,
    ]);
    expect(none?.[0]?.n).toBe(0);
  });

  it("lets app.artifact_id with app.artifact_digest see exactly that row, in either mode, and neither alone a test row", async () => {
    const { org, digest, artifact } = await registered("test");
    const see = async (settings: Record<string, string>) => {
      const results = await appSql.transaction((sql) => [
        ...Object.entries(settings).map(([k, v]) => sql`select set_config(${k}, ${v}, true)`),
        sql`select id, org_id, livemode, digest from artifacts`,
      ]);
      return results.at(-1);
    };
    expect(await see({ "app.artifact_id": artifact.id, "app.artifact_digest": digest })).toEqual([
      { id: artifact.id, org_id: org.id, livemode: false, digest },
    ]);
    expect(await see({ "app.artifact_id": artifact.id })).toEqual([]);
    expect(await see({ "app.artifact_digest": digest })).toEqual([]);
    expect(
      await see({ "app.artifact_id": artifact.id, "app.artifact_digest": randomDigest() }),
    ).toEqual([]);
  });

  it("refuses an artifact row for another org and any change to a row", async () => {
    const a = await registered();
    const b = await registered();
    const forged = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.org.id}, true)`,
      sql`insert into artifacts (id, org_id, livemode, digest, name, receipt, created_at,
            audit_entry_id, audit_sequence)
          values (${crypto.randomUUID()}, ${b.org.id}, true, ${randomDigest()}, 'x', 'r', now(),
            ${b.artifact.audit.entry_id}, ${b.artifact.audit.sequence})`,
    ]);
    await expect(forged).rejects.toMatchObject({ code: "42501" });
    const changed = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.org.id}, true)`,
      sql`update artifacts set name = 'changed'`,
    ]);
    await expect(changed).rejects.toMatchObject({ code: "42501" });
  });
});

describe("the holder's verifier (docs/examples/artifact-verify.ts)", () => {
  it("verifies a registered file's receipt and anchor offline, and refuses another file, a forged proof and a stranger's key set", async () => {
    const bytes = new TextEncoder().encode(`contract ${crypto.randomUUID()}`);
    const digest = fileDigest(bytes);
    const { org, artifact } = await registered("live", digest);
    await anchor(org.id);
    const { json: verdict } = await verify({ receipt: artifact.receipt });
    const keys = await publishedKeys();
    // Anchored: the example's verifier takes the anchored shape, its fields no longer null.
    expect(verdict.anchor.status).toBe("anchored");
    const anchored = verdict.anchor as Parameters<typeof verifyAnchor>[1];

    const claims = verifyReceipt(artifact.receipt, keys, digest);
    expect(claims.sub).toBe(artifact.id);
    expect(() => verifyAnchor(claims, anchored, keys)).not.toThrow();

    const other = fileDigest(new TextEncoder().encode("another file"));
    expect(() => verifyReceipt(artifact.receipt, keys, other)).toThrow(/another digest/);
    const forgedRoot = { ...anchored.checkpoint, root_hash: "00".repeat(32) };
    expect(() => verifyAnchor(claims, { ...anchored, checkpoint: forgedRoot }, keys)).toThrow(
      /not for this log/,
    );
    const wrongPath = { ...anchored, audit_path: ["00".repeat(32)] };
    expect(() => verifyAnchor(claims, wrongPath, keys)).toThrow(/does not reach/);
    // Another Ed25519 key under the service's kid: the signature is not its.
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const { x } = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as { x: string };
    const stranger = [{ kid: keys[0]?.kid ?? "", x }];
    expect(() => verifyReceipt(artifact.receipt, stranger, digest)).toThrow(/does not verify/);
    // The same signature bytes spelled with a stray bit in the last character.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = artifact.receipt.at(-1) as string;
    const respelled = `${artifact.receipt.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
    expect(() => verifyReceipt(respelled, keys, digest)).toThrow(/not canonical/);
  });
});
