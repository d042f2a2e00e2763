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

/**
 * Why `address` (an IPv4 or IPv6 literal) may not be contacted, or null when it is a public unicast address.
 * IPv4-mapped IPv6 addresses are judged by the IPv4 address they carry.
 */
export function forbiddenAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === "unicast" ? null : `${parsed.toString()} is a ${range} address`;
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
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.$/, "");
  // The URL parser has already turned every IPv4 spelling (integer, hex, octal) into dotted decimal and kept
  // IPv6 in brackets, so only these two shapes can be addresses; skipping ipaddr.js for names is cheaper.
  if ((/^[\d.]+$/.test(host) || host.includes(":")) && ipaddr.isValid(host)) {
    const reason = forbiddenAddressReason(host);
    return reason ? `points to a non-public address (${reason})` : null;
  }
  if (BLOCKED_HOSTNAMES.some((pattern) => pattern.test(host))) return `points to an internal host name (${host})`;
  return null;
}
