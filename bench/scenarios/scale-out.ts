// Issue 27's costs, each against a baseline measured in the same run:
// - tracing on (every span exported over OTLP/HTTP to a local receiver started here) vs off, for the no-op worker
//   and for POST /jobs (target ≥ 0.9×);
// - the no-op worker on a three-master Redis Cluster (private, on ports 7110–7112) vs the machine's single Redis
//   (target ≥ 0.8×);
// - webhook deliveries per second to one HTTPS endpoint through the SSRF guard with keep-alive vs without (today's
//   one connection and TLS handshake per delivery): the delivery exchange (guardedRequest) in this process.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createSsrfGuard, guardedRequest } from "@conveyor/net";
import { startRedisCluster } from "@conveyor/testkit";
import { load } from "../lib/load";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { drainNoopJobs, NOOP_PLUGIN } from "./worker";

const CLUSTER_PORTS: [number, number, number] = [7110, 7111, 7112];

type Receiver = { endpoint: string; exports(): number; close(): Promise<void> };

/**
 * An OTLP/HTTP receiver that takes every export and counts them, answering in the export's own encoding as a
 * collector does: an empty ExportTraceServiceResponse, which is no bytes in protobuf and `{}` in JSON (a JSON answer
 * to a protobuf export makes the exporter log a stack trace per export, which the traced side would pay for).
 */
async function otlpReceiver(): Promise<Receiver> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/v1/traces") exports++;
      if (String(req.headers["content-type"]).startsWith("application/x-protobuf")) res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** No-op jobs/s from queued to done through one worker process with `extra` environment (as worker.ts times it). */
async function noopWorkerRate(env: BenchEnv, port: number, jobs: number, concurrency: number, extra: Record<string, string>): Promise<number> {
  let proc: Child | undefined;
  try {
    proc = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, {
        WORKER_TYPES: "bench_noop",
        WORKER_PLUGINS: NOOP_PLUGIN,
        WORKER_CONCURRENCY: String(concurrency),
        WORKER_METRICS_PORT: String(port),
        ...extra,
      }),
    );
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    await sleep(1000);
    return await drainNoopJobs(env, jobs);
  } finally {
    await proc?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}

// The default protocol (http/protobuf), as a deployment would run it.
const tracingEnv = (receiver: Receiver) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });

/** Tracing on vs off: the no-op worker and POST /jobs. */
export async function tracingCost(env: BenchEnv, ports: { api: number; worker: number }, jobs: number, concurrency: number, durationS: number): Promise<Row[]> {
  const receiver = await otlpReceiver();
  let api: Child | undefined;
  try {
    // Best of 2 each, alternated, so a burst of load from elsewhere on the machine hits both sides alike.
    let [off, on] = [0, 0];
    for (let round = 0; round < 2; round++) {
      off = Math.max(off, await noopWorkerRate(env, ports.worker, jobs, concurrency, {}));
      const before = receiver.exports();
      on = Math.max(on, await noopWorkerRate(env, ports.worker, jobs, concurrency, tracingEnv(receiver)));
      if (receiver.exports() === before) throw new Error("the traced worker exported no spans");
    }

    const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42 } } });
    const target = { url: `http://127.0.0.1:${ports.api}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
    const postRate = async (extra: Record<string, string>) => {
      api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api), ...extra }));
      await waitForHttp(`http://127.0.0.1:${ports.api}/healthz`);
      await load({ ...target, durationS: 1 });
      const result = await load({ ...target, durationS });
      if (result.non2xx || result.errors) throw new Error(`POST /jobs answered ${result.non2xx} non-2xx and ${result.errors} errors`);
      await api.stop();
      api = undefined;
      await clearJobs(env.db);
      return result.rps;
    };
    let [postOff, postOn] = [0, 0];
    for (let round = 0; round < 2; round++) {
      postOff = Math.max(postOff, await postRate({}));
      const before = receiver.exports();
      postOn = Math.max(postOn, await postRate(tracingEnv(receiver)));
      if (receiver.exports() === before) throw new Error("the traced API exported no spans");
    }

    return [
      {
        scenario: "Tracing (OTLP/HTTP to a local receiver)",
        metric: `no-op worker queued → done, concurrency ${concurrency}, best of 2`,
        conveyor: on,
        baseline: off,
        baselineName: "tracing off",
        unit: "jobs/s",
        target: "≥ 0.9× off",
        met: on >= 0.9 * off,
      },
      {
        scenario: "Tracing (OTLP/HTTP to a local receiver)",
        metric: "POST /jobs sustained throughput, best of 2",
        conveyor: postOn,
        baseline: postOff,
        baselineName: "tracing off",
        unit: "req/s",
        target: "≥ 0.9× off",
        met: postOn >= 0.9 * postOff,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await receiver.close();
  }
}

/** The no-op worker on a three-master Redis Cluster vs on the single Redis. */
export async function redisClusterCost(env: BenchEnv, workerPort: number, jobs: number, concurrency: number): Promise<Row[]> {
  const cluster = await startRedisCluster(CLUSTER_PORTS);
  try {
    // Best of 2 each, alternated.
    let [single, clustered] = [0, 0];
    for (let round = 0; round < 2; round++) {
      single = Math.max(single, await noopWorkerRate(env, workerPort, jobs, concurrency, {}));
      clustered = Math.max(clustered, await noopWorkerRate(env, workerPort, jobs, concurrency, { REDIS_URL: cluster.url, REDIS_CLUSTER_NODES: cluster.nodes }));
    }
    return [
      {
        scenario: "Redis Cluster (3 masters, one machine)",
        metric: `no-op worker queued → done, concurrency ${concurrency}, best of 2`,
        conveyor: clustered,
        baseline: single,
        baselineName: "single Redis",
        unit: "jobs/s",
        target: "≥ 0.8× single",
        met: clustered >= 0.8 * single,
      },
    ];
  } finally {
    await cluster.stop();
  }
}

/** A self-signed certificate for `name` (openssl), as PEM. */
function selfSigned(name: string): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-bench-tls-"));
  try {
    const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        `/CN=${name}`,
        "-addext",
        `subjectAltName=DNS:${name}`,
        "-keyout",
        key,
        "-out",
        cert,
      ],
      {
        stdio: "ignore",
      },
    );
    return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Webhook deliveries/s to one HTTPS endpoint, `concurrency` in flight, with and without keep-alive. */
export async function webhookKeepAlive(durationS: number, concurrency: number): Promise<Row[]> {
  const name = "hooks.example";
  const tls = selfSigned(name);
  let connections = 0;
  const server = createHttpsServer(tls, (req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  server.on("secureConnection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(`https://${name}:${(server.address() as AddressInfo).port}/hook`);
  const body = JSON.stringify({ specversion: "1.0", type: "conveyor.job.created", data: { pad: "x".repeat(600) } });

  const measure = async (keepAlive: boolean) => {
    const guard = createSsrfGuard({
      policy: { allowHttp: false, allowPrivateNetwork: true },
      resolve: () => Promise.resolve(["127.0.0.1"]),
      ca: tls.cert,
      keepAlive,
    });
    connections = 0;
    let delivered = 0;
    const until = Date.now() + durationS * 1000;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < until) {
          const answer = await guardedRequest(guard, {
            url,
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(10_000),
            maxBodyBytes: 64 * 1024,
            overflow: "truncate",
          });
          if (answer.status !== 204) throw new Error(`the receiver answered ${answer.status}`);
          delivered++;
        }
      }),
    );
    guard.closePooled();
    return { perSecond: delivered / ((Date.now() - started) / 1000), connections, delivered };
  };
  try {
    await measure(true); // warm-up (JIT, TLS context)
    const off = await measure(false);
    const on = await measure(true);
    return [
      {
        scenario: "Webhook deliveries, one HTTPS endpoint",
        metric: `deliveries/s through the SSRF guard, ${concurrency} in flight (${on.connections} connections for ${on.delivered}; without: ${off.connections} for ${off.delivered})`,
        conveyor: on.perSecond,
        baseline: off.perSecond,
        baselineName: "no keep-alive (a connection and TLS handshake per delivery)",
        unit: "/s",
        target: "> 1.0× without",
        met: on.perSecond > off.perSecond,
      },
    ];
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}
