import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP server on loopback for what the Worker fetches from the outside world (Agent
 * Cards now, webhook receivers later). Tests publish a document with `PUT /docs/<name>` and the
 * Worker fetches `GET /docs/<name>`; a few fixed paths misbehave on purpose.
 */
export async function startFixtureServer() {
  const docs = new Map<string, { type: string; body: Buffer }>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fixture");
    const name = url.pathname.startsWith("/docs/") ? url.pathname.slice(6) : null;
    if (name && req.method === "PUT") {
      docs.set(name, {
        type: req.headers["content-type"] ?? "application/json",
        body: await read(req),
      });
      res.writeHead(204).end();
    } else if (name && req.method === "GET" && docs.has(name)) {
      const doc = docs.get(name) as { type: string; body: Buffer };
      res.writeHead(200, { "content-type": doc.type }).end(doc.body);
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
