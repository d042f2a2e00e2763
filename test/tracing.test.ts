// OpenTelemetry through real processes (docs/reference/high-availability.md#scale-out-and-observability): an API and a worker started with OTEL_EXPORTER_OTLP_ENDPOINT export
// their spans to a real OTLP/HTTP receiver (JSON encoding) run by this test. A job created by a request that carries a
// `traceparent` runs in that trace: the API's request span continues it, the job stores it, the attempt's span joins
// it with the job's attributes, and the webhook the job sends carries it onward. An exporter that is gone changes no
// response and no outcome.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { createSecondOrg, type SecondOrg } from "@conveyor/api/testing";
import { headerValue, startWebhookReceiver, type FakeServer } from "@conveyor/testkit/fakes";
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePort,
  spawnService,
  testRedisPrefix,
  TEST_REDIS_URL,
  waitFor,
  type ServiceProcess,
  type TestDatabase,
} from "@conveyor/testkit";

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type Attribute = { key: string; value: AnyValue };
type ReceivedSpan = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
};
type ExportRequest = {
  resourceSpans?: {
    resource?: { attributes?: Attribute[] };
    scopeSpans?: { spans?: (Omit<ReceivedSpan, "service" | "attributes"> & { attributes?: Attribute[] })[] }[];
  }[];
};

const valueOf = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributes = (list: Attribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP trace receiver: POST /v1/traces with an ExportTraceServiceRequest in JSON; answers 200 {}. */
function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const request = JSON.parse(body) as ExportRequest;
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(attributes(resourceSpans.resource?.attributes)["service.name"]);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? []) spans.push({ ...span, service, attributes: attributes(span.attributes) });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

let database: TestDatabase;
let org: SecondOrg;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let receiver: FakeServer;
let api: ServiceProcess;
let worker: ServiceProcess;
let base: string;
const prefix = testRedisPrefix();

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createSecondOrg(database.db, "Traced");
  [otlp, receiver] = await Promise.all([startOtlpReceiver(), startWebhookReceiver()]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const shared = {
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    PUBLIC_URL: base,
    ALLOW_PRIVATE_NETWORK: "true",
    WEBHOOK_ALLOW_HTTP: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
  api = spawnService("api", { ...shared, PORT: String(port), BCRYPT_COST: "4" });
  worker = spawnService("worker", { ...shared, WORKER_METRICS_PORT: "0", RETRY_BASE_MS: "100", WORKER_TYPES: "webhook" });
  await Promise.all([api.waitForOutput(/API listening/), worker.waitForOutput(/worker started/)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await Promise.all([otlp?.close().catch(() => {}), receiver?.close()]);
  await database?.drop();
  await deleteRedisPrefix(prefix);
});

async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "X-API-Key": org.apiKey, ...(body ? { "content-type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as { id: string; status: string } };
}
const finished = (id: string) =>
  waitFor(
    async () => {
      const job = (await request("GET", `/jobs/${id}`)).body;
      return job.status === "done" || job.status === "failed" ? job : null;
    },
    `job ${id} to finish`,
    30_000,
    100,
  );
/** The span of `jobId` whose name starts with `kind` ("attempt", "hand over"). */
const spanOf = (kind: string, jobId: string) =>
  waitFor(
    async () => otlp.spans.find((s) => s.attributes["conveyor.job.id"] === jobId && s.name.startsWith(`${kind} `)) ?? null,
    `the ${kind} span of ${jobId}`,
    15_000,
    100,
  );
const attemptOf = (jobId: string) => spanOf("attempt", jobId);

describe("tracing with an OTLP endpoint set", () => {
  it("runs a job's attempt in the trace of the request that created it, and carries the trace to the webhook it sends", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const created = await request(
      "POST",
      "/jobs",
      { type: "webhook", payload: { url: `${receiver.url}/hook`, payload: { n: 1 } } },
      {
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
    );
    expect(created.status).toBe(202);
    expect((await finished(created.body.id)).status).toBe("done");

    const stored = await database.db.pool.query<{ trace_parent: string }>("SELECT trace_parent FROM jobs WHERE id = $1", [created.body.id]);
    expect(stored.rows[0]!.trace_parent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const attempt = await attemptOf(created.body.id);
    expect(attempt).toMatchObject({ service: "conveyor-worker", traceId, name: "attempt webhook" });
    expect(attempt.attributes).toMatchObject({
      "conveyor.job.id": created.body.id,
      "conveyor.job.type": "webhook",
      "conveyor.org.id": org.orgId,
      "conveyor.attempt": 1,
      "conveyor.outcome": "done",
    });
    // The API's request span continues the caller's and is the attempt's parent (the traceparent the job stored).
    const apiSpans = await waitFor(
      async () => {
        const found = otlp.spans.filter((s) => s.service === "conveyor-api" && s.traceId === traceId);
        return found.some((s) => s.parentSpanId === callerSpan) ? found : null;
      },
      "the API's spans of the request",
      15_000,
      100,
    );
    const server = apiSpans.find((s) => s.parentSpanId === callerSpan)!;
    expect(server.kind).toBe(2); // SERVER
    expect(attempt.parentSpanId).toBe(stored.rows[0]!.trace_parent.split("-")[2]);
    expect(apiSpans.map((s) => s.spanId)).toContain(attempt.parentSpanId);
    // The dispatcher's hand-over to BullMQ is a span of the same trace, under the same request span, before the attempt.
    const handOver = await spanOf("hand over", created.body.id);
    expect(handOver).toMatchObject({ service: "conveyor-worker", traceId, name: "hand over webhook", kind: 4, parentSpanId: attempt.parentSpanId });
    expect(handOver.attributes).toMatchObject({ "conveyor.job.type": "webhook", "conveyor.org.id": org.orgId });
    // Postgres calls of the request are spans of the same trace.
    expect(apiSpans.some((s) => s.attributes["db.system.name"] === "postgresql" || s.attributes["db.system"] === "postgresql")).toBe(true);

    // The webhook went out with a traceparent of this trace, from a span under the attempt.
    const delivery = receiver.requests.find((r) => r.path === "/hook")!;
    const sent = headerValue(delivery, "traceparent")!;
    expect(sent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const client = await waitFor(async () => otlp.spans.find((s) => s.spanId === sent.split("-")[2]) ?? null, "the webhook's client span", 15_000, 100);
    expect(client.service).toBe("conveyor-worker");
    expect(client.traceId).toBe(traceId);
  });

  it("starts a trace at the API when the request carries none, and the attempt joins it", async () => {
    const created = await request("POST", "/jobs", { type: "webhook", payload: { url: `${receiver.url}/plain`, payload: {} } });
    expect((await finished(created.body.id)).status).toBe("done");
    const attempt = await attemptOf(created.body.id);
    // Up the attempt's ancestors (Express' handler spans) to the API's request span, which starts the trace.
    const root = await waitFor(
      async () => {
        let span: ReceivedSpan | undefined = attempt;
        for (let hops = 0; span?.parentSpanId && hops < 20; hops++) span = otlp.spans.find((s) => s.spanId === span!.parentSpanId);
        return span && !span.parentSpanId && span !== attempt ? span : null;
      },
      "the trace's root span",
      15_000,
      100,
    );
    expect(root).toMatchObject({ service: "conveyor-api", traceId: attempt.traceId, kind: 2 });
    expect(root.attributes["http.route"] ?? root.name).toMatch(/\/jobs/);
  });

  it("answers and runs jobs as usual while the receiver is gone", async () => {
    await otlp.close();
    const created = await request("POST", "/jobs", { type: "webhook", payload: { url: `${receiver.url}/after`, payload: {} } });
    expect(created.status).toBe(202);
    expect((await finished(created.body.id)).status).toBe("done");
    expect(receiver.requests.some((r) => r.path === "/after")).toBe(true);
  });
});
