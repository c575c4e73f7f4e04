/**
 * The client side of `npm run bench:assess`: plain `node:http` over keep-alive sockets, one
 * per request in flight. Cheaper per request than `fetch` (undici), which matters when the
 * client shares two cores with wrangler, workerd and the database.
 */
import { Agent, type IncomingHttpHeaders, request } from "node:http";

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface Send {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class Client {
  readonly #agent: Agent;

  constructor(
    readonly origin: string,
    maxSockets: number,
  ) {
    this.#agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(path: string, { method = "GET", body, headers = {} }: Send = {}): Promise<Reply> {
    const all: Record<string, string> = { ...headers };
    if (body !== undefined) {
      all["content-type"] ??= "application/json";
      all["content-length"] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.origin}${path}`,
        { method, headers: all, agent: this.#agent, timeout: REQUEST_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  /** Sends, and answers the parsed JSON body of a reply with the expected status. */
  async json(path: string, expected: number, init: Send = {}): Promise<Record<string, unknown>> {
    const reply = await this.send(path, init);
    if (reply.status !== expected) {
      throw new Error(
        `${init.method ?? "GET"} ${path}: ${reply.status} ${reply.text.slice(0, 500)}`,
      );
    }
    return JSON.parse(reply.text) as Record<string, unknown>;
  }

  close(): void {
    this.#agent.destroy();
  }
}
