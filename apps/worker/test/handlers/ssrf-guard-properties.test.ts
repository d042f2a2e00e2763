// docs/reference/robustness.md#r27 as properties: every address of every non-public range, in every spelling a URL host or a
// resolver answer can take, is refused at enqueue (urlRefusal) and at connect time (the guard's URL check, its
// socket `lookup`, its agents for literal IPs), before any socket connects. A failure prints fast-check's
// seed; FC_SEED=<seed> replays it.
import type http from "node:http";
import { PermanentJobError, urlRefusal, type UrlPolicy } from "@conveyor/contracts";
import fc from "fast-check";
import { createSsrfGuard, ForbiddenTargetError, type SsrfGuard } from "@conveyor/net";
import {
  dotted,
  FORBIDDEN_IPV6,
  forbiddenIpv4,
  ipv4Carrying,
  ipv4Spelling,
  ipv6In,
  ipv6Spelling,
  mapped,
  publicIpv4,
  publicIpv6,
  type Spelling,
} from "../support/address-spellings";

const runs = { numRuns: 1000, ...(process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED) }) };

const strict: UrlPolicy = { allowHttp: false, allowPrivateNetwork: false };
const open: UrlPolicy = { allowHttp: false, allowPrivateNetwork: true };

/** A guard whose resolver answers `answer` for innocent.example, and nothing else. */
const guardAnswering = (policy: UrlPolicy, answer: string) =>
  createSsrfGuard({ policy, resolve: async (name) => (name === "innocent.example" ? [answer] : []) });

/** What the guard's socket `lookup` gives for innocent.example: an error, or the addresses it would connect to. */
const lookUp = (guard: SsrfGuard) =>
  new Promise<{ error: unknown; address: unknown }>((resolve) =>
    guard.lookup()("innocent.example", { all: true }, (error, address) => resolve({ error, address })),
  );

/**
 * What an agent gives instead of a socket to the literal `host`. Should it wrongly make one, the socket is
 * destroyed in the same tick: net defers connecting to a literal IP to the next tick, so nothing is sent.
 */
function socketRefusal(agent: http.Agent, host: string): unknown {
  let refusal: unknown = "no callback";
  const socket = agent.createConnection({ host, port: 9 }, (error) => (refusal = error));
  if (!socket) return refusal;
  socket.destroy();
  return "a socket was made";
}

async function expectRefusedEverywhere({ host, answer }: Spelling) {
  const url = `https://${host}/x`;
  expect(urlRefusal(url, strict)).toMatch(/^points to a non-public address \(/);

  const guard = guardAnswering(strict, answer);
  expect(() => guard.checkUrl(url)).toThrow(PermanentJobError);
  expect((await lookUp(guard)).error).toBeInstanceOf(ForbiddenTargetError);
  // What node:http hands the agent: the URL parser's spelling of the host, without brackets.
  const literal = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const { httpAgent, httpsAgent } = guard.agents();
  expect(socketRefusal(httpAgent, literal)).toBeInstanceOf(ForbiddenTargetError);
  expect(socketRefusal(httpsAgent, literal)).toBeInstanceOf(ForbiddenTargetError);
}

// Agents are left out here: a socket they accept would really connect.
async function expectAccepted(policy: UrlPolicy, { host }: Spelling) {
  const url = `https://${host}/x`;
  expect(urlRefusal(url, policy)).toBeNull();
  const canonical = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const guard = guardAnswering(policy, canonical);
  expect(guard.checkUrl(url).href).toBe(new URL(url).href);
  expect(await lookUp(guard)).toEqual({ error: null, address: [{ address: canonical, family: canonical.includes(":") ? 6 : 4 }] });
}

const forbiddenIpv4InIpv6 = forbiddenIpv4.chain((value) => fc.oneof(fc.constant(mapped(value)), ipv4Carrying(value))).chain(ipv6Spelling);
const forbiddenIpv6 = fc.oneof(...FORBIDDEN_IPV6.map(ipv6In)).chain(ipv6Spelling);
const anyForbidden = fc.oneof(forbiddenIpv4.chain(ipv4Spelling), forbiddenIpv4InIpv6, forbiddenIpv6);

describe("SSRF guard properties, at enqueue and at connect time", () => {
  it("refuses every address of every non-public IPv4 range in every IPv4 spelling (integer, hex, octal, short, mixed, trailing dot)", async () => {
    await fc.assert(fc.asyncProperty(forbiddenIpv4.chain(ipv4Spelling), expectRefusedEverywhere), runs);
  });

  it("refuses the same addresses inside IPv6: mapped, compatible, translated, NAT64, 6to4 and Teredo, in every IPv6 spelling", async () => {
    await fc.assert(fc.asyncProperty(forbiddenIpv4InIpv6, expectRefusedEverywhere), runs);
  });

  it("refuses the IPv6 ranges that carry an IPv4 address (all but IPv4-mapped) whole, even around a public address", async () => {
    await fc.assert(fc.asyncProperty(publicIpv4.chain(ipv4Carrying).chain(ipv6Spelling), expectRefusedEverywhere), runs);
  });

  it("refuses every address of ::1, fc00::/7, fe80::/10 and ff00::/8 in every IPv6 spelling", async () => {
    await fc.assert(fc.asyncProperty(forbiddenIpv6, expectRefusedEverywhere), runs);
  });

  it("accepts a public unicast IPv4 address in dotted form, so the refusals above are not refusing everything", async () => {
    await fc.assert(
      fc.asyncProperty(
        publicIpv4.map((value) => ({ host: dotted(value), answer: dotted(value) })),
        (spelling) => expectAccepted(strict, spelling),
      ),
      runs,
    );
  });

  it("accepts public addresses in their other spellings too: IPv4 forms, IPv4-mapped IPv6, global unicast IPv6", async () => {
    const spelling = fc.oneof(publicIpv4.chain(ipv4Spelling), publicIpv4.map(mapped).chain(ipv6Spelling), publicIpv6.chain(ipv6Spelling));
    await fc.assert(
      fc.asyncProperty(spelling, (each) => expectAccepted(strict, each)),
      runs,
    );
  });

  it("with ALLOW_PRIVATE_NETWORK accepts every one of those addresses, and still refuses http and credentials", async () => {
    await fc.assert(
      fc.asyncProperty(anyForbidden, async (spelling) => {
        await expectAccepted(open, spelling);
        expect(urlRefusal(`http://${spelling.host}/x`, open)).toMatch(/^must use https, not http$/);
        expect(urlRefusal(`https://user:secret@${spelling.host}/x`, open)).toBe("must not contain credentials");
      }),
      runs,
    );
  });
});
