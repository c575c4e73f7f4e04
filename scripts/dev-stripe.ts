/**
 * The local stand-in for Stripe's API under `npm run dev`: the tests' fake
 * (test/support/fake-stripe.ts) served on loopback, so checkout → webhook → plan change can be
 * walked through without a Stripe account (docs/billing.md, "Locally"). It answers the
 * Checkout Sessions API with the keys in `.dev.vars`, and `POST /_events/checkout.session.completed`
 * (`{"session": "cs_…"}`) completes a session and answers the webhook Stripe would send for it,
 * signed with STRIPE_WEBHOOK_SECRET: the developer posts it to the Worker.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { fakeStripe } from "../test/support/fake-stripe.ts";

export interface StripeStandIn {
  url: string;
  close: () => Promise<void>;
}

/** `.dev.vars` defaults: keys that only the stand-in accepts. */
export const stripeDevDefaults = {
  STRIPE_SECRET_KEY: () => `sk_test_local_${randomBytes(24).toString("hex")}`,
  STRIPE_WEBHOOK_SECRET: () => `whsec_${randomBytes(24).toString("base64url")}`,
};

async function read(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startStripeStandIn(
  host: string,
  keys: { secretKey: string; webhookSecret: string },
): Promise<StripeStandIn> {
  const api = fakeStripe(keys.secretKey, keys.webhookSecret);
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://stripe.local").pathname;
    await api(req, res, path, await read(req));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
