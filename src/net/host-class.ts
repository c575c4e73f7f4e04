// The host half of the SSRF guard (outbound.ts). A literal address is judged by the IANA
// special-purpose registries (special-purpose.ts): refused unless the registry says it is
// globally reachable, and the IPv4 address inside IPv6's mapped, translated and tunnelled forms
// is judged as IPv4 first. A name is allowed only when it is a public DNS name: more than one
// label, under a top-level domain of the root zone (root-zone.ts), and not under a special-use
// or otherwise non-public suffix.

import { ROOT_ZONE_TLDS } from "./root-zone";
import {
  IPV4_SPECIAL_PURPOSE,
  IPV6_SPECIAL_PURPOSE,
  SPECIAL_USE_DOMAINS,
  type SpecialPurposeBlock,
} from "./special-purpose";

export type HostClass =
  | "public"
  | "loopback"
  | "private_address"
  | "metadata_endpoint"
  | "internal_hostname";

/** What a URL's host is, as the WHATWG parser normalised it: judged by range or by suffix. */
export function classifyHost(hostname: string): HostClass {
  if (hostname.startsWith("[")) return classifyIpv6(hostname.slice(1, -1));
  const v4 = parseIpv4(hostname);
  if (v4 !== null) return classifyIpv4(v4);
  return classifyName(hostname.replace(/\.+$/, ""));
}

// ---- Addresses: the registry rows, and what the guard does with them ------------------------

/**
 * Globally reachable rows refused anyway, each for its reason. A request to an anycast address
 * of a network service goes to the nearest instance, which can be the network's own
 * infrastructure (the PCP server is the NAT itself, RFC 7723), and no Agent Card, key set or
 * webhook receiver lives there. ORCHIDv2 and DETs are identifiers, not locators: RFC 7343 keeps
 * them out of IP headers, so one as a destination is an overlay this service does not speak.
 */
const REFUSED_ANYWAY: ReadonlyMap<string, string> = new Map([
  ["192.0.0.9/32", "anycast of a network service (PCP)"],
  ["192.0.0.10/32", "anycast of a network service (TURN)"],
  ["192.31.196.0/24", "anycast of a network service (AS112)"],
  ["192.52.193.0/24", "anycast of a network service (AMT relays)"],
  ["192.175.48.0/24", "anycast of a network service (AS112)"],
  ["2001:1::1/128", "anycast of a network service (PCP)"],
  ["2001:1::2/128", "anycast of a network service (TURN)"],
  ["2001:1::3/128", "anycast of a network service (DNS-SD SRP)"],
  ["2001:3::/32", "anycast of a network service (AMT relays)"],
  ["2001:4:112::/48", "anycast of a network service (AS112)"],
  ["2620:4f:8000::/48", "anycast of a network service (AS112)"],
  ["2001:20::/28", "an identifier, not a locator (ORCHIDv2)"],
  ["2001:30::/28", "an identifier, not a locator (DETs)"],
]);

interface Block {
  row: SpecialPurposeBlock;
  network: bigint;
  bits: number;
}

/** The rows as numbers, most specific first: the first block that holds an address decides. */
function blocks(rows: readonly SpecialPurposeBlock[], parse: (text: string) => bigint | null) {
  return rows
    .map((row): Block => {
      const [text = "", bits = ""] = row.block.split("/");
      const network = parse(text);
      if (network === null) throw new Error(`bad block ${row.block}`);
      return { row, network, bits: Number(bits) };
    })
    .sort((a, b) => b.bits - a.bits);
}

function mostSpecific(table: readonly Block[], address: bigint, width: number) {
  return table.find(({ network, bits }) => {
    const shift = BigInt(width - bits);
    return address >> shift === network >> shift;
  })?.row;
}

/** Allowed by its row: the registry says globally reachable, and no reason above refuses it. */
function reachable(row: SpecialPurposeBlock): boolean {
  return row.globallyReachable === true && !REFUSED_ANYWAY.has(row.block);
}

// ---- Names ---------------------------------------------------------------------------------

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata"]);

/**
 * Names the public DNS gives no address for, or gives one that only means something inside a
 * network: only a local resolver (a search list, a cluster's DNS, mDNS, a hosts file) can make
 * them reach anything, and what it reaches is internal by definition.
 *
 * - The Special-Use Domain Names registry (RFC 6761 ff.), except example.com, example.net and
 *   example.org: those are delegated and answered by the public DNS, and RFC 6761 §6.5 asks
 *   applications not to treat them specially. `localhost` is loopback (below); `example`,
 *   `test`, `invalid`, `local` (mDNS, so also `cluster.local`), `onion`, `alt` and the `arpa`
 *   names are refused.
 * - All of `arpa`: the infrastructure zone (reverse DNS, home.arpa, resolver.arpa …) serves no
 *   Agent Card, key set or webhook receiver.
 * - `internal`, which ICANN reserved for private use (2024), and `corp`, `home`, `mail`, which
 *   it withheld from delegation for their name collisions (2018).
 * - Private conventions that are no TLD: `lan`, `intranet`, `private`, `localdomain`, and
 *   `svc`, Kubernetes' service domain (`kubernetes.default.svc`).
 *
 * Not delegated, these are also refused by the root-zone check; they are named here so the rule
 * stands even if one were delegated (ICANN has been asked for `.home` and `.corp` before).
 */
const PUBLIC_SPECIAL_USE = new Set(["example.com", "example.net", "example.org"]);
const NON_PUBLIC_SUFFIXES: readonly string[] = [
  ...SPECIAL_USE_DOMAINS.map((d) => d.name).filter(
    (name) => !PUBLIC_SPECIAL_USE.has(name) && name !== "localhost",
  ),
  "arpa",
  "internal",
  "corp",
  "home",
  "mail",
  "lan",
  "intranet",
  "private",
  "localdomain",
  "svc",
];

function under(name: string, suffix: string): boolean {
  return name === suffix || name.endsWith(`.${suffix}`);
}

function classifyName(name: string): HostClass {
  if (METADATA_NAMES.has(name)) return "metadata_endpoint";
  // RFC 6761 §6.3: localhost and every name under it are the loopback.
  if (under(name, "localhost")) return "loopback";
  // One label: resolved through the resolver's search list, i.e. inside the local network.
  if (!name.includes(".")) return "internal_hostname";
  if (NON_PUBLIC_SUFFIXES.some((suffix) => under(name, suffix))) return "internal_hostname";
  const tld = name.slice(name.lastIndexOf(".") + 1);
  return ROOT_ZONE_TLDS.has(tld) ? "public" : "internal_hostname";
}

// ---- IPv4 ----------------------------------------------------------------------------------

/** A dotted quad (all the URL parser leaves of decimal, octal and hex spellings). */
function parseIpv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return null;
  }
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const IPV4_BLOCKS = blocks(IPV4_SPECIAL_PURPOSE, (text) => {
  const v4 = parseIpv4(text);
  return v4 === null ? null : BigInt(v4);
});

/** AWS/GCP/Azure, AWS ECS task metadata, Alibaba: named so the refusal says what it was. */
const IPV4_METADATA = new Set(
  ["169.254.169.254", "169.254.170.2", "100.100.100.200"].map(parseIpv4),
);

function classifyIpv4(address: number): HostClass {
  if (address >>> 24 === 127) return "loopback";
  if (IPV4_METADATA.has(address)) return "metadata_endpoint";
  const row = mostSpecific(IPV4_BLOCKS, BigInt(address), 32);
  if (row) return reachable(row) ? "public" : "private_address";
  // Multicast (224.0.0.0/4) has a registry of its own; it is never a unicast fetch's destination.
  return address >>> 28 === 0xe ? "private_address" : "public";
}

// ---- IPv6 ----------------------------------------------------------------------------------

/** Eight 16-bit groups. The parser has already validated and compressed the text. */
function parseIpv6(text: string): number[] {
  const [head = "", tail] = text.split("::") as [string, string | undefined];
  const groups = (part: string) => (part === "" ? [] : part.split(":").flatMap(group));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/** A group, or the two groups a trailing dotted quad stands for. */
function group(part: string): number[] {
  const v4 = parseIpv4(part);
  if (v4 === null) return [Number.parseInt(part, 16)];
  return [Math.floor(v4 / 65536), v4 % 65536];
}

function ipv6Value(g: readonly number[]): bigint {
  return g.reduce((n, x) => (n << 16n) | BigInt(x), 0n);
}

const IPV6_BLOCKS = blocks(IPV6_SPECIAL_PURPOSE, (text) => ipv6Value(parseIpv6(text)));

/** AWS's metadata service over IPv6 (fd00:ec2::254). */
const IPV6_METADATA = ipv6Value(parseIpv6("fd00:ec2::254"));

function classifyIpv6(text: string): HostClass {
  const g = parseIpv6(text);
  const value = ipv6Value(g);
  if (value === IPV6_METADATA) return "metadata_endpoint";
  if (value === 1n) return "loopback";
  // An IPv4 address inside reaches that IPv4 host: it is judged first, and names the refusal.
  const embedded = embeddedIpv4(g);
  for (const v4 of embedded) {
    const inner = classifyIpv4(v4);
    // A loopback address dressed as IPv6 is never the loopback a developer meant.
    if (inner !== "public") return inner === "loopback" ? "private_address" : inner;
  }
  const row = mostSpecific(IPV6_BLOCKS, value, 128);
  if (row) {
    // N/A (6to4, Teredo): as reachable as the IPv4 inside, which was public.
    if (row.globallyReachable === null && embedded.length > 0) return "public";
    return reachable(row) ? "public" : "private_address";
  }
  // Outside the registry only global unicast, 2000::/3 (the IPv6 Address Space registry), is
  // routed: the rest is reserved, deprecated site-local (fec0::/10) or multicast (ff00::/8).
  return value >> 125n === 1n ? "public" : "private_address";
}

/**
 * The IPv4 addresses inside the forms that carry one: mapped (::ffff:0:0/96) and the deprecated
 * compatible (::/96), NAT64's well-known prefix (64:ff9b::/96), 6to4 (2002:V4ADDR::/48) and
 * Teredo (2001:0:SERVER:flags:port:~CLIENT, RFC 4380: its server and its client, whose address
 * is stored inverted). The local-use NAT64 prefix (64:ff9b:1::/48) puts the IPv4 where its
 * operator chose; its row refuses it whole.
 */
function embeddedIpv4(g: readonly number[]): number[] {
  const word = (hi: number, lo: number) => (g[hi] ?? 0) * 65536 + (g[lo] ?? 0);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [word(6, 7)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [word(6, 7)];
  if (g[0] === 0x2002) return [word(1, 2)];
  if (g[0] === 0x2001 && g[1] === 0) return [word(2, 3), ~word(6, 7) >>> 0];
  return [];
}
