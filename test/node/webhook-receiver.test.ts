import { generateKeyPairSync, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookReceiver } from "../../docs/examples/webhook-receiver";
import type { Delivery } from "../../docs/examples/webhook-verify";

// The receiver guide's complete example (docs/examples/webhook-receiver.ts), run as a user
// would run it, against deliveries signed here with node:crypto the way the service signs
// them (docs/webhooks.md): a detached EdDSA JWS over the exact body.

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const kid = "test-key";
const jwk = { ...publicKey.export({ format: "jwk" }), kid, alg: "EdDSA", use: "sig" };

const ENDPOINT_ID = "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e";

function signed(body: object, iat = Math.floor(Date.now() / 1000), endpointId = ENDPOINT_ID) {
  const raw = Buffer.from(JSON.stringify(body));
  const header = Buffer.from(
    JSON.stringify({ alg: "EdDSA", kid, typ: "webhook+jws", iat, endpoint_id: endpointId }),
  ).toString("base64url");
  const input = Buffer.from(`${header}.${raw.toString("base64url")}`);
  const signature = sign(null, input, privateKey).toString("base64url");
  return { raw, signature: `${header}..${signature}` };
}

let keyServer: Server;
let receiver: Server;
let url: string;
const handled: Delivery[] = [];
const seen = new Set<string>();
let failNext = false;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  keyServer = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] })),
  );
  const serviceUrl = await listen(keyServer);
  receiver = webhookReceiver({
    serviceUrl,
    endpointId: ENDPOINT_ID,
    token: "shared-token-0123456789",
    remember: async (id) => !seen.has(id) && Boolean(seen.add(id)),
    forget: async (id) => void seen.delete(id),
    handle: async (delivery) => {
      if (failNext) {
        failNext = false;
        throw new Error("downstream unavailable");
      }
      handled.push(delivery);
    },
  });
  url = await listen(receiver);
});

afterAll(() => {
  receiver.close();
  keyServer.close();
});

async function deliver(
  raw: Buffer,
  signature: string,
  headers: Record<string, string> = { "x-service-token": "shared-token-0123456789" },
) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "x-service-signature": signature, "x-service-key-id": kid, ...headers },
    body: raw,
  });
  return res.status;
}

describe("the example receiver", () => {
  const body = (id: string) => ({
    id,
    type: "assessment.denied",
    created: 1,
    livemode: true,
    data: {},
  });

  it("processes a verified delivery once, however often it arrives", async () => {
    const { raw, signature } = signed(body("d-1"));
    expect(await deliver(raw, signature)).toBe(200);
    expect(await deliver(raw, signature)).toBe(200);
    expect(handled.filter((d) => d.id === "d-1")).toHaveLength(1);
  });

  it("refuses a changed body, a stale signature, a missing signature, and a wrong token", async () => {
    const { raw, signature } = signed(body("d-2"));
    const changed = Buffer.from(raw.toString().replace("d-2", "d-3"));
    expect(await deliver(changed, signature)).toBe(400);
    const old = signed(body("d-4"), Math.floor(Date.now() / 1000) - 3600);
    expect(await deliver(old.raw, old.signature)).toBe(400);
    expect(await deliver(raw, "")).toBe(400);
    expect(await deliver(raw, signature, { "x-service-token": "wrong" })).toBe(401);
    expect(handled.map((d) => d.id)).not.toContain("d-2");
  });

  it("refuses a delivery signed for another endpoint (a replay across endpoints)", async () => {
    const other = signed(body("d-6"), undefined, "0190b7d2-8c5e-7c4a-9d3e-000000000000");
    expect(await deliver(other.raw, other.signature)).toBe(400);
    expect(handled.map((d) => d.id)).not.toContain("d-6");
  });

  it("a failure while processing answers 500 and the retry is processed", async () => {
    const { raw, signature } = signed(body("d-5"));
    failNext = true;
    expect(await deliver(raw, signature)).toBe(500);
    expect(await deliver(raw, signature)).toBe(200);
    expect(handled.filter((d) => d.id === "d-5")).toHaveLength(1);
  });
});
