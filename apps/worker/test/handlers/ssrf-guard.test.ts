// docs/reference/robustness.md#r27, docs/reference/robustness.md#r28 at connect time, with the guard ON (ALLOW_PRIVATE_NETWORK unset): every vector is
// refused by both handlers that fetch user URLs, and a live server on loopback proves nothing reached it.
import http from "node:http";
import { Writable } from "node:stream";
import { urlPolicy, type Env } from "@conveyor/config";
import { PermanentJobError, RetryableJobError, type JobHandler } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { loadWorkerConfig } from "../../src/env";
import { compressImageHandler } from "../../src/handlers/compress-image";
import { createSsrfGuard, ForbiddenTargetError, type NetOptions, type Resolver } from "@conveyor/net";
import type { HandlerDeps } from "../../src/handlers/types";
import { webhookHandler } from "../../src/handlers/webhook";
import { startImageServer, type RouteServer } from "@conveyor/testkit/fakes";
import { handlerContext } from "../support/handler-context";
import { recordingResolver } from "../support/resolver";

// http is allowed so that every refusal below is about the target, not the scheme.
const guardOn: Env = { WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_TIMEOUT_MS: "1000", PROVIDER_TIMEOUT_MS: "1000" };

function deps(env: Env): HandlerDeps {
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  return { settings: loadWorkerConfig(env), logger: createLogger({ service: "test", stream: discard }) };
}

type Fetcher = (url: string) => Promise<unknown>;
const handlers: [string, (net: NetOptions) => Fetcher][] = [
  ["webhook", (net) => (url) => (webhookHandler(deps(guardOn), net) as JobHandler<{ url: string; payload: object }>)({ url, payload: {} }, handlerContext())],
  ["compress_image", (net) => (url) => compressImageHandler(deps(guardOn), net)({ url, width: 100, quality: 80 }, handlerContext())],
];

describe("SSRF guard, at connect time", () => {
  let server: RouteServer;
  beforeAll(async () => {
    server = await startImageServer();
    server.route("/", (_req, res) => res.writeHead(200).end("internal secret"));
  });
  afterEach(() => {
    server.hits.length = 0;
  });
  afterAll(() => server.close());

  describe.each(handlers)("%s refuses each URL vector before connecting", (_name, make) => {
    const vectors = (port: number): [string, string, RegExp][] => [
      ["file:", "file:///etc/passwd", /must use https or http, not file/],
      ["gopher:", `gopher://127.0.0.1:${port}/_GET`, /must use https or http, not gopher/],
      ["127.0.0.1", `http://127.0.0.1:${port}/`, /127\.0\.0\.1 is a loopback address/],
      ["localhost", `http://localhost:${port}/`, /internal host name \(localhost\)/],
      ["a *.localhost name", `http://api.localhost:${port}/`, /internal host name \(api\.localhost\)/],
      ["[::1]", `http://[::1]:${port}/`, /::1 is a loopback address/],
      ["[::ffff:127.0.0.1]", `http://[::ffff:127.0.0.1]:${port}/`, /127\.0\.0\.1 is a loopback address/],
      ["0.0.0.0", `http://0.0.0.0:${port}/`, /0\.0\.0\.0 is a unspecified address/],
      ["integer IPv4 (2130706433)", `http://2130706433:${port}/`, /127\.0\.0\.1 is a loopback address/],
      ["hex IPv4 (0x7f.0.0.1)", `http://0x7f.0.0.1:${port}/`, /127\.0\.0\.1 is a loopback address/],
      ["octal IPv4 (0177.0.0.1)", `http://0177.0.0.1:${port}/`, /127\.0\.0\.1 is a loopback address/],
      ["169.254.169.254 (cloud metadata)", "http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a linkLocal address/],
      ["metadata.google.internal", "http://metadata.google.internal/computeMetadata/v1/", /internal host name \(metadata\.google\.internal\)/],
      ["10/8", "http://10.1.2.3/", /10\.1\.2\.3 is a private address/],
      ["172.16/12", "http://172.31.255.254/", /172\.31\.255\.254 is a private address/],
      ["192.168/16", "http://192.168.0.10/", /192\.168\.0\.10 is a private address/],
      ["100.64/10 (CGNAT)", "http://100.64.0.1/", /100\.64\.0\.1 is a carrierGradeNat address/],
      ["fc00::/7 (ULA, AWS IPv6 metadata)", "http://[fd00:ec2::254]/", /fd00:ec2::254 is a uniqueLocal address/],
      ["fe80::/10 (link-local)", "http://[fe80::1]/", /fe80::1 is a linkLocal address/],
      ["[::127.0.0.1] (IPv4-compatible)", `http://[::127.0.0.1]:${port}/`, /::7f00:1 is a ipv4Compatible address/],
      ["[::a9fe:a9fe] (IPv4-compatible 169.254.169.254)", "http://[::a9fe:a9fe]/latest/meta-data/", /::a9fe:a9fe is a ipv4Compatible address/],
      ["credentials in the URL", `http://user:pass@public.example:${port}/`, /must not contain credentials/],
    ];
    it.each(vectors(0).map(([label], index) => [label, index] as const))("%s", async (_label, index) => {
      const resolve = recordingResolver({ "public.example": ["93.184.216.34"] });
      const [, url, reason] = vectors(server.port)[index]!;
      const error = await make({ resolve })(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermanentJobError);
      expect((error as Error).message).toMatch(/^URL refused: it /);
      expect((error as Error).message).toMatch(reason);
      expect(server.hits).toEqual([]);
      expect(resolve.asked).toEqual([]);
    });
  });

  describe.each(handlers)("%s refuses a host name whose DNS answer is not public", (_name, make) => {
    it.each([
      ["127.0.0.1", "loopback"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["0.0.0.0", "unspecified"],
      ["169.254.169.254", "linkLocal"],
      ["10.0.0.7", "private"],
      ["172.16.0.1", "private"],
      ["192.168.1.1", "private"],
      ["100.100.100.100", "carrierGradeNat"],
      ["fc00::1", "uniqueLocal"],
      ["fe80::1", "linkLocal"],
      ["224.0.0.1", "multicast"],
      ["ff02::1", "multicast"],
      ["64:ff9b::7f00:1", "rfc6052"],
      ["::7f00:1", "ipv4Compatible"],
      ["::169.254.169.254", "ipv4Compatible"],
      // ipaddr.js alone reads "::a.b.c.d" as ::ffff:a.b.c.d, which would judge this one as the public 8.8.8.8.
      ["::8.8.8.8", "ipv4Compatible"],
      ["::ffff:0:7f00:1", "rfc6145"],
      ["64:ff9b:1::a9fe:a9fe", "rfc6052"],
      ["2002:7f00:1::", "6to4"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo"],
    ])("%s (%s)", async (address, range) => {
      const resolve = recordingResolver({ "innocent.example": [address] });
      const error = await make({ resolve })(`http://innocent.example:${server.port}/`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermanentJobError);
      expect((error as Error).message).toContain(`innocent.example:${server.port} refused by the SSRF guard: innocent.example resolves to a forbidden address`);
      expect((error as Error).message).toContain(`is a ${range} address`);
      expect(server.hits).toEqual([]);
    });

    it("refuses when any one of several addresses is not public", async () => {
      const resolve = recordingResolver({ "mixed.example": ["93.184.216.34", "2606:2800:220:1::1", "127.0.0.1"] });
      const error = await make({ resolve })(`http://mixed.example:${server.port}/`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermanentJobError);
      expect((error as Error).message).toContain("127.0.0.1 is a loopback address");
      expect(server.hits).toEqual([]);
    });
  });

  describe("DNS rebinding", () => {
    // 4000::1 is public unicast as far as the policy knows but unallocated, so nothing answers there.
    const rebinding = () => {
      let calls = 0;
      const resolve: Resolver = async () => (++calls === 1 ? ["4000::1"] : ["127.0.0.1"]);
      return { resolve, calls: () => calls };
    };

    it("connects to the address it checked, never to a second, rebound answer", async () => {
      const dns = rebinding();
      const ctx = handlerContext();
      const handle = webhookHandler(deps(guardOn), { resolve: dns.resolve });

      const error = await handle({ url: `http://rebind.example:${server.port}/`, payload: {} }, ctx).catch((e: unknown) => e);

      // The attempt went to 4000::1 (unreachable: a network failure, retried), not to the loopback server.
      expect(error).toBeInstanceOf(RetryableJobError);
      expect(dns.calls()).toBe(1);
      expect(ctx.lines.map((line) => line.message)).toContain("rebind.example resolved to 4000::1; connecting to the checked address");
      expect(server.hits).toEqual([]);

      // The next attempt opens a new socket, resolves again, and the rebound answer is judged and refused.
      const retry = await handle({ url: `http://rebind.example:${server.port}/`, payload: {} }, handlerContext({ jobId: ctx.jobId, attempt: 2 })).catch(
        (e: unknown) => e,
      );
      expect(retry).toBeInstanceOf(PermanentJobError);
      expect((retry as Error).message).toContain("rebind.example resolves to a forbidden address (127.0.0.1 is a loopback address)");
      expect(dns.calls()).toBe(2);
      expect(server.hits).toEqual([]);
    });

    it("hands the socket only the addresses it checked (lookup called directly)", async () => {
      const dns = rebinding();
      const lookup = createSsrfGuard({ policy: { allowHttp: true, allowPrivateNetwork: false }, resolve: dns.resolve }).lookup();
      const first = await new Promise((resolve) => lookup("rebind.example", { all: true }, (err, addresses) => resolve({ err, addresses })));
      expect(first).toEqual({ err: null, addresses: [{ address: "4000::1", family: 6 }] });
      const second = await new Promise<{ err: unknown }>((resolve) => lookup("rebind.example", {}, (err) => resolve({ err })));
      expect(second.err).toBeInstanceOf(ForbiddenTargetError);
    });
  });

  describe("the agents on their own", () => {
    // Literal IPs never reach `lookup`; the agents judge them when the socket is made, whoever calls them.
    it.each(["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[::127.0.0.1]", "[::a9fe:a9fe]"])(
      "refuses a socket to %s even without the URL check",
      async (host) => {
        const { httpAgent } = createSsrfGuard({ policy: { allowHttp: true, allowPrivateNetwork: false } }).agents();
        const error = await new Promise((resolve) => {
          http.get(`http://${host}:${server.port}/`, { agent: httpAgent }, () => resolve(null)).once("error", resolve);
        });
        expect(error).toBeInstanceOf(ForbiddenTargetError);
        expect(server.hits).toEqual([]);
      },
    );

    it("lets loopback through only when ALLOW_PRIVATE_NETWORK is set", async () => {
      const guard = createSsrfGuard({ policy: urlPolicy(loadWorkerConfig({ ALLOW_PRIVATE_NETWORK: "true" })) });
      const status = await new Promise((resolve, reject) => {
        http.get(`http://127.0.0.1:${server.port}/`, { agent: guard.agents().httpAgent }, (res) => resolve(res.resume().statusCode)).once("error", reject);
      });
      expect(status).toBe(200);
    });
  });
});
