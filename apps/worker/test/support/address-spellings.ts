// fast-check arbitraries for the SSRF guard's properties: addresses inside a range, and the spellings a URL
// host or a resolver answer may give them. Addresses are numbers (IPv4) or eight 16-bit groups (IPv6).
import fc from "fast-check";

/** How one address is written: `host` goes into a URL (IPv6 in brackets), `answer` is what a resolver returns. */
export type Spelling = { host: string; answer: string };

/** An IPv4 block: its first address and its prefix length. */
export type Ipv4Block = readonly [string, number];

/** docs/reference/robustness.md#r27's IPv4 ranges and the rest of RFC 6890's non-public ones. */
export const FORBIDDEN_IPV4: Ipv4Block[] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
  ["255.255.255.255", 32],
];

/** Blocks ipaddr.js names too (6to4 relay anycast, AS112, AMT): refused as well, so never "public" here. */
const OTHER_SPECIAL_IPV4: Ipv4Block[] = [
  ["192.88.99.0", 24],
  ["192.175.48.0", 24],
  ["192.31.196.0", 24],
  ["192.52.193.0", 24],
];

/** IPv6 blocks (first address as groups, prefix length) refused for what they are, not for an IPv4 inside. */
export const FORBIDDEN_IPV6: (readonly [number[], number])[] = [
  [[0, 0, 0, 0, 0, 0, 0, 1], 128], // ::1
  [[0xfc00, 0, 0, 0, 0, 0, 0, 0], 7], // unique local
  [[0xfe80, 0, 0, 0, 0, 0, 0, 0], 10], // link-local
  [[0xff00, 0, 0, 0, 0, 0, 0, 0], 8], // multicast
];

const toNumber = (dotted: string) => dotted.split(".").reduce((n, part) => n * 256 + Number(part), 0);
const inBlock = (value: number, [base, bits]: Ipv4Block) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(toNumber(base) / 2 ** (32 - bits));

/** Any address of `block` (fast-check leans towards its first and last). */
const ipv4In = ([base, bits]: Ipv4Block) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((offset) => toNumber(base) + offset);

export const forbiddenIpv4 = fc.oneof(...FORBIDDEN_IPV4.map(ipv4In));
export const publicIpv4 = fc
  .integer({ min: 0, max: 2 ** 32 - 1 })
  .filter((value) => ![...FORBIDDEN_IPV4, ...OTHER_SPECIAL_IPV4].some((block) => inBlock(value, block)));

export const dotted = (value: number) => [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join(".");

/** One part of an IPv4 host in decimal, octal (leading 0) or hex (0x or 0X), with spare leading zeros and either case. */
const ipv4Part = (value: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant(String(value)),
    fc.nat({ max: 3 }).map((zeros) => `0${"0".repeat(zeros)}${value.toString(8)}`),
    fc.tuple(fc.constantFrom("0x", "0X"), fc.nat({ max: 3 }), fc.boolean()).map(([x, zeros, upper]) => {
      const digits = value.toString(16);
      return `${x}${"0".repeat(zeros)}${upper ? digits.toUpperCase() : digits}`;
    }),
  );

/**
 * `value` as a URL host may spell it: dotted decimal, or 1 to 4 parts (the last one holds all the bits left:
 * `2130706433`, `127.1`, `127.0.1`) each in its own radix, maybe with a trailing dot.
 */
export const ipv4Spelling = (value: number): fc.Arbitrary<Spelling> => {
  const mixed = fc.integer({ min: 1, max: 4 }).chain((count) => {
    const lastBits = 32 - 8 * (count - 1);
    const leading = [24, 16, 8].slice(0, count - 1).map((shift) => (value >>> shift) & 0xff);
    return fc.tuple(fc.tuple(...[...leading, value % 2 ** lastBits].map(ipv4Part)), fc.boolean());
  });
  return fc
    .oneof(
      fc.constant(dotted(value)),
      mixed.map(([parts, trailingDot]) => parts.join(".") + (trailingDot ? "." : "")),
    )
    .map((text) => ({ host: text, answer: text }));
};

const word = fc.integer({ min: 0, max: 0xffff });
const words = (count: number) => fc.array(word, { minLength: count, maxLength: count });
const halves = (value: number) => [value >>> 16, value & 0xffff] as const;

/** ::ffff:0:0/96, judged by the IPv4 address it carries. */
export const mapped = (value: number) => [0, 0, 0, 0, 0, 0xffff, ...halves(value)];

/** The IPv6 forms that carry or translate to `value` and are refused whatever `value` is. */
export const ipv4Carrying = (value: number): fc.Arbitrary<number[]> => {
  const [high, low] = halves(value);
  return fc.oneof(
    fc.constant<number[]>([0, 0, 0, 0, 0, 0, high, low]), // ::/96, IPv4-compatible
    fc.constant<number[]>([0, 0, 0, 0, 0xffff, 0, high, low]), // ::ffff:0:0:0/96, IPv4-translated
    fc.constant<number[]>([0x64, 0xff9b, 0, 0, 0, 0, high, low]), // 64:ff9b::/96, NAT64
    words(3).map((middle) => [0x64, 0xff9b, 1, ...middle, high, low]), // 64:ff9b:1::/48, local-use NAT64
    words(5).map((rest) => [0x2002, high, low, ...rest]), // 2002::/16, 6to4
    words(4).map((middle) => [0x2001, 0, ...middle, high ^ 0xffff, low ^ 0xffff]), // 2001::/32, Teredo (client inverted)
  );
};

/** Any address of an IPv6 block: the prefix's bits kept, the others arbitrary. */
export const ipv6In = ([first, bits]: readonly [number[], number]): fc.Arbitrary<number[]> =>
  words(8).map((random) =>
    random.map((group, index) => {
      const kept = Math.min(16, Math.max(0, bits - 16 * index));
      const mask = (0xffff << (16 - kept)) & 0xffff;
      return (first[index]! & mask) | (group & ~mask & 0xffff);
    }),
  );

/** Global unicast nobody reserved (2400::/7 holds no special-purpose block). */
export const publicIpv6 = fc.tuple(fc.integer({ min: 0x2400, max: 0x25ff }), words(7)).map(([first, rest]) => [first, ...rest]);

/**
 * `groups` as an IPv6 literal may spell them: one run of zero groups (any of them, any part of it) written
 * "::" or none, spare leading zeros, either case per group, maybe the last 32 bits as a dotted IPv4.
 */
export const ipv6Spelling = (groups: readonly number[]): fc.Arbitrary<Spelling> =>
  fc.boolean().chain((dottedTail) => {
    const hexCount = dottedTail ? 6 : 8;
    const zeroRuns: [number, number][] = [];
    for (let start = 0; start < hexCount; start++) {
      for (let end = start; end < hexCount && groups[end] === 0; end++) zeroRuns.push([start, end]);
    }
    const style = fc.array(fc.tuple(fc.nat({ max: 3 }), fc.boolean()), { minLength: hexCount, maxLength: hexCount });
    const compression = zeroRuns.length ? fc.option(fc.constantFrom(...zeroRuns)) : fc.constant(null);
    return fc.tuple(style, compression).map(([styles, run]) => {
      const hex = groups.slice(0, hexCount).map((group, index) => {
        const [padding, upper] = styles[index]!;
        const digits = group.toString(16).padStart(Math.min(4, group.toString(16).length + padding), "0");
        return upper ? digits.toUpperCase() : digits;
      });
      const tail = dottedTail ? [dotted(groups[6]! * 0x10000 + groups[7]!)] : [];
      const text = run ? `${hex.slice(0, run[0]).join(":")}::${[...hex.slice(run[1] + 1), ...tail].join(":")}` : [...hex, ...tail].join(":");
      return { host: `[${text}]`, answer: text };
    });
  });
