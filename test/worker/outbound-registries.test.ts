import { describe, expect, it } from "vitest";
import { checkOutboundUrl, type OutboundPolicy } from "../../src/net/outbound";
import {
  IPV4_SPECIAL_PURPOSE,
  IPV6_SPECIAL_PURPOSE,
  SPECIAL_USE_DOMAINS,
} from "../../src/net/special-purpose";

// The outbound guard against the IANA special-purpose address registries, row by row, and the
// names that are no public DNS name (docs/outbound.md). Each row: the block, its "Globally
// Reachable" column, what the guard answers for an address in it, and the addresses tried
// (inside the block, and its first and last address where they say something).

const PRODUCTION: OutboundPolicy = { httpsOnly: true, allowLoopback: false };

type Verdict = "allowed" | "private_address" | "loopback" | "metadata_endpoint";
type Row = [block: string, globallyReachable: boolean | null, verdict: Verdict, hosts: string[]];

/**
 * Rows the registry marks globally reachable that the guard refuses anyway: anycast addresses
 * of network services and ORCHID-style identifiers (src/net/host-class.ts says why).
 */
const REFUSED_ANYWAY = new Set([
  "192.0.0.9/32",
  "192.0.0.10/32",
  "192.31.196.0/24",
  "192.52.193.0/24",
  "192.175.48.0/24",
  "2001:1::1/128",
  "2001:1::2/128",
  "2001:1::3/128",
  "2001:3::/32",
  "2001:4:112::/48",
  "2620:4f:8000::/48",
  "2001:20::/28",
  "2001:30::/28",
]);

const IPV4_ROWS: Row[] = [
  ["0.0.0.0/8", false, "private_address", ["0.1.2.3", "0.255.255.255"]],
  ["0.0.0.0/32", false, "private_address", ["0.0.0.0"]],
  ["10.0.0.0/8", false, "private_address", ["10.0.0.0", "10.1.2.3", "10.255.255.255"]],
  ["100.64.0.0/10", false, "private_address", ["100.64.0.0", "100.100.0.1", "100.127.255.255"]],
  ["127.0.0.0/8", false, "loopback", ["127.0.0.0", "127.0.0.1", "127.255.255.255"]],
  ["169.254.0.0/16", false, "private_address", ["169.254.0.0", "169.254.1.1", "169.254.255.255"]],
  ["172.16.0.0/12", false, "private_address", ["172.16.0.0", "172.20.1.1", "172.31.255.255"]],
  ["192.0.0.0/24", false, "private_address", ["192.0.0.11", "192.0.0.100", "192.0.0.255"]],
  ["192.0.0.0/29", false, "private_address", ["192.0.0.0", "192.0.0.1", "192.0.0.7"]],
  ["192.0.0.8/32", false, "private_address", ["192.0.0.8"]],
  ["192.0.0.9/32", true, "private_address", ["192.0.0.9"]],
  ["192.0.0.10/32", true, "private_address", ["192.0.0.10"]],
  ["192.0.0.170/32", false, "private_address", ["192.0.0.170"]],
  ["192.0.0.171/32", false, "private_address", ["192.0.0.171"]],
  ["192.0.2.0/24", false, "private_address", ["192.0.2.0", "192.0.2.1", "192.0.2.255"]],
  ["192.31.196.0/24", true, "private_address", ["192.31.196.0", "192.31.196.1"]],
  ["192.52.193.0/24", true, "private_address", ["192.52.193.1", "192.52.193.255"]],
  ["192.88.99.0/24", null, "private_address", ["192.88.99.0", "192.88.99.1", "192.88.99.255"]],
  ["192.88.99.2/32", false, "private_address", ["192.88.99.2"]],
  ["192.168.0.0/16", false, "private_address", ["192.168.0.0", "192.168.1.1", "192.168.255.255"]],
  ["192.175.48.0/24", true, "private_address", ["192.175.48.1", "192.175.48.42"]],
  ["198.18.0.0/15", false, "private_address", ["198.18.0.0", "198.18.0.1", "198.19.255.255"]],
  ["198.51.100.0/24", false, "private_address", ["198.51.100.0", "198.51.100.255"]],
  ["203.0.113.0/24", false, "private_address", ["203.0.113.0", "203.0.113.255"]],
  ["240.0.0.0/4", false, "private_address", ["240.0.0.0", "250.1.2.3", "255.255.255.254"]],
  ["255.255.255.255/32", false, "private_address", ["255.255.255.255"]],
];

const IPV6_ROWS: Row[] = [
  ["::1/128", false, "loopback", ["::1"]],
  ["::/128", false, "private_address", ["::"]],
  ["::ffff:0:0/96", false, "private_address", ["::ffff:8.8.8.8", "::ffff:1.1.1.1", "::ffff:0:0"]],
  ["64:ff9b::/96", true, "allowed", ["64:ff9b::8.8.8.8", "64:ff9b::1.1.1.1"]],
  [
    "64:ff9b:1::/48",
    false,
    "private_address",
    ["64:ff9b:1::", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"],
  ],
  ["100::/64", false, "private_address", ["100::", "100::1", "100::ffff:ffff:ffff:ffff"]],
  [
    "100:0:0:1::/64",
    false,
    "private_address",
    ["100:0:0:1::", "100:0:0:1::1", "100::1:ffff:ffff:ffff:ffff"],
  ],
  [
    "2001::/23",
    false,
    "private_address",
    ["2001:4::1", "2001:100::1", "2001:1::4", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  // N/A: judged by the IPv4 addresses inside (the public case is below, with the other forms).
  ["2001::/32", null, "private_address", ["2001::", "2001:0:4136:e378:8000:63bf:3fff:fdd2"]],
  ["2001:1::1/128", true, "private_address", ["2001:1::1"]],
  ["2001:1::2/128", true, "private_address", ["2001:1::2"]],
  ["2001:1::3/128", true, "private_address", ["2001:1::3"]],
  [
    "2001:2::/48",
    false,
    "private_address",
    ["2001:2::", "2001:2::1", "2001:2:0:ffff:ffff:ffff:ffff:ffff"],
  ],
  ["2001:3::/32", true, "private_address", ["2001:3::1", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff"]],
  ["2001:4:112::/48", true, "private_address", ["2001:4:112::1"]],
  [
    "2001:10::/28",
    null,
    "private_address",
    ["2001:10::", "2001:10::1", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  [
    "2001:20::/28",
    true,
    "private_address",
    ["2001:20::", "2001:20::1", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  [
    "2001:30::/28",
    true,
    "private_address",
    ["2001:30::1", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  [
    "2001:db8::/32",
    false,
    "private_address",
    ["2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  ["2002::/16", null, "private_address", ["2002:a00:1::1", "2002:c0a8:101::1", "2002::"]],
  [
    "2620:4f:8000::/48",
    true,
    "private_address",
    ["2620:4f:8000::6", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"],
  ],
  [
    "3fff::/20",
    false,
    "private_address",
    ["3fff::", "3fff::1", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  ["5f00::/16", false, "private_address", ["5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"]],
  [
    "fc00::/7",
    false,
    "private_address",
    ["fc00::", "fd12:3456:789a::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
  [
    "fe80::/10",
    false,
    "private_address",
    ["fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ],
];

/** What the guard answers for a host under the production policy. */
function verdictOf(host: string): Verdict | string {
  const result = checkOutboundUrl(`https://${host}/`, PRODUCTION);
  if (result.ok) return "allowed";
  return result.reason === "loopback_not_allowed" ? "loopback" : result.reason;
}

function describeRegistry(name: string, rows: Row[], data: typeof IPV4_SPECIAL_PURPOSE) {
  const literal = (host: string) => (host.includes(":") ? `[${host}]` : host);

  describe(name, () => {
    it("has every row of src/net/special-purpose.ts, with its Globally Reachable column", () => {
      const table = rows.map(([block, reachable]) => [block, reachable]);
      expect(data.map((row) => [row.block, row.globallyReachable])).toEqual(table);
    });

    it("refuses every row not globally reachable; the reachable ones are allowed or listed", () => {
      for (const [block, reachable, verdict] of rows) {
        if (reachable === true && !REFUSED_ANYWAY.has(block)) {
          expect(verdict, block).toBe("allowed");
        } else {
          expect(verdict, block).not.toBe("allowed");
        }
      }
    });

    it.each(rows)("%s (globally reachable: %s): %s", (_block, _reachable, verdict, hosts) => {
      for (const host of hosts) expect(verdictOf(literal(host)), host).toBe(verdict);
    });
  });
}

describeRegistry("the IPv4 special-purpose registry", IPV4_ROWS, IPV4_SPECIAL_PURPOSE);
describeRegistry("the IPv6 special-purpose registry", IPV6_ROWS, IPV6_SPECIAL_PURPOSE);

describe("addresses outside the registries", () => {
  it.each([
    // the public neighbours of special-purpose blocks
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.0.3.0",
    "192.88.98.255",
    "192.88.100.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "1.1.1.1",
    "8.8.8.8",
    "[2001:200::1]",
    "[2001:db9::1]",
    "[2620:4f:7fff:ffff:ffff:ffff:ffff:ffff]",
    "[2620:4f:8001::]",
    "[3fff:1000::]",
    "[2606:4700:4700::1111]",
    "[2a00:1450:4001::1]",
  ])("allows the public address %s", (host) => {
    expect(verdictOf(host)).toBe("allowed");
  });

  it.each([
    // IPv4 multicast, outside the special-purpose registry
    "224.0.0.0",
    "239.255.255.255",
    // IPv6 outside global unicast (2000::/3): reserved, deprecated site-local, multicast
    "[::2]",
    "[200::1]",
    "[1000::1]",
    "[4000::1]",
    "[fec0::1]",
    "[ff02::1]",
    "[ff0e::1]",
  ])("refuses %s, no unicast destination on the internet", (host) => {
    expect(verdictOf(host)).toBe("private_address");
  });
});

describe("an IPv4 address inside IPv6 is judged as IPv4", () => {
  it.each([
    ["64:ff9b::808:808", "allowed"],
    ["64:ff9b::10.0.0.1", "private_address"],
    ["64:ff9b::100.64.0.1", "private_address"],
    ["64:ff9b::192.0.2.1", "private_address"],
    ["64:ff9b::127.0.0.1", "private_address"],
    ["64:ff9b::169.254.169.254", "metadata_endpoint"],
    ["2002:808:808::1", "allowed"],
    ["2002:101:101:1::1", "allowed"],
    ["2002:a9fe:a9fe::1", "metadata_endpoint"],
    ["2002:7f00:1::1", "private_address"],
    ["2002:c000:201::1", "private_address"],
    // Teredo: server 65.54.227.120; the client is stored inverted (RFC 4380)
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "allowed"], // client 8.8.8.8
    ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "private_address"], // client 10.0.0.1
    ["2001:0:4136:e378:8000:63bf:5601:5601", "metadata_endpoint"], // client 169.254.169.254
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "private_address"], // server 10.0.0.1
    // mapped: the IPv4 class names the refusal; a public one is refused by the mapped row
    ["::ffff:10.0.0.1", "private_address"],
    ["::ffff:169.254.169.254", "metadata_endpoint"],
    ["::ffff:8.8.8.8", "private_address"],
    // the deprecated compatible form (::/96) is outside global unicast, whatever is inside
    ["::8.8.8.8", "private_address"],
    ["::169.254.169.254", "metadata_endpoint"],
  ])("[%s]: %s", (host, verdict) => {
    expect(verdictOf(`[${host}]`)).toBe(verdict);
  });

  it("reads decimal, octal and hex IPv4 spellings as the dotted quads they are", () => {
    expect(verdictOf("3221225985")).toBe("private_address"); // 192.0.2.1
    expect(verdictOf("0xc0000201")).toBe("private_address");
    expect(verdictOf("0300.0.02.01")).toBe("private_address");
    expect(verdictOf("3232235777")).toBe("private_address"); // 192.168.1.1
    expect(verdictOf("0xc0.0x0.0x0.0x9")).toBe("private_address"); // 192.0.0.9
    expect(verdictOf("134744072")).toBe("allowed"); // 8.8.8.8
    expect(verdictOf("0x8.0x8.0x8.0x8")).toBe("allowed");
  });
});

describe("names", () => {
  it.each([
    // single labels, resolved through the search list
    "kubernetes",
    "kubernetes.",
    "db",
    // Kubernetes' cluster names
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.",
    "kubernetes.default.svc.cluster.local",
    "payments.prod.svc",
    // the Special-Use Domain Names registry
    "printer.local",
    "agents.example",
    "example",
    "www.test",
    "x.invalid",
    "abcdefghijklmnop.onion",
    "name.alt",
    "router.home.arpa",
    "1.0.0.10.in-addr.arpa",
    "8.e.f.ip6.arpa",
    "ipv4only.arpa",
    "resolver.arpa",
    "service.arpa",
    // reserved or withheld by ICANN, and private conventions
    "db.internal",
    "host.docker.internal",
    "git.corp",
    "router.home",
    "box.mail",
    "nas.lan",
    "wiki.intranet",
    "vault.private",
    "host.localdomain",
    // under no top-level domain of the root zone
    "vault.service.consul",
    "api.k8s",
    "nas.docker",
    "x.テスト", // xn--zckzah, an IDN test TLD long gone from the root zone
  ])("refuses %s as an internal name", (host) => {
    expect(verdictOf(host)).toBe("internal_hostname");
  });

  it.each(["localhost", "agent.localhost", "LOCALHOST."])("treats %s as loopback", (host) => {
    expect(verdictOf(host)).toBe("loopback");
  });

  it.each([
    "example.com",
    "www.example.org",
    "agents.example.net",
    "api.stripe.com",
    "hooks.slack.com",
    "a.b.co.uk",
    "my.app",
    "internal.example.com",
    "svc.example.com",
    "local.example.net",
    "corp.example.com",
    "test.dev",
    "xn--e1afmkfd.xn--p1ai",
    "пример.рф",
    "bücher.example.com",
  ])("allows the public name %s", (host) => {
    expect(verdictOf(host)).toBe("allowed");
  });

  it("refuses every name of the Special-Use Domain Names registry but the delegated example.*", () => {
    for (const { name } of SPECIAL_USE_DOMAINS) {
      const expected = ["example.com", "example.net", "example.org"].includes(name)
        ? "allowed"
        : name === "localhost"
          ? "loopback"
          : "internal_hostname";
      expect(verdictOf(`agent.${name}`), name).toBe(expected);
    }
  });
});
