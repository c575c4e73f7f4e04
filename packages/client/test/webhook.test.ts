import { CompactSign, exportJWK, generateKeyPair, type JWK } from "jose";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { VerificationError, verifyWebhook } from "../src/index.js";

// verifyWebhook against deliveries signed here as src/webhooks/deliver.ts signs them: the
// Standard Webhooks HMAC made by the reference `standardwebhooks` package, and the service's
// detached EdDSA JWS. Deliveries from the real Worker are verified in test/worker/client.test.ts.

const newSecret = () =>
  `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;
const SECRET = newSecret();
const ENDPOINT = "ep_1";
let privateKey: CryptoKey;
let jwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1" };
});

const event = (id: string) => ({
  id,
  type: "assessment.denied",
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  data: {
    assessment_id: "asm_1",
    decision: "deny",
    risk_level: "highest",
    risk_score: 91,
    agent_id: null,
    kind: "ap2_payment",
  },
});

async function delivery(
  options: { id?: string; at?: Date; secret?: string; endpoint?: string } = {},
) {
  const id = options.id ?? `msg_${crypto.randomUUID()}`;
  const at = options.at ?? new Date();
  const raw = JSON.stringify(event(id));
  const timestamp = Math.floor(at.getTime() / 1000);
  const header = { alg: "EdDSA", kid: "k1", typ: "webhook+jws", iat: timestamp };
  const jws = await new CompactSign(new TextEncoder().encode(raw))
    .setProtectedHeader({ ...header, endpoint_id: options.endpoint ?? ENDPOINT, log_id: "l" })
    .sign(privateKey);
  const [h, , s] = jws.split(".");
  const headers: Record<string, string> = {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": new Webhook(options.secret ?? SECRET).sign(id, at, raw),
    "x-service-signature": `${h}..${s}`,
    "x-service-key-id": "k1",
  };
  return { raw, headers };
}

async function refusal(raw: string, headers: Record<string, string>, options: object) {
  const error = await verifyWebhook(raw, headers, options).catch((e) => e);
  expect(error).toBeInstanceOf(VerificationError);
  return (error as VerificationError).code;
}

describe("verifyWebhook", () => {
  it("verifies both signatures and returns the typed event", async () => {
    const { raw, headers } = await delivery();
    const verified = await verifyWebhook(raw, new Headers(headers), {
      jwks: { keys: [jwk] },
      secret: SECRET,
      endpointId: ENDPOINT,
    });
    expect(verified).toEqual(JSON.parse(raw));
    if (verified.type === "assessment.denied") expect(verified.data.risk_score).toBe(91);
  });

  it("accepts the Standard Webhooks signature alone, from the reference library", async () => {
    const { raw, headers } = await delivery();
    expect((await verifyWebhook(raw, headers, { secret: SECRET })).id).toBe(headers["webhook-id"]);
  });

  it("accepts the service's JWS alone, over the raw bytes", async () => {
    const { raw, headers } = await delivery();
    const bytes = new TextEncoder().encode(raw);
    expect(
      (await verifyWebhook(bytes, headers, { jwks: { keys: [jwk] }, endpointId: ENDPOINT })).type,
    ).toBe("assessment.denied");
  });

  it("will not verify by the key set alone without the endpoint id: every org's deliveries share the key", async () => {
    const { raw, headers } = await delivery();
    await expect(verifyWebhook(raw, headers, { jwks: { keys: [jwk] } })).rejects.toThrow(TypeError);
  });

  it("refuses a body changed by one byte, under either signature", async () => {
    const { raw, headers } = await delivery();
    const changed = raw.replace('"risk_score":91', '"risk_score":11');
    expect(await refusal(changed, headers, { secret: SECRET })).toBe("signature_invalid");
    expect(await refusal(changed, headers, { jwks: { keys: [jwk] }, endpointId: ENDPOINT })).toBe(
      "signature_invalid",
    );
  });

  it("refuses another endpoint's secret, and accepts either secret during a rotation", async () => {
    const other = newSecret();
    const { raw, headers } = await delivery();
    expect(await refusal(raw, headers, { secret: other })).toBe("signature_invalid");
    const rotated = { ...headers, "webhook-signature": `v1,AAAA ${headers["webhook-signature"]}` };
    expect((await verifyWebhook(raw, rotated, { secret: [other, SECRET] })).id).toBe(
      headers["webhook-id"],
    );
  });

  it("refuses a delivery signed for another endpoint", async () => {
    const { raw, headers } = await delivery({ endpoint: "ep_2" });
    expect(await refusal(raw, headers, { jwks: { keys: [jwk] }, endpointId: ENDPOINT })).toBe(
      "claim_invalid",
    );
  });

  it("refuses an attempt outside the timestamp window, either way", async () => {
    for (const offset of [-301_000, 301_000]) {
      const { raw, headers } = await delivery({ at: new Date(Date.now() + offset) });
      expect(await refusal(raw, headers, { secret: SECRET })).toBe("timestamp_out_of_window");
      expect(await refusal(raw, headers, { jwks: { keys: [jwk] }, endpointId: ENDPOINT })).toBe(
        "timestamp_out_of_window",
      );
    }
  });

  it("refuses a body whose id is not webhook-id", async () => {
    const { raw, headers } = await delivery({ id: "msg_a" });
    const other = await delivery({ id: "msg_b" });
    // Headers of msg_b, signed over msg_a's body by nobody: the HMAC already fails; with the
    // JWS alone, the body is msg_a's and the header says msg_b.
    const mixed = {
      ...headers,
      "webhook-id": "msg_b",
      "webhook-signature": other.headers["webhook-signature"] ?? "",
    };
    expect(await refusal(raw, mixed, { jwks: { keys: [jwk] }, endpointId: ENDPOINT })).toBe(
      "claim_invalid",
    );
  });

  it("names a missing header", async () => {
    const { raw, headers } = await delivery();
    const { "webhook-signature": _, ...without } = headers;
    expect(await refusal(raw, without, { secret: SECRET })).toBe("header_missing");
  });
});
