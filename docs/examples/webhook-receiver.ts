/**
 * A complete agent-risk webhook receiver (docs/webhooks.md): Node 20+, jose.
 *
 *   SERVICE_URL=https://risk.example.com ENDPOINT_ID=... PORT=3000 WEBHOOK_TOKEN=... \
 *     npx tsx webhook-receiver.ts
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRemoteJWKSet } from "jose";
import { type Delivery, verifyDelivery } from "./webhook-verify";

export interface ReceiverOptions {
  /** Where the service publishes /.well-known/jwks.json. */
  serviceUrl: string;
  /** This receiver's endpoint id (the create answer's `id`): deliveries signed for another fail. */
  endpointId: string;
  /** The token set on the endpoint, if one was: checked as well as the signature. */
  token?: string;
  /** Marks a delivery id as seen; false if it was already. Use a table with a unique key. */
  remember: (id: string) => Promise<boolean>;
  /** Forgets an id whose processing failed, so the retry is processed. */
  forget: (id: string) => Promise<void>;
  /** Your business logic. */
  handle: (delivery: Delivery) => Promise<void>;
}

export function webhookReceiver(options: ReceiverOptions): Server {
  // Fetched once, cached, and refetched when a signature names a key not yet seen (rotation).
  const keys = createRemoteJWKSet(new URL("/.well-known/jwks.json", options.serviceUrl));
  return createServer(async (req, res) => {
    if (req.method !== "POST") return res.writeHead(405).end();
    const raw = await readBody(req);
    let delivery: Delivery;
    try {
      delivery = await verifyDelivery(
        raw,
        { signature: header(req, "x-service-signature"), keyId: header(req, "x-service-key-id") },
        keys,
        { endpointId: options.endpointId },
      );
    } catch {
      return res.writeHead(400).end();
    }
    if (options.token !== undefined && !sameText(header(req, "x-service-token"), options.token)) {
      return res.writeHead(401).end();
    }
    // At-least-once delivery: persist the id before processing, answer 2xx to a repeat.
    if (!(await options.remember(delivery.id))) return res.writeHead(200).end();
    try {
      await options.handle(delivery);
      res.writeHead(200).end();
    } catch {
      await options.forget(delivery.id);
      res.writeHead(500).end();
    }
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string | undefined, b: string): boolean {
  const x = Buffer.from(a ?? "");
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// Run directly: an in-memory id store (a real receiver uses its database).
if (process.argv[1]?.endsWith("webhook-receiver.ts")) {
  const seen = new Set<string>();
  webhookReceiver({
    serviceUrl: process.env.SERVICE_URL ?? "http://127.0.0.1:8787",
    endpointId: process.env.ENDPOINT_ID ?? "",
    ...(process.env.WEBHOOK_TOKEN ? { token: process.env.WEBHOOK_TOKEN } : {}),
    remember: async (id) => !seen.has(id) && Boolean(seen.add(id)),
    forget: async (id) => void seen.delete(id),
    handle: async (delivery) => console.log(delivery.type, delivery.id, delivery.data),
  }).listen(Number(process.env.PORT ?? 3000));
}
