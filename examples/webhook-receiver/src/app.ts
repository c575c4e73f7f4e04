/**
 * A minimal webhook receiver for the agent-risk service: Hono, verified by @agent-risk/client,
 * each delivery processed once however often it arrives (deliveries are at-least-once).
 */
import { VerificationError, verifyWebhook, type WebhookEvent } from "@agent-risk/client";
import { Hono } from "hono";

/** Delivery ids already processed. In production: a table with a unique key on the id. */
export interface SeenDeliveries {
  /** Marks the id as seen; false when it already was. Must be atomic. */
  remember(id: string): Promise<boolean>;
  /** Forgets an id whose processing failed, so the service's retry is processed. */
  forget(id: string): Promise<void>;
}

export function memorySeenDeliveries(): SeenDeliveries {
  const seen = new Set<string>();
  return {
    async remember(id) {
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    },
    async forget(id) {
      seen.delete(id);
    },
  };
}

export interface ReceiverOptions {
  /** The endpoint's `whsec_` secret, from the create answer (or two during a rotation). */
  secret: string | string[];
  /** The service's key set URL, to check its JWS as well; omit to rely on the secret alone. */
  jwksUrl?: string;
  /** Or the key set itself. */
  jwks?: { keys: object[] };
  /** This endpoint's id: with a key set, a delivery signed for another endpoint is refused. */
  endpointId?: string;
  seen: SeenDeliveries;
  /** Your business logic; a throw makes the service retry the delivery later. */
  handle(event: WebhookEvent): Promise<void>;
}

export function webhookReceiver(options: ReceiverOptions): Hono {
  const keys = options.jwks
    ? { jwks: options.jwks }
    : options.jwksUrl
      ? { jwksUrl: options.jwksUrl }
      : {};
  const app = new Hono();
  app.post("/webhooks", async (c) => {
    // The exact bytes: a parsed and re-serialized body would not verify.
    const raw = new Uint8Array(await c.req.arrayBuffer());
    let event: WebhookEvent;
    try {
      event = await verifyWebhook(raw, c.req.raw.headers, {
        ...(keys as object),
        secret: options.secret,
        ...(options.endpointId ? { endpointId: options.endpointId } : {}),
      });
    } catch (error) {
      if (error instanceof VerificationError) {
        return c.json({ error: "signature_invalid", details: error.code }, 400);
      }
      throw error;
    }
    if (!(await options.seen.remember(event.id)))
      return c.json({ received: true, duplicate: true });
    try {
      await options.handle(event);
    } catch (error) {
      await options.seen.forget(event.id);
      throw error;
    }
    return c.json({ received: true, duplicate: false });
  });
  return app;
}
