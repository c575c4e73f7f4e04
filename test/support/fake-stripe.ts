import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * A fake of the Stripe API at the network edge, following Stripe's documented shapes: form-
 * encoded requests with a Bearer secret key, `Idempotency-Key` replays, Checkout Session
 * objects, `{error:{type,code,message}}` errors, and webhook events signed with the
 * `Stripe-Signature` scheme. Mounted under `/stripe` of the fixture server.
 *
 * Test-only paths (not Stripe's): `GET /stripe/_requests` lists what it received;
 * `POST /stripe/_events/checkout.session.completed` (JSON `{session, timestamp?}`) completes a
 * session and answers the event body and its signature header, as Stripe would deliver them.
 */
export function fakeStripe(secretKey: string, webhookSecret: string) {
  const sessions = new Map<string, Record<string, unknown>>();
  const idempotent = new Map<string, { params: string; status: number; body: unknown }>();
  const requests: {
    method: string;
    path: string;
    headers: Record<string, unknown>;
    body: string;
  }[] = [];

  function send(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }

  function stripeError(res: ServerResponse, status: number, type: string, message: string) {
    send(res, status, { error: { type, message } });
  }

  function createSession(params: URLSearchParams) {
    for (const required of ["mode", "success_url", "cancel_url"]) {
      if (!params.get(required)) return { status: 400, body: missing(required) };
    }
    if (!params.get("line_items[0][price]") && !params.get("line_items[0][price_data][currency]")) {
      return { status: 400, body: missing("line_items") };
    }
    const id = `cs_test_${randomBytes(12).toString("hex")}`;
    const metadata: Record<string, string> = {};
    for (const [k, v] of params) {
      const m = /^metadata\[(\w+)\]$/.exec(k);
      if (m) metadata[m[1] as string] = v;
    }
    const session = {
      id,
      object: "checkout.session",
      url: `https://checkout.stripe.com/c/pay/${id}`,
      mode: params.get("mode"),
      status: "open",
      payment_status: "unpaid",
      client_reference_id: params.get("client_reference_id"),
      success_url: params.get("success_url"),
      cancel_url: params.get("cancel_url"),
      currency: params.get("line_items[0][price_data][currency]"),
      amount_total: Number(params.get("line_items[0][price_data][unit_amount]") ?? 0),
      customer: null,
      subscription: null,
      metadata,
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      expires_at: Math.floor(Date.now() / 1000) + 24 * 3600,
    };
    sessions.set(id, session);
    return { status: 200, body: session };
  }

  function missing(param: string) {
    return {
      error: {
        type: "invalid_request_error",
        code: "parameter_missing",
        param,
        message: `Missing required param: ${param}.`,
      },
    };
  }

  /** Completes a session and returns the webhook Stripe would deliver for it. */
  function completed(sessionId: string, timestamp: number) {
    const session = sessions.get(sessionId);
    if (!session) return null;
    Object.assign(session, {
      status: "complete",
      payment_status: "paid",
      customer: session.customer ?? `cus_${randomBytes(7).toString("hex")}`,
      subscription: session.subscription ?? `sub_${randomBytes(12).toString("hex")}`,
    });
    const payload = JSON.stringify({
      id: `evt_${randomBytes(12).toString("hex")}`,
      object: "event",
      api_version: "2024-06-20",
      created: timestamp,
      type: "checkout.session.completed",
      livemode: false,
      data: { object: session },
    });
    return { payload, signature: signature(webhookSecret, payload, timestamp) };
  }

  return async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: string,
  ) {
    if (path === "/_requests" && req.method === "GET") return send(res, 200, requests);
    if (path === "/_events/checkout.session.completed" && req.method === "POST") {
      const input = JSON.parse(body) as { session: string; timestamp?: number };
      const event = completed(input.session, input.timestamp ?? Math.floor(Date.now() / 1000));
      return event ? send(res, 200, event) : send(res, 404, { error: "no such session" });
    }
    requests.push({ method: req.method ?? "", path, headers: req.headers, body });
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return stripeError(res, 401, "invalid_request_error", "Invalid API Key provided.");
    }
    if (path === "/v1/checkout/sessions" && req.method === "POST") {
      if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) {
        return stripeError(res, 400, "invalid_request_error", "Invalid request body encoding.");
      }
      const key = req.headers["idempotency-key"];
      const prior = typeof key === "string" ? idempotent.get(key) : undefined;
      if (prior) {
        if (prior.params !== body) {
          return stripeError(
            res,
            400,
            "idempotency_error",
            "Keys for idempotent requests can only be used with the same parameters.",
          );
        }
        res.setHeader("idempotent-replayed", "true");
        return send(res, prior.status, prior.body);
      }
      const result = createSession(new URLSearchParams(body));
      if (typeof key === "string") idempotent.set(key, { params: body, ...result });
      return send(res, result.status, result.body);
    }
    const session = /^\/v1\/checkout\/sessions\/([\w]+)$/.exec(path);
    if (session && req.method === "GET" && sessions.has(session[1] as string)) {
      return send(res, 200, sessions.get(session[1] as string));
    }
    return stripeError(res, 404, "invalid_request_error", `Unrecognized request URL (${path}).`);
  };
}

/** Stripe's scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload">`. */
export function signature(secret: string, payload: string, timestamp: number): string {
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
  return `t=${timestamp},v1=${v1}`;
}
