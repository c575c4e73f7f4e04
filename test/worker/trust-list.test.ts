import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { noteSigningKey } from "../../src/webhooks/key-rotation";
import worker from "../../workers/main";
import { BASE, call, callRaw } from "./support/api";
import { newServiceKey, publishedKeys, seedKeyWindow, verifyOffline } from "./support/artifacts";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// Every `typ` the service key signs, written out here (test/node/artifact-receipt-offline.test.ts
// also derives them from src/ by grep, so a new signer cannot be missed).
const PURPOSES = [
  "risk-payload+jwt",
  "action-grant+jwt",
  "action-redemption+jwt",
  "incident-pack+jws",
  "artifact-receipt+jwt",
  "coverage-report+jwt",
  "tlog-checkpoint",
  "webhook+jws",
  "trust-list+jwt",
  "risk-model-card+jwt",
];

// What the ES256 key signs (issue 42): the artefacts a verifier without EdDSA checks.
const ES256_PURPOSES = [
  "ap2-mandate-receipt+jwt",
  "statuslist+jwt",
  "mandate-budget+jwt",
  "risk-check+jwt",
  "acp-risk-signals+jwt",
];

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The Cron sweep's step that notes the deployed key (without the sweep's other work). */
async function noteDeployedKey() {
  await noteSigningKey(env);
}

async function fetchWith(keys: Partial<typeof env>) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${BASE}/v1/trust-list`), { ...env, ...keys }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("GET /v1/trust-list", () => {
  it("publishes the keys with their windows and where to verify, signed, cached five minutes, without a credential", async () => {
    // The Cron sweep notes the deployed key in signing_keys: that is where windows come from.
    await noteDeployedKey();
    const res = await call("/v1/trust-list");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const [current, es256] = await publishedKeys();
    const [noted] =
      await ownerSql`select first_seen_at from signing_keys where kid = ${current?.kid}`;
    const { jws, ...list } = res.json;
    expect(list).toEqual({
      object: "trust_list",
      // The configured public origin, not the host the request was sent to.
      issuer: env.PUBLIC_BASE_URL,
      issued_at: expect.stringMatching(ISO_MS),
      expires_at: expect.stringMatching(ISO_MS),
      keys: [
        {
          kid: current?.kid,
          jwk: current,
          status: "current",
          valid_from: new Date(noted?.first_seen_at).toISOString(),
          valid_until: null,
          purposes: PURPOSES,
        },
        {
          kid: es256?.kid,
          jwk: es256,
          status: "current",
          // The sweep notes the Ed25519 key's windows; the ES256 key has none yet.
          valid_from: null,
          valid_until: null,
          purposes: ES256_PURPOSES,
        },
      ],
      // Relative to `issuer`, the one absolute value of the list.
      transparency: {
        key_set: "/.well-known/jwks.json",
        logs: "/v1/transparency/logs/{log_id}",
        checkpoints: "/v1/transparency/logs/{log_id}/checkpoints",
        consistency: "/v1/transparency/logs/{log_id}/consistency?first={first}&second={second}",
        proofs: "/v1/transparency/proofs/{leaf_hash}",
        verify_artifact: "/v1/verify/artifact",
      },
    });
    // A relying party refuses the list a day after it was issued.
    expect(Date.parse(list.expires_at) - Date.parse(list.issued_at)).toBe(24 * 60 * 60 * 1000);
    // The links work from the issuer, without a credential.
    const keySet = await callRaw(list.transparency.key_set);
    expect(keySet.json.keys).toEqual([current, es256]);
  });

  it("lists a retired key with exactly the window the sweep noted", async () => {
    const old = await newServiceKey();
    const cleanup = await seedKeyWindow(
      old.published,
      "2026-03-01T08:00:00.000Z",
      "2026-09-15T17:30:00.250Z",
    );
    try {
      const res = await fetchWith({ SIGNING_KEYS_RETIRED: JSON.stringify([old.retiredEntry]) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { keys: unknown[]; jws: string };
      expect(body.keys[2]).toEqual({
        kid: old.published.kid,
        jwk: old.published,
        status: "retired",
        valid_from: "2026-03-01T08:00:00.000Z",
        valid_until: "2026-09-15T17:30:00.250Z",
        purposes: PURPOSES,
      });
      expect(body.keys).toHaveLength(3);
      expect(body.keys[0]).toMatchObject({ status: "current", valid_until: null });
      expect(body.keys[1]).toMatchObject({ status: "current", valid_until: null });
      // The window is in the signed payload, not only beside it.
      const signed = JSON.parse(verifyOffline(body.jws, await publishedKeys()).payload);
      expect(signed.keys[2]).toEqual(body.keys[2]);
    } finally {
      await cleanup();
    }
  });

  it("is signed (node:crypto, the published key) over exactly the list without `jws`", async () => {
    const res = await call("/v1/trust-list");
    const { jws, ...list } = res.json;
    const keys = await publishedKeys();
    const checked = verifyOffline(jws, keys);
    expect(checked.valid).toBe(true);
    expect(checked.header).toEqual({ alg: "EdDSA", kid: keys[0]?.kid, typ: "trust-list+jwt" });
    expect(JSON.parse(checked.payload)).toEqual(list);
    // A changed list no longer matches its signature.
    const [h, , s] = jws.split(".");
    const changed = Buffer.from(JSON.stringify({ ...list, keys: [] })).toString("base64url");
    expect(verifyOffline(`${h}.${changed}.${s}`, keys).valid).toBe(false);
  });

  it("lists a retired key still published after the current one, with the window the sweep noted, and a new key not yet noted without one", async () => {
    await noteDeployedKey();
    const [deployed] = await publishedKeys();
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const rotated = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
    const retired = JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: deployed?.x }]);
    const res = await fetchWith({ SIGNING_KEY: rotated, SIGNING_KEYS_RETIRED: retired });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { keys: Record<string, unknown>[]; jws: string };
    const [noted] = await ownerSql`select first_seen_at, retired_at from signing_keys
      where kid = ${deployed?.kid}`;
    expect(body.keys.map((k) => [k.status, k.valid_from])).toEqual([
      ["current", null],
      ["current", null],
      ["retired", new Date(noted?.first_seen_at).toISOString()],
    ]);
    expect(body.keys[2]).toMatchObject({
      kid: deployed?.kid,
      jwk: deployed,
      // As the table says: still open until a sweep runs with the new key.
      valid_until: noted?.retired_at ? new Date(noted.retired_at).toISOString() : null,
    });
    // Signed by the new current key.
    const newKey = body.keys[0]?.jwk as { kid: string; x: string };
    expect(verifyOffline(body.jws, [newKey]).valid).toBe(true);
  });

  it("answers 503 when the signing key is unavailable, never an unsigned list", async () => {
    for (const SIGNING_KEY of [undefined, "not json", '{"kty":"OKP","crv":"Ed25519"}']) {
      const res = await fetchWith({ SIGNING_KEY } as Partial<typeof env>);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual(errorBody("signing_key_unavailable"));
    }
  });
});
