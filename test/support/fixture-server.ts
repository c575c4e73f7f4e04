import { createHash, createPublicKey, verify } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { Webhook as StandardWebhook } from "standardwebhooks";
import { fakeStripe } from "./fake-stripe";

// Node loads the package itself: the workers project's setup (this file's importer) runs in
// vitest's module runner, which @cloudflare/vitest-pool-workers makes inline every dependency,
// and Vite then warns that the package's published sourcemap names sources it does not ship.
// (The Worker side pre-bundles it instead: `deps.optimizer` in vitest.config.ts.)
const { Webhook } = createRequire(import.meta.url)("standardwebhooks") as {
  Webhook: typeof StandardWebhook;
};

/**
 * A real HTTP server on loopback for what the Worker fetches from the outside world (Agent
 * Cards now, webhook receivers later). Tests publish a document with `PUT /docs/<name>` and the
 * Worker fetches `GET /docs/<name>` (with an ETag, honouring `If-None-Match`; `GET /gets/<name>`
 * lists those fetches); a few fixed paths misbehave on purpose. Under `/hooks/`
 * it is a webhook receiver (see `receive`); under `/stripe/` a fake Stripe API (fake-stripe.ts).
 */
export async function startFixtureServer(stripe: { secretKey: string; webhookSecret: string }) {
  const stripeApi = fakeStripe(stripe.secretKey, stripe.webhookSecret);
  const docs = new Map<string, { type: string; body: Buffer }>();
  const docGets = new Map<string, { if_none_match: string | string[] | null }[]>();
  const receivers = new Map<string, Receiver>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fixture");
    const hook = /^\/hooks\/([\w-]+)(\/config|\/log)?$/.exec(url.pathname);
    if (hook) return receive(receivers, hook[1] as string, hook[2] ?? "", req, res);
    if (url.pathname.startsWith("/stripe/")) {
      return stripeApi(req, res, url.pathname.slice(7), (await read(req)).toString("utf8"));
    }
    // A signer's key directory at its well-known path (docs/http-signatures.md) is the document
    // published as `well-known-directory`.
    const name = url.pathname.startsWith("/docs/")
      ? url.pathname.slice(6)
      : url.pathname === "/.well-known/http-message-signatures-directory"
        ? "well-known-directory"
        : null;
    if (name && req.method === "PUT") {
      docs.set(name, {
        type: req.headers["content-type"] ?? "application/json",
        body: await read(req),
      });
      res.writeHead(204).end();
    } else if (name && req.method === "GET" && docs.has(name)) {
      const doc = docs.get(name) as { type: string; body: Buffer };
      // Each GET is counted with the validator it carried; the ETag is the body's digest.
      const ifNoneMatch = req.headers["if-none-match"] ?? null;
      docGets.set(name, [...(docGets.get(name) ?? []), { if_none_match: ifNoneMatch }]);
      const etag = `"${createHash("sha256").update(doc.body).digest("base64url")}"`;
      if (ifNoneMatch === etag) res.writeHead(304, { etag }).end();
      else res.writeHead(200, { "content-type": doc.type, etag }).end(doc.body);
    } else if (url.pathname.startsWith("/gets/") && req.method === "GET") {
      const gets = docGets.get(url.pathname.slice(6)) ?? [];
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(gets));
    } else if (url.pathname === "/slow") {
      setTimeout(
        () => res.writeHead(200, { "content-type": "application/json" }).end("{}"),
        10_000,
      );
    } else if (url.pathname === "/big") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"pad":"${"x".repeat(1024 * 1024)}"}`);
    } else if (url.pathname === "/redirect") {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// ---- A webhook receiver, written the way docs/webhooks.md tells receivers to be ------------

interface ReceiverConfig {
  /** The key set, as the test fetched it from the Worker's /.well-known/jwks.json. */
  jwks: { keys: (Record<string, string> & { kid: string })[] };
  /** `ok` answers 200; `fail` answers `status`; `hang` never answers; `gone` answers 410. */
  mode: "ok" | "fail" | "hang" | "gone";
  /** In `ok` mode, fail this many first arrivals (with `status`) before processing them. */
  fail_first?: number;
  /**
   * In `ok` mode, process this many first deliveries but answer `status` anyway, as when the
   * receiver's answer is lost: the sender retries what was already processed.
   */
  lose_answer_first?: number;
  status?: number;
  /** When set, a delivery without this x-service-token is refused with 401. */
  token?: string;
  /**
   * The endpoint's Standard Webhooks secret: when set, a delivery must also verify with the
   * `standardwebhooks` package (as a receiver using it would), or it is refused with 400.
   */
  secret?: string;
}

interface Arrival {
  id: string | null;
  type: string | null;
  attempt: string | null;
  key_id: string | null;
  verified: boolean;
  token: string | null;
  duplicate: boolean;
  answered: number | null;
  body: unknown;
  /** The exact bytes and signature headers, for verifying again elsewhere. */
  raw: string;
  signature: string | null;
  /** The Standard Webhooks headers, as received. */
  webhook: { id: string | null; timestamp: string | null; signature: string | null };
  /** Whether `standardwebhooks` verified it under the configured secret (null: none set). */
  standard_verified: boolean | null;
  at: number;
}

interface Receiver {
  config: ReceiverConfig;
  arrivals: Arrival[];
  /** Delivery ids already processed: persisted before processing, as receivers should. */
  processed: string[];
}

/**
 * Verifies the signature with node:crypto (OpenSSL), an implementation independent of the
 * Worker's WebCrypto/jose: the detached JWS `header..signature` is completed with the exact raw
 * body, and the key is found by `kid` in the published key set.
 */
function verifyDelivery(
  raw: Buffer,
  headers: IncomingMessage["headers"],
  jwks: ReceiverConfig["jwks"],
) {
  const signature = String(headers["x-service-signature"] ?? "");
  const [protectedHeader, detached, sig] = signature.split(".");
  if (!protectedHeader || detached !== "" || !sig) return false;
  let header: { alg?: string; kid?: string; typ?: string };
  try {
    header = JSON.parse(Buffer.from(protectedHeader, "base64url").toString("utf8"));
  } catch {
    return false;
  }
  if (header.alg !== "EdDSA" || header.typ !== "webhook+jws") return false;
  if (header.kid !== headers["x-service-key-id"]) return false;
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  const input = Buffer.from(`${protectedHeader}.${raw.toString("base64url")}`);
  return verify(null, input, key, Buffer.from(sig, "base64url"));
}

/** Standard Webhooks verification by its reference package, over the raw body as received. */
function verifyStandard(raw: Buffer, req: IncomingMessage, secret: string): boolean {
  try {
    new Webhook(secret).verify(raw.toString("utf8"), req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

async function receive(
  receivers: Map<string, Receiver>,
  name: string,
  action: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const raw = await read(req);
  if (action === "/config" && req.method === "PUT") {
    const previous = receivers.get(name);
    receivers.set(name, {
      config: JSON.parse(raw.toString("utf8")),
      arrivals: previous?.arrivals ?? [],
      processed: previous?.processed ?? [],
    });
    return res.writeHead(204).end();
  }
  const receiver = receivers.get(name);
  if (!receiver) return res.writeHead(404).end();
  if (action === "/log") {
    const { arrivals, processed } = receiver;
    return res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ arrivals, processed }));
  }
  if (req.method !== "POST") return res.writeHead(405).end();
  const { config } = receiver;
  let body: { id?: string; type?: string } | null = null;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {}
  const arrival: Arrival = {
    id: body?.id ?? null,
    type: body?.type ?? null,
    attempt: (req.headers["x-service-attempt"] as string | undefined) ?? null,
    key_id: (req.headers["x-service-key-id"] as string | undefined) ?? null,
    verified: verifyDelivery(raw, req.headers, config.jwks),
    token: (req.headers["x-service-token"] as string | undefined) ?? null,
    duplicate: false,
    answered: null,
    body,
    raw: raw.toString("base64"),
    signature: (req.headers["x-service-signature"] as string | undefined) ?? null,
    webhook: {
      id: (req.headers["webhook-id"] as string | undefined) ?? null,
      timestamp: (req.headers["webhook-timestamp"] as string | undefined) ?? null,
      signature: (req.headers["webhook-signature"] as string | undefined) ?? null,
    },
    standard_verified: config.secret === undefined ? null : verifyStandard(raw, req, config.secret),
    at: Date.now(),
  };
  receiver.arrivals.push(arrival);
  const answer = (status: number) => {
    arrival.answered = status;
    res.writeHead(status).end();
  };
  if (config.mode === "hang") {
    // Never answers: the sender's timeout must end the attempt. Closed later so the server
    // can shut down.
    setTimeout(() => res.destroy(), 30_000);
    return;
  }
  if (config.mode === "gone") return answer(410);
  if (config.mode === "fail") return answer(config.status ?? 500);
  if (!arrival.verified || arrival.standard_verified === false) return answer(400);
  if (config.token !== undefined && arrival.token !== config.token) return answer(401);
  const failuresSoFar = receiver.arrivals.filter(
    (a) => a.answered !== null && a.answered >= 300,
  ).length;
  if (failuresSoFar < (config.fail_first ?? 0)) return answer(config.status ?? 503);
  // Deduplicate on the delivery id, recorded before processing.
  if (arrival.id && receiver.processed.includes(arrival.id)) {
    arrival.duplicate = true;
    return answer(200);
  }
  if (arrival.id) receiver.processed.push(arrival.id);
  if (receiver.processed.length <= (config.lose_answer_first ?? 0)) {
    return answer(config.status ?? 503);
  }
  return answer(200);
}
