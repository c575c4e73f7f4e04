/**
 * Request bodies for `POST /v1/assess`, shaped like test/fixtures/ap2 and each one distinct (a
 * fresh assessment, never a replay): AP2 payment mandates (half of them), open payment
 * mandates bound to the agent's registered key (35%), and `message_send` actions (15%).
 * Amounts, currencies and payees vary; some requests carry an A2A block, an idempotency key,
 * or the payer's country in `risk_data`. Generated before a phase, so the measured loop only
 * sends.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type Consent, presentation } from "./assess-credentials.ts";
import type { Agent } from "./assess-tenant.ts";
import type { Draw } from "./draw.ts";

export const MANDATE_KINDS = ["payment", "open_payment", "message_send", "credential"] as const;
export type MandateKind = (typeof MANDATE_KINDS)[number];

export interface AssessBody {
  kind: MandateKind;
  /** The JSON body, serialized once. */
  body: string;
}

export const MERCHANTS = Array.from({ length: 12 }, (_, i) => ({
  id: `merchant_${i + 1}`,
  name: `Merchant ${i + 1}`,
  website: `https://merchant-${i + 1}.example`,
}));
const COUNTRIES = ["US", "DE", "FR", "GB", "NL"];

/** Minor units, log-uniform from 5.00 to 2,000.00: many small payments, a few large ones. */
function amount(draw: Draw): number {
  return Math.round(500 * 400 ** draw.next());
}

function transactionId(): string {
  return randomBytes(32).toString("base64url");
}

/** An SD-JWT digest standing for an undisclosed element, as AP2 presents them. */
function undisclosed(): { "...": string } {
  return { "...": createHash("sha256").update(randomUUID()).digest("base64url") };
}

function paymentMandate(draw: Draw, now: number) {
  const currency = draw.chance(0.7) ? "USD" : "EUR";
  return {
    vct: "mandate.payment.1",
    transaction_id: transactionId(),
    payee: draw.pick(MERCHANTS),
    payment_amount: { amount: amount(draw), currency },
    payment_instrument: { id: "stub", type: "card", description: "Card ••••4242" },
    ...(draw.chance(0.6) ? { risk_data: { country: draw.pick(COUNTRIES), device: "web" } } : {}),
    iat: now,
    exp: now + 3600,
  };
}

function openPaymentMandate(draw: Draw, now: number, agent: Agent) {
  const currency = draw.chance(0.7) ? "USD" : "EUR";
  const payee = draw.pick(MERCHANTS);
  const max = 20_000 + draw.below(80_000);
  return {
    vct: "mandate.payment.open.1",
    constraints: [
      { type: "payment.amount_range", currency, max, min: 0 },
      { type: "payment.allowed_payees", allowed: [payee, undisclosed()] },
      { type: "payment.reference", conditional_transaction_id: transactionId() },
    ],
    cnf: { jwk: agent.jwk },
    payee,
    payment_amount: { amount: Math.min(max, amount(draw)), currency },
    iat: now,
    exp: now + 3600,
  };
}

function messageMandate(draw: Draw) {
  return {
    to: `+1415555${String(draw.below(10_000)).padStart(4, "0")}`,
    channel: "sms",
    message_id: randomUUID(),
    body: "Your order has shipped and arrives on Thursday.",
  };
}

function requestOf(
  draw: Draw,
  kind: MandateKind,
  now: number,
  agent: Agent,
): Record<string, unknown> {
  switch (kind) {
    case "payment":
      // Without a key in the mandate the caller names its agent (most do; some do not).
      return {
        mandate: paymentMandate(draw, now),
        ...(draw.chance(0.9) ? { agent_id: agent.id } : {}),
      };
    case "open_payment":
      return { mandate: openPaymentMandate(draw, now, agent) };
    case "message_send":
      return { kind: "message_send", mandate: messageMandate(draw), agent_id: agent.id };
    case "credential":
      throw new Error("credential bodies are signed apart: withCredentials");
  }
}

function kindAt(index: number): MandateKind {
  const slot = index % 20; // 10 payment, 7 open payment, 3 message_send in every 20
  return slot < 10 ? "payment" : slot < 17 ? "open_payment" : "message_send";
}

/**
 * Replaces `share` percent of `bodies` (spread evenly) with AP2 credential presentations
 * under the tenant's consent (assess-credentials.ts), each its own signed last hop.
 */
export async function withCredentials(
  draw: Draw,
  bodies: AssessBody[],
  consent: Consent,
  share: number,
): Promise<AssessBody[]> {
  return await Promise.all(
    bodies.map(async (body, index) => {
      if ((index * share) % 100 >= share) return body;
      // Drawn before the first await, so the order of draws is the order of the bodies.
      const payee = draw.pick(MERCHANTS);
      const credential = await presentation(consent, payee, amount(draw));
      return { kind: "credential" as const, body: JSON.stringify(credential) };
    }),
  );
}

/** `count` distinct assess bodies in the mix above, interleaved, each by one of the agents. */
export function assessBodies(draw: Draw, count: number, agents: readonly Agent[]): AssessBody[] {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, index) => {
    const kind = kindAt(index);
    const body = requestOf(draw, kind, now, draw.pick(agents));
    if (draw.chance(0.2)) {
      body.a2a = { task_id: randomUUID(), context_id: randomUUID(), a2a_version: "1.0" };
    }
    if (draw.chance(0.5)) body.idempotency_key = `bench-${randomUUID()}`;
    return { kind, body: JSON.stringify(body) };
  });
}
