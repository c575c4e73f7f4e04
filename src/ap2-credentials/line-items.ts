/**
 * `checkout.line_items` as docs/ap2/checkout_mandate.md ("Line Items") defines it: a maximal
 * flow from each requirement (capacity: its quantity) through the item ids its disclosed
 * `acceptable_items` name (unbounded) to the checkout's items (capacity: their quantity). The
 * constraint holds when the flow equals both the total required and the total in the checkout:
 * every unit bought fills a requirement, and every requirement is filled.
 *
 * Stricter than the SDK (sdk/max_flow_helper.py) on two points, each as the spec says: the SDK
 * accepts a checkout that fills only part of the requirements, and reads a requirement whose
 * `acceptable_items` are all withheld as accepting anything; here it accepts nothing.
 */
import { type Claims, isClaims, own, safeInteger } from "./claims";

/** Beyond these a checkout is refused rather than solved: no real cart comes near them. */
const MAX_LINES = 256;
const MAX_REQUIREMENTS = 64;
const MAX_QUANTITY = 1_000_000;

function quantity(value: unknown): number | undefined {
  const n = safeInteger(value);
  return n !== undefined && n >= 1 && n <= MAX_QUANTITY ? n : undefined;
}

/** Quantities per item id in the checkout, or the reason they cannot be read. */
function cart(checkout: Claims): Map<string, number> | string {
  const lines = own(checkout, "line_items");
  if (!Array.isArray(lines) || lines.length === 0) return "the checkout has no line items";
  if (lines.length > MAX_LINES) return `the checkout has more than ${MAX_LINES} line items`;
  const totals = new Map<string, number>();
  for (const line of lines) {
    const item = isClaims(line) ? own(line, "item") : undefined;
    const id = isClaims(item) ? own(item, "id") : undefined;
    const count = isClaims(line) ? quantity(own(line, "quantity")) : undefined;
    if (typeof id !== "string" || count === undefined) return "a checkout line item is malformed";
    totals.set(id, (totals.get(id) ?? 0) + count);
  }
  return totals;
}

interface Requirement {
  quantity: number;
  accepts: Set<string>;
}

function requirements(constraint: Claims): Requirement[] | string {
  const items = own(constraint, "items");
  if (!Array.isArray(items) || items.length === 0) return "items must list requirements";
  if (items.length > MAX_REQUIREMENTS) return `more than ${MAX_REQUIREMENTS} requirements`;
  const out: Requirement[] = [];
  for (const item of items) {
    const acceptable = isClaims(item) ? own(item, "acceptable_items") : undefined;
    const count = isClaims(item) ? quantity(own(item, "quantity")) : undefined;
    if (!Array.isArray(acceptable) || count === undefined) return "a requirement is malformed";
    const ids = acceptable.map((a) => (isClaims(a) ? own(a, "id") : undefined));
    if (!ids.every((id) => typeof id === "string")) return "an acceptable item has no id";
    out.push({ quantity: count, accepts: new Set(ids as string[]) });
  }
  return out;
}

/** Dinic's maximal flow over a dense residual matrix (a few hundred nodes at most). */
function maxFlow(capacity: number[][], source: number, sink: number): number {
  const n = capacity.length;
  let total = 0;
  for (;;) {
    const level = new Array<number>(n).fill(-1);
    level[source] = 0;
    const queue = [source];
    for (let head = 0; head < queue.length; head++) {
      const u = queue[head] as number;
      for (let v = 0; v < n; v++) {
        if (level[v] === -1 && (capacity[u]?.[v] ?? 0) > 0) {
          level[v] = (level[u] as number) + 1;
          queue.push(v);
        }
      }
    }
    if (level[sink] === -1) return total;
    const next = new Array<number>(n).fill(0);
    const push = (u: number, limit: number): number => {
      if (u === sink) return limit;
      for (; (next[u] as number) < n; next[u] = (next[u] as number) + 1) {
        const v = next[u] as number;
        const room = capacity[u]?.[v] ?? 0;
        if (room <= 0 || level[v] !== (level[u] as number) + 1) continue;
        const sent = push(v, Math.min(limit, room));
        if (sent > 0) {
          (capacity[u] as number[])[v] = room - sent;
          (capacity[v] as number[])[u] = (capacity[v]?.[u] ?? 0) + sent;
          return sent;
        }
      }
      return 0;
    };
    for (let sent = push(source, Infinity); sent > 0; sent = push(source, Infinity)) total += sent;
  }
}

/** A violation message, or null when the checkout's items fill the requirements exactly. */
export function lineItemsViolation(constraint: Claims, checkout: Claims): string | null {
  const reqs = requirements(constraint);
  if (typeof reqs === "string") return reqs;
  const items = cart(checkout);
  if (typeof items === "string") return items;
  const ids = [...items.keys()];
  const stray = ids.find((id) => !reqs.some((r) => r.accepts.has(id)));
  if (stray !== undefined) return `item ${stray} is accepted by no requirement`;

  // Nodes: source 0, requirements 1..R, items R+1..R+I, sink R+I+1.
  const [R, I] = [reqs.length, ids.length];
  const sink = R + I + 1;
  const capacity = Array.from({ length: sink + 1 }, () => new Array<number>(sink + 1).fill(0));
  reqs.forEach((req, r) => {
    (capacity[0] as number[])[r + 1] = req.quantity;
    ids.forEach((id, i) => {
      if (req.accepts.has(id)) (capacity[r + 1] as number[])[R + 1 + i] = Infinity;
    });
  });
  ids.forEach((id, i) => {
    (capacity[R + 1 + i] as number[])[sink] = items.get(id) as number;
  });
  const required = reqs.reduce((sum, r) => sum + r.quantity, 0);
  const bought = [...items.values()].reduce((sum, n) => sum + n, 0);
  const flow = maxFlow(capacity, 0, sink);
  if (flow === required && flow === bought) return null;
  return `the checkout's ${bought} items fill ${flow} of the ${required} required`;
}
