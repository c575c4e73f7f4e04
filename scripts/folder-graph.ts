/**
 * The folders of src/ as a graph of value imports (`import type` and all-type import lists do
 * not count: they vanish at build time and cannot make a cycle of initialisation): each
 * folder's arrows with their import counts, and the strongly connected groups, the folders
 * that reach each other in a loop. Issue 38 measures the renovation with it.
 *
 *   npx tsx scripts/folder-graph.ts            # cycles and the biggest arrows inside them
 *   npx tsx scripts/folder-graph.ts --arrows   # every arrow
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dirname, "../src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** A file's folder under src/ (its first segment); a file at the top is a node of its own. */
export function folderOf(path: string): string {
  const parts = relative(SRC, path).split("/");
  return parts[0] as string;
}

/** The relative modules a file imports or re-exports for their values. */
export function valueImports(text: string): string[] {
  const found: string[] = [];
  const statements = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s*"([^"]+)";/gms;
  for (const m of text.matchAll(statements)) {
    const [, , typeOnly, clause = "", from = ""] = m;
    if (typeOnly || !from.startsWith(".")) continue;
    const braces = clause.match(/^\{([\s\S]*)\}$/);
    if (braces) {
      const names = (braces[1] ?? "")
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean);
      if (names.every((n) => n.startsWith("type "))) continue;
    }
    found.push(from);
  }
  for (const m of text.matchAll(/^import\s+"([^"]+)";/gm)) {
    if (m[1]?.startsWith(".")) found.push(m[1]);
  }
  return found;
}

/** folder → folder → how many value imports. */
export function folderGraph(): Map<string, Map<string, number>> {
  const graph = new Map<string, Map<string, number>>();
  for (const path of files(SRC)) {
    const from = folderOf(path);
    const arrows = graph.get(from) ?? new Map<string, number>();
    graph.set(from, arrows);
    for (const spec of valueImports(readFileSync(path, "utf8"))) {
      const target = resolve(dirname(path), spec);
      if (!target.startsWith(SRC)) continue;
      const to = folderOf(target.endsWith(".ts") ? target : `${target}.ts`);
      if (to !== from) arrows.set(to, (arrows.get(to) ?? 0) + 1);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one folder. */
export function cycles(graph: Map<string, Map<string, number>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, order.get(w) as number));
      }
    }
    if (low.get(v) === order.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!order.has(v)) visit(v);
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const graph = folderGraph();
  const groups = cycles(graph);
  console.log(`${graph.size} folders; ${groups.length} cycle(s) on value imports`);
  for (const group of groups) {
    console.log(`\n${group.length} folders reach each other: ${group.join(", ")}`);
    const inside = group.flatMap((from) =>
      [...(graph.get(from) ?? [])]
        .filter(([to]) => group.includes(to))
        .map(([to, count]) => ({ arrow: `${from} → ${to}`, count })),
    );
    inside.sort((a, b) => b.count - a.count);
    console.log(`${inside.length} arrows inside; the biggest:`);
    for (const { arrow, count } of inside.slice(0, 15)) console.log(`  ${count}\t${arrow}`);
  }
  if (process.argv.includes("--arrows")) {
    console.log("\nevery arrow:");
    for (const [from, arrows] of graph) {
      for (const [to, count] of arrows) console.log(`  ${count}\t${from} → ${to}`);
    }
  }
}
