// Which URLs a job may make the worker fetch (webhook, compress_image). The API applies it at enqueue to
// what can be decided from the URL alone; the worker applies it again to every resolved address at connect
// time, where DNS can no longer lie to it. Pure functions: no DNS, no sockets.
import ipaddr from "ipaddr.js";

export type UrlPolicy = {
  /** Accept http: as well as https: (WEBHOOK_ALLOW_HTTP). */
  allowHttp: boolean;
  /** Accept loopback, private, link-local and other non-public targets (ALLOW_PRIVATE_NETWORK). */
  allowPrivateNetwork: boolean;
};

const BLOCKED_HOSTNAMES = [/^localhost$/, /\.localhost$/, /\.internal$/, /^metadata$/, /\.local$/, /^ip6-localhost$/];

// IPv6 ranges that carry an IPv4 address or translate to one (all but IPv4-mapped ::ffff:0:0/96).
// Refused whole, never judged by the IPv4 inside: simpler, and a gateway, not us, decides where they lead.
// ipaddr.js names all but ::/96 already (it calls that block "unicast"); listing them keeps the refusal from
// depending on its table. :: and ::1 keep their own names (unspecified, loopback): ipaddr.js judges first.
const IPV4_CARRYING_RANGES: Record<string, [ipaddr.IPv6, number][]> = {
  ipv4Compatible: [ipaddr.IPv6.parseCIDR("::/96")], // deprecated by RFC 4291
  rfc6145: [ipaddr.IPv6.parseCIDR("::ffff:0:0:0/96")], // IPv4-translated
  rfc6052: [ipaddr.IPv6.parseCIDR("64:ff9b::/96"), ipaddr.IPv6.parseCIDR("64:ff9b:1::/48")], // NAT64, and RFC 8215's local-use prefix
  "6to4": [ipaddr.IPv6.parseCIDR("2002::/16")],
  teredo: [ipaddr.IPv6.parseCIDR("2001::/32")],
};

/**
 * Why `address` (an IPv4 or IPv6 literal) may not be contacted, or null when it is a public unicast address.
 * IPv4-mapped IPv6 addresses (::ffff:0:0/96) are judged by the IPv4 address they carry; every other IPv6
 * range that carries or translates to an IPv4 address is refused.
 */
export function forbiddenAddressReason(address: string): string | null {
  const canonical = canonicalAddress(address);
  if (canonical === null || !ipaddr.isValid(canonical)) return `"${address}" is not an IP address`;
  let parsed = ipaddr.parse(canonical);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range !== "unicast") return `${parsed.toString()} is a ${range} address`;
  const carrier = parsed.kind() === "ipv6" ? ipaddr.subnetMatch(parsed, IPV4_CARRYING_RANGES, "") : "";
  return carrier ? `${parsed.toString()} is a ${carrier} address` : null;
}

/**
 * `address` as the URL parser spells it (dotted-decimal IPv4; compressed, lower-case, all-hex IPv6 without a
 * zone), or null. ipaddr.js must never see any other spelling: it reads "::a.b.c.d" as ::ffff:a.b.c.d, so
 * ::8.8.8.8 (IPv4-compatible) would be judged as the public 8.8.8.8. One parser, the URL's, decides what an
 * address is, at enqueue and at connect time.
 */
function canonicalAddress(address: string): string | null {
  const ipv6 = address.includes(":");
  // A zone (fe80::1%eth0) only picks the interface; the address is judged without it.
  const bare = ipv6 ? address.replace(/%.*$/s, "") : address;
  if (!/^[\da-fx.:]+$/i.test(bare)) return null;
  try {
    const host = new URL(`http://${ipv6 ? `[${bare}]` : bare}/`).hostname;
    return ipv6 ? host.slice(1, -1) : host;
  } catch {
    return null;
  }
}

/**
 * Why `raw` may not be fetched, judged from the URL alone, or null if it passes (a hostname still has to
 * pass `forbiddenAddressReason` for each address it resolves to).
 */
export function urlRefusal(raw: string, policy: UrlPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a valid URL";
  }
  const schemes = policy.allowHttp ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) return `must use ${schemes.map((s) => s.slice(0, -1)).join(" or ")}, not ${url.protocol.slice(0, -1)}`;
  if (url.username || url.password) return "must not contain credentials";
  if (!url.hostname) return "has no host";
  if (policy.allowPrivateNetwork) return null;
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "");
  // The URL parser has already turned every IPv4 spelling (integer, hex, octal) into dotted decimal and kept
  // IPv6 in brackets, so only these two shapes can be addresses; skipping ipaddr.js for names is cheaper.
  if ((/^[\d.]+$/.test(host) || host.includes(":")) && ipaddr.isValid(host)) {
    const reason = forbiddenAddressReason(host);
    return reason ? `points to a non-public address (${reason})` : null;
  }
  if (BLOCKED_HOSTNAMES.some((pattern) => pattern.test(host))) return `points to an internal host name (${host})`;
  return null;
}
