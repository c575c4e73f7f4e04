// The registries the outbound guard (host-class.ts) judges hosts by, written down as data.
//
// TRANSCRIBED, NOT DOWNLOADED. These tables were written on 2026-11-28 from our knowledge of the
// IANA registries, on a machine that could not reach iana.org; they were checked against RFC
// text and other published transcriptions, not against the live pages. Before trusting a row,
// or when a registry has changed, compare it with the registry itself:
//
// - IANA IPv4 Special-Purpose Address Registry (RFC 6890, RFC 8190),
//   https://www.iana.org/assignments/iana-ipv4-special-registry/ ; the newest rows we know of
//   are from 2017 (TURN anycast, 192.0.0.10/32); last updated, as we know it: 2017 or later.
// - IANA IPv6 Special-Purpose Address Registry (RFC 6890, RFC 8190),
//   https://www.iana.org/assignments/iana-ipv6-special-registry/ ; the newest rows we know of
//   are from 2024–2025 (3fff::/20, 5f00::/16, 2001:1::3/128, 100:0:0:1::/64); a copy marked
//   "updated 2025-10-09" exists, and a row added by that update, if any, is not here.
// - IANA Special-Use Domain Names registry (RFC 6761),
//   https://www.iana.org/assignments/special-use-domain-names/ ; the newest entry we know of is
//   service.arpa. (RFC 9665, 2024).
//
// Each address row keeps the registry's "Globally Reachable" column as it is: `true`, `false`, or
// `null` where the registry gives no boolean ("N/A": 6to4 and Teredo, whose reachability is that
// of the IPv4 address inside; or nothing at all: a deprecated block). What the guard does with
// each row (refusing some globally reachable ones too) is decided in host-class.ts, not here.

export interface SpecialPurposeBlock {
  /** The registry's "Address Block", as written there. */
  readonly block: string;
  readonly name: string;
  readonly rfc: string;
  /** The registry's "Globally Reachable": `null` for N/A or a deprecated block's blank. */
  readonly globallyReachable: boolean | null;
}

export const IPV4_SPECIAL_PURPOSE: readonly SpecialPurposeBlock[] = [
  { block: "0.0.0.0/8", name: '"This network"', rfc: "RFC 791", globallyReachable: false },
  {
    block: "0.0.0.0/32",
    name: '"This host on this network"',
    rfc: "RFC 1122",
    globallyReachable: false,
  },
  { block: "10.0.0.0/8", name: "Private-Use", rfc: "RFC 1918", globallyReachable: false },
  {
    block: "100.64.0.0/10",
    name: "Shared Address Space",
    rfc: "RFC 6598",
    globallyReachable: false,
  },
  { block: "127.0.0.0/8", name: "Loopback", rfc: "RFC 1122", globallyReachable: false },
  { block: "169.254.0.0/16", name: "Link Local", rfc: "RFC 3927", globallyReachable: false },
  { block: "172.16.0.0/12", name: "Private-Use", rfc: "RFC 1918", globallyReachable: false },
  {
    block: "192.0.0.0/24",
    name: "IETF Protocol Assignments",
    rfc: "RFC 6890",
    globallyReachable: false,
  },
  {
    block: "192.0.0.0/29",
    name: "IPv4 Service Continuity Prefix",
    rfc: "RFC 7335",
    globallyReachable: false,
  },
  { block: "192.0.0.8/32", name: "IPv4 dummy address", rfc: "RFC 7600", globallyReachable: false },
  {
    block: "192.0.0.9/32",
    name: "Port Control Protocol Anycast",
    rfc: "RFC 7723",
    globallyReachable: true,
  },
  {
    block: "192.0.0.10/32",
    name: "Traversal Using Relays around NAT Anycast",
    rfc: "RFC 8155",
    globallyReachable: true,
  },
  {
    block: "192.0.0.170/32",
    name: "NAT64/DNS64 Discovery",
    rfc: "RFC 8880, RFC 7050",
    globallyReachable: false,
  },
  {
    block: "192.0.0.171/32",
    name: "NAT64/DNS64 Discovery",
    rfc: "RFC 8880, RFC 7050",
    globallyReachable: false,
  },
  {
    block: "192.0.2.0/24",
    name: "Documentation (TEST-NET-1)",
    rfc: "RFC 5737",
    globallyReachable: false,
  },
  { block: "192.31.196.0/24", name: "AS112-v4", rfc: "RFC 7535", globallyReachable: true },
  { block: "192.52.193.0/24", name: "AMT", rfc: "RFC 7450", globallyReachable: true },
  {
    block: "192.88.99.0/24",
    name: "Deprecated (6to4 Relay Anycast)",
    rfc: "RFC 7526",
    globallyReachable: null,
  },
  {
    block: "192.88.99.2/32",
    name: "6a44-relay anycast address",
    rfc: "RFC 6751",
    globallyReachable: false,
  },
  { block: "192.168.0.0/16", name: "Private-Use", rfc: "RFC 1918", globallyReachable: false },
  {
    block: "192.175.48.0/24",
    name: "Direct Delegation AS112 Service",
    rfc: "RFC 7534",
    globallyReachable: true,
  },
  { block: "198.18.0.0/15", name: "Benchmarking", rfc: "RFC 2544", globallyReachable: false },
  {
    block: "198.51.100.0/24",
    name: "Documentation (TEST-NET-2)",
    rfc: "RFC 5737",
    globallyReachable: false,
  },
  {
    block: "203.0.113.0/24",
    name: "Documentation (TEST-NET-3)",
    rfc: "RFC 5737",
    globallyReachable: false,
  },
  { block: "240.0.0.0/4", name: "Reserved", rfc: "RFC 1112", globallyReachable: false },
  {
    block: "255.255.255.255/32",
    name: "Limited Broadcast",
    rfc: "RFC 8190, RFC 919",
    globallyReachable: false,
  },
];

export const IPV6_SPECIAL_PURPOSE: readonly SpecialPurposeBlock[] = [
  { block: "::1/128", name: "Loopback Address", rfc: "RFC 4291", globallyReachable: false },
  { block: "::/128", name: "Unspecified Address", rfc: "RFC 4291", globallyReachable: false },
  {
    block: "::ffff:0:0/96",
    name: "IPv4-mapped Address",
    rfc: "RFC 4291",
    globallyReachable: false,
  },
  { block: "64:ff9b::/96", name: "IPv4-IPv6 Translat.", rfc: "RFC 6052", globallyReachable: true },
  {
    block: "64:ff9b:1::/48",
    name: "IPv4-IPv6 Translat.",
    rfc: "RFC 8215",
    globallyReachable: false,
  },
  {
    block: "100::/64",
    name: "Discard-Only Address Block",
    rfc: "RFC 6666",
    globallyReachable: false,
  },
  { block: "100:0:0:1::/64", name: "Dummy IPv6 Prefix", rfc: "RFC 9780", globallyReachable: false },
  {
    block: "2001::/23",
    name: "IETF Protocol Assignments",
    rfc: "RFC 2928",
    globallyReachable: false,
  },
  { block: "2001::/32", name: "TEREDO", rfc: "RFC 4380, RFC 8190", globallyReachable: null },
  {
    block: "2001:1::1/128",
    name: "Port Control Protocol Anycast",
    rfc: "RFC 7723",
    globallyReachable: true,
  },
  {
    block: "2001:1::2/128",
    name: "Traversal Using Relays around NAT Anycast",
    rfc: "RFC 8155",
    globallyReachable: true,
  },
  {
    block: "2001:1::3/128",
    name: "DNS-SD Service Registration Protocol Anycast",
    rfc: "RFC 9665",
    globallyReachable: true,
  },
  { block: "2001:2::/48", name: "Benchmarking", rfc: "RFC 5180", globallyReachable: false },
  { block: "2001:3::/32", name: "AMT", rfc: "RFC 7450", globallyReachable: true },
  { block: "2001:4:112::/48", name: "AS112-v6", rfc: "RFC 7535", globallyReachable: true },
  {
    block: "2001:10::/28",
    name: "Deprecated (previously ORCHID)",
    rfc: "RFC 4843",
    globallyReachable: null,
  },
  { block: "2001:20::/28", name: "ORCHIDv2", rfc: "RFC 7343", globallyReachable: true },
  {
    block: "2001:30::/28",
    name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
    rfc: "RFC 9374",
    globallyReachable: true,
  },
  { block: "2001:db8::/32", name: "Documentation", rfc: "RFC 3849", globallyReachable: false },
  { block: "2002::/16", name: "6to4", rfc: "RFC 3056", globallyReachable: null },
  {
    block: "2620:4f:8000::/48",
    name: "Direct Delegation AS112 Service",
    rfc: "RFC 7534",
    globallyReachable: true,
  },
  { block: "3fff::/20", name: "Documentation", rfc: "RFC 9637", globallyReachable: false },
  {
    block: "5f00::/16",
    name: "Segment Routing (SRv6) SIDs",
    rfc: "RFC 9602",
    globallyReachable: false,
  },
  { block: "fc00::/7", name: "Unique-Local", rfc: "RFC 4193, RFC 8190", globallyReachable: false },
  { block: "fe80::/10", name: "Link-Local Unicast", rfc: "RFC 4291", globallyReachable: false },
];

/**
 * The Special-Use Domain Names registry: each name and every name under it. Most are under
 * `arpa.` (reverse zones of private and link-local ranges, and protocol names).
 */
export const SPECIAL_USE_DOMAINS: readonly { readonly name: string; readonly rfc: string }[] = [
  { name: "6tisch.arpa", rfc: "RFC 9031" },
  { name: "10.in-addr.arpa", rfc: "RFC 6761" },
  ...Array.from({ length: 16 }, (_, i) => ({
    name: `${16 + i}.172.in-addr.arpa`,
    rfc: "RFC 6761",
  })),
  { name: "168.192.in-addr.arpa", rfc: "RFC 6761" },
  { name: "170.0.0.192.in-addr.arpa", rfc: "RFC 8880" },
  { name: "171.0.0.192.in-addr.arpa", rfc: "RFC 8880" },
  { name: "254.169.in-addr.arpa", rfc: "RFC 6762" },
  { name: "8.e.f.ip6.arpa", rfc: "RFC 6762" },
  { name: "9.e.f.ip6.arpa", rfc: "RFC 6762" },
  { name: "a.e.f.ip6.arpa", rfc: "RFC 6762" },
  { name: "b.e.f.ip6.arpa", rfc: "RFC 6762" },
  { name: "alt", rfc: "RFC 9476" },
  { name: "eap-noob.arpa", rfc: "RFC 9140" },
  { name: "example", rfc: "RFC 6761" },
  { name: "example.com", rfc: "RFC 6761" },
  { name: "example.net", rfc: "RFC 6761" },
  { name: "example.org", rfc: "RFC 6761" },
  { name: "home.arpa", rfc: "RFC 8375" },
  { name: "invalid", rfc: "RFC 6761" },
  { name: "ipv4only.arpa", rfc: "RFC 8880" },
  { name: "local", rfc: "RFC 6762" },
  { name: "localhost", rfc: "RFC 6761" },
  { name: "onion", rfc: "RFC 7686" },
  { name: "resolver.arpa", rfc: "RFC 9462" },
  { name: "service.arpa", rfc: "RFC 9665" },
  { name: "test", rfc: "RFC 6761" },
];
