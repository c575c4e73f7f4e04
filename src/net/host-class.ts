// The host half of the SSRF guard (outbound.ts): a literal IPv4 or IPv6 address by its range
// (private, loopback, the metadata services, and the IPv4 inside IPv6's mapped and translated
// forms), a name by its suffix.

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

// ---- Names ---------------------------------------------------------------------------------

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata"]);

/** Suffixes that only resolve inside someone's network (RFC 6761, 6762, 8375, common usage). */
const INTERNAL_SUFFIXES = [
  "local",
  "localdomain",
  "internal",
  "intranet",
  "lan",
  "home",
  "corp",
  "private",
  "arpa",
  "invalid",
];

function classifyName(name: string): HostClass {
  if (METADATA_NAMES.has(name)) return "metadata_endpoint";
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  // No dot: resolved through the resolver's search list, i.e. inside the local network.
  if (!name.includes(".")) return "internal_hostname";
  const tld = name.slice(name.lastIndexOf(".") + 1);
  return INTERNAL_SUFFIXES.includes(tld) ? "internal_hostname" : "public";
}

// ---- IPv4 ----------------------------------------------------------------------------------

function parseIpv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return null;
  }
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** [network, prefix length]: every range no service of ours should reach. */
const IPV4_REFUSED: readonly [string, number][] = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT (and Alibaba's metadata at 100.100.100.200)
  ["169.254.0.0", 16], // link-local, where most clouds put their metadata service
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments (Oracle's metadata at 192.0.0.192)
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
];

const IPV4_RANGES = IPV4_REFUSED.map(([net, bits]) => [parseIpv4(net) ?? 0, bits] as const);

/** AWS/GCP/Azure, AWS ECS task metadata, Alibaba: named so the refusal says what it was. */
const IPV4_METADATA = new Set(
  ["169.254.169.254", "169.254.170.2", "100.100.100.200"].map(parseIpv4),
);

function classifyIpv4(address: number): HostClass {
  if (address >>> 24 === 127) return "loopback";
  if (IPV4_METADATA.has(address)) return "metadata_endpoint";
  const refused = IPV4_RANGES.some(([network, bits]) => inRange(address, network, bits));
  return refused ? "private_address" : "public";
}

function inRange(address: number, network: number, bits: number): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(address / size) === Math.floor(network / size);
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

/** AWS's metadata service over IPv6 (fd00:ec2::254). */
const IPV6_METADATA = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

function classifyIpv6(text: string): HostClass {
  const g = parseIpv6(text);
  if (g.every((x, i) => x === IPV6_METADATA[i])) return "metadata_endpoint";
  if (g.every((x) => x === 0)) return "private_address"; // :: unspecified
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  const embedded = embeddedIpv4(g);
  if (embedded !== null) {
    const inner = classifyIpv4(embedded);
    // A loopback address dressed as IPv6 is never the loopback a developer meant.
    return inner === "loopback" ? "private_address" : inner;
  }
  const first = g[0] ?? 0;
  // Only global unicast (2000::/3) leaves the machine; within it, documentation and Teredo.
  if (first >>> 13 !== 1) return "private_address";
  if (first === 0x2001 && (g[1] === 0xdb8 || g[1] === 0)) return "private_address";
  return "public";
}

/** The IPv4 address inside mapped, compatible, NAT64 and 6to4 forms, which route to it. */
function embeddedIpv4(g: number[]): number | null {
  const tail = (g[6] ?? 0) * 65536 + (g[7] ?? 0);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return tail; // ::ffff:a.b.c.d, ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return tail; // 64:ff9b::/96
  if (g[0] === 0x2002) return (g[1] ?? 0) * 65536 + (g[2] ?? 0); // 2002:V4::/16
  return null;
}
