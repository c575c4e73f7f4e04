/**
 * `--profile DIR` of `bench:assess`: a CPU profile of the Worker and its Durable Object as
 * workerd runs them, taken through workerd's V8 inspector (Miniflare's `inspectorPort`) around
 * one phase. workerd's clock cannot time its own compute, and a micro-benchmark in Node would
 * miss what only the runtime does (the SQL driver's fetches, the RPC's serialisation, JSON of
 * real answers); the sampling profiler sees all of it. It writes the `.cpuprofile` (open it in
 * Chrome's DevTools) and prints where the samples fall: by function, and by the bundle's module
 * (esbuild marks each module's code with a `// path` comment).
 *
 * Needs a WebSocket client: Node 22 has one; Node 20 needs `--experimental-websocket`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Target {
  webSocketDebuggerUrl?: string;
  title?: string;
  id?: string;
}

type Socket = {
  send(data: string): void;
  close(): void;
  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void;
};

class Session {
  private next = 1;
  private readonly waiting = new Map<number, (result: unknown) => void>();
  private constructor(private readonly socket: Socket) {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (message.id === undefined) return;
      this.waiting.get(message.id)?.(message.result);
      this.waiting.delete(message.id);
    });
  }

  static open(url: string): Promise<Session> {
    const WebSocketClass = (globalThis as { WebSocket?: new (url: string) => Socket }).WebSocket;
    if (!WebSocketClass) {
      throw new Error(
        "--profile needs a WebSocket client: run Node 22, or Node 20 with --experimental-websocket",
      );
    }
    const socket = new WebSocketClass(url);
    return new Promise((resolve, reject) => {
      socket.addEventListener("open", () => resolve(new Session(socket)));
      socket.addEventListener("error", () => reject(new Error(`inspector at ${url} refused`)));
    });
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.next++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  close(): void {
    this.socket.close();
  }
}

/** Starts sampling every isolate workerd's inspector lists; `stop` writes and summarises. */
export async function startProfile(
  inspectorPort: number,
  script: string,
  dir: string,
  label: string,
): Promise<{ stop(): Promise<string> }> {
  const targets = (await (
    await fetch(`http://127.0.0.1:${inspectorPort}/json`)
  ).json()) as Target[];
  const sessions: { title: string; session: Session }[] = [];
  for (const target of targets) {
    if (!target.webSocketDebuggerUrl) continue;
    const session = await Session.open(target.webSocketDebuggerUrl);
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 100 });
    await session.call("Profiler.start");
    sessions.push({ title: target.title ?? target.id ?? "?", session });
  }
  return {
    async stop() {
      const lines: string[] = [];
      for (const [n, { title, session }] of sessions.entries()) {
        const { profile } = (await session.call("Profiler.stop")) as { profile: Profile };
        session.close();
        const file = join(dir, `${label.replace(/[^a-z0-9]+/gi, "-")}-${n}.cpuprofile`);
        writeFileSync(file, JSON.stringify(profile));
        lines.push(`profile of ${title}: ${file}`, ...summarise(profile, script));
      }
      return lines.join("\n");
    },
  };
}

/** Module boundaries of an esbuild bundle: the line of each `// path` comment, in order. */
function moduleStarts(script: string): { line: number; path: string }[] {
  const starts: { line: number; path: string }[] = [];
  const lines = readFileSync(script, "utf8").split("\n");
  for (const [i, text] of lines.entries()) {
    const match = /^\/\/ (\S+\.[cm]?[jt]sx?)$/.exec(text);
    if (match) starts.push({ line: i, path: match[1] as string });
  }
  return starts;
}

function moduleAt(starts: { line: number; path: string }[], line: number): string {
  let lo = 0;
  let hi = starts.length - 1;
  let found = "(bundle prelude)";
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = starts[mid] as { line: number; path: string };
    if (start.line <= line) {
      found = start.path;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+).*$/, "node_modules/$1");
}

/** Self time by module and by function, in ms and in percent of the samples. */
export function summarise(profile: Profile, script: string): string[] {
  const starts = moduleStarts(script);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === "(idle)" || frame.functionName === "(program)") {
      idle += us;
      continue;
    }
    total += us;
    const module =
      frame.url === ""
        ? `(${frame.functionName || "native"})`
        : frame.url.endsWith(".js") && frame.url.includes("main")
          ? moduleAt(starts, frame.lineNumber)
          : frame.url;
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    const name = `${frame.functionName || "(anonymous)"} ${module}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([name, us]) =>
          `  ${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`,
      );
  return [
    `  busy ${(total / 1000).toFixed(0)} ms, idle or program ${(idle / 1000).toFixed(0)} ms`,
    "  by module (self time):",
    ...top(byModule, 30),
    "  by function (self time):",
    ...top(byFunction, 40),
  ];
}
