// The SSRF guard keeps connections alive per resolved address (issue 27): deliveries to one endpoint share one
// connection, a host that now resolves elsewhere gets a connection of its own, and every request is still resolved
// and judged before a connection is chosen (the refusals themselves are ssrf-guard.test.ts'). A real HTTP server on
// loopback counts the connections it accepts.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { Env } from "@conveyor/config";
import type { JobHandler, WebhookPayload } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { createSsrfGuard, guardedRequest, POOLED_AGENTS } from "@conveyor/net";
import { loadWorkerConfig } from "../../src/env";
import type { HandlerDeps } from "../../src/handlers/types";
import { webhookHandler } from "../../src/handlers/webhook";
import { handlerContext } from "../support/handler-context";
import { recordingResolver } from "../support/resolver";

const env: Env = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_TIMEOUT_MS: "5000" };

function deps(): HandlerDeps {
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  return { settings: loadWorkerConfig(env), logger: createLogger({ service: "test", stream: discard }) };
}

let server: http.Server;
let port: number;
/** Remote addresses of the connections the server accepted, in order. */
const connections: string[] = [];
let requests = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
  });
  server.on("connection", (socket) => connections.push(socket.localAddress ?? "?"));
  // Every loopback address (127.0.0.1 and 127.0.0.2 reach the same server).
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  port = (server.address() as AddressInfo).port;
});
beforeEach(() => {
  connections.length = 0;
  requests = 0;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("SSRF guard keep-alive", () => {
  it("sends two webhook deliveries to one endpoint over one connection", async () => {
    const answers = { "hooks.example": ["127.0.0.1"] };
    const handler = webhookHandler(deps(), { resolve: recordingResolver(answers) }) as JobHandler<WebhookPayload>;
    const deliver = () => handler({ url: `http://hooks.example:${port}/in`, payload: { n: 1 } }, handlerContext());
    await expect(deliver()).resolves.toMatchObject({ status: 200 });
    await expect(deliver()).resolves.toMatchObject({ status: 200 });
    expect(requests).toBe(2);
    expect(connections).toEqual(["127.0.0.1"]);
  });

  it("resolves every request afresh and opens a new connection when the host resolves to another address", async () => {
    const answers: Record<string, string[]> = { "hooks.example": ["127.0.0.1"] };
    const resolver = recordingResolver(answers);
    const guard = createSsrfGuard({ policy: { allowHttp: true, allowPrivateNetwork: true }, resolve: resolver });
    const post = () =>
      guardedRequest(guard, {
        url: new URL(`http://hooks.example:${port}/in`),
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(5_000),
        maxBodyBytes: 1024,
        overflow: "truncate",
      });
    try {
      expect((await post()).status).toBe(200);
      answers["hooks.example"] = ["127.0.0.2"];
      expect((await post()).status).toBe(200);
      answers["hooks.example"] = ["127.0.0.1"];
      expect((await post()).status).toBe(200);
      expect(connections).toEqual(["127.0.0.1", "127.0.0.2"]);
      expect(requests).toBe(3);
      // Each request asked DNS and had its answer judged; only then was a connection of that answer reused.
      expect(resolver.asked).toEqual(["hooks.example", "hooks.example", "hooks.example"]);
    } finally {
      guard.closePooled();
    }
  });

  it("keeps at most POOLED_AGENTS address sets, retiring the least recently used", async () => {
    const answers: Record<string, string[]> = {};
    const guard = createSsrfGuard({ policy: { allowHttp: true, allowPrivateNetwork: true }, resolve: recordingResolver(answers) });
    try {
      const agents = new Set<unknown>();
      for (let i = 0; i <= POOLED_AGENTS; i++) {
        answers[`h${i}.example`] = [`127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`];
        agents.add(await guard.pooledAgent(new URL(`http://h${i}.example/`)));
      }
      expect(agents.size).toBe(POOLED_AGENTS + 1);
      // The first set was retired: asking again makes a new agent; the last one is still kept.
      const last = await guard.pooledAgent(new URL(`http://h${POOLED_AGENTS}.example/`));
      expect(agents.has(last)).toBe(true);
      expect(agents.has(await guard.pooledAgent(new URL("http://h0.example/")))).toBe(false);
    } finally {
      guard.closePooled();
    }
  });
});
