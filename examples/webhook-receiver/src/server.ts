/**
 * Runs the receiver on Node:
 *   WEBHOOK_SECRET=whsec_... ENDPOINT_ID=... RISK_URL=http://127.0.0.1:8787 PORT=3000 npm start
 */
import { createServer } from "node:http";
import { memorySeenDeliveries, webhookReceiver } from "./app.ts";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("set WEBHOOK_SECRET to the endpoint's whsec_ secret");
const riskUrl = process.env.RISK_URL;

const app = webhookReceiver({
  secret,
  ...(riskUrl ? { jwksUrl: new URL("/.well-known/jwks.json", riskUrl).href } : {}),
  ...(process.env.ENDPOINT_ID ? { endpointId: process.env.ENDPOINT_ID } : {}),
  seen: memorySeenDeliveries(),
  async handle(event) {
    console.log(`${event.type} ${event.id}`, JSON.stringify(event.data));
  },
});

const port = Number(process.env.PORT ?? 3000);
createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const answer = await app.fetch(
    new Request(`http://localhost${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: Buffer.concat(chunks) }),
    }),
  );
  res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(await answer.text());
}).listen(port, () => console.log(`webhook receiver on http://127.0.0.1:${port}/webhooks`));
