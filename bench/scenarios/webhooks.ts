// Webhook deliveries (issue 16): `rate` events a second (job.created, written as POST /jobs writes them) for one
// endpoint of one org, relayed by the workers' leader and delivered by `workers` worker processes serving only
// `_webhook_delivery` to a local receiver: p99 from the event's time to its arrival, and the rate achieved. Beside the
// same receiver POSTed to directly at the same rate (fixed-rate, wrk2-style): the floor of the HTTP exchange alone.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { WEBHOOK_DELIVERY_TYPE } from "@conveyor/contracts";
import { insertJobs, insertWebhookEndpoint, newId, sealSecret } from "@conveyor/db";
import { freePort } from "@conveyor/testkit";
import { fixedRate } from "../lib/fixed-rate";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

export type WebhookOptions = { rate: number; seconds: number; workers: number; concurrency: number };

const percentile = (values: number[], p: number) =>
  values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]! : NaN;

/** A receiver that answers 204 and notes, for each CloudEvent, how long after its `time` it arrived. */
async function startReceiver(): Promise<{ url: string; latencies: { at: number; ms: number }[]; close(): Promise<void> }> {
  const latencies: { at: number; ms: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      try {
        const { time } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { time?: string };
        if (time) latencies.push({ at, ms: at - Date.parse(time) });
      } catch {
        // the direct baseline's bodies are the same shape; anything else is not counted
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    latencies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function webhookDeliveries(env: BenchEnv, port: number, options: WebhookOptions): Promise<Row[]> {
  const receiver = await startReceiver();
  const workers: Child[] = [];
  try {
    // The floor: the same receiver, POSTed to directly at the same rate, a CloudEvent-sized body each time.
    const body = JSON.stringify({ specversion: "1.0", time: "", data: { pad: "x".repeat(600) } });
    const direct = await fixedRate({ url: receiver.url, method: "POST", body, rate: options.rate, durationS: options.seconds, connections: 64, warmupS: 1 });

    const processEnv = conveyorEnv(env, {
      WORKER_TYPES: WEBHOOK_DELIVERY_TYPE,
      WORKER_CONCURRENCY: String(options.concurrency),
      WEBHOOK_ALLOW_HTTP: "true",
      ALLOW_PRIVATE_NETWORK: "true",
    });
    const endpointId = newId();
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    await insertWebhookEndpoint(env.db.pool, {
      id: endpointId,
      orgId: env.orgId,
      url: receiver.url,
      description: "bench",
      events: ["job.created"],
      sealedSecret: sealSecret(Buffer.from(processEnv.WEBHOOK_SECRETS_KEY!, "base64"), secret, endpointId),
      createdBy: newId(),
    });
    const ports = [port, ...(await Promise.all(Array.from({ length: options.workers - 1 }, () => freePort())))];
    for (const p of ports) workers.push(run("apps/worker/src/main.ts", { ...processEnv, WORKER_METRICS_PORT: String(p) }));
    for (const p of ports) await waitForHttp(`http://127.0.0.1:${p}/healthz`);
    // A leader (which relays) within a lease.
    await sleep(2_000);

    const started = Date.now();
    const measureFrom = started + 1_000;
    const total = Math.round(options.rate * (options.seconds + 1));
    let written = 0;
    const writes: Promise<void>[] = [];
    while (written < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) * options.rate) / 1000));
      if (due > written) {
        const now = new Date();
        const jobs = Array.from({ length: due - written }, () => ({
          id: newId(),
          orgId: env.orgId,
          type: "bench_noop",
          payloadJson: "{}",
          maxRetries: 0,
          createdAt: now,
        }));
        written = due;
        writes.push(insertJobs(env.db.pool, jobs).then(() => undefined));
      }
      await sleep(10);
    }
    await Promise.all(writes);
    const deadline = Date.now() + 30_000;
    while (receiver.latencies.length < total && Date.now() < deadline) await sleep(50);
    const measured = receiver.latencies.filter((l) => l.at - l.ms >= measureFrom).map((l) => l.ms);
    const arrivals = receiver.latencies.map((l) => l.at).sort((a, b) => a - b);
    const achieved = arrivals.length > 1 ? (arrivals.length - 1) / ((arrivals[arrivals.length - 1]! - arrivals[0]!) / 1000) : 0;
    const complete = receiver.latencies.length >= total;
    const p99 = percentile(measured, 99);
    const shape = `${options.rate} events/s to one endpoint, ${options.workers} worker${options.workers > 1 ? "s" : ""} × ${options.concurrency}`;
    return [
      {
        scenario: "Webhook deliveries",
        metric: `${shape}: p99 event → receiver${complete ? "" : ` (only ${receiver.latencies.length} of ${total} arrived)`}`,
        conveyor: p99,
        baseline: direct.p99,
        baselineName: "direct POST to the receiver",
        unit: "ms",
        target: "≤ 1,000 ms, every event delivered",
        met: p99 <= 1_000 && complete,
      },
      {
        scenario: "Webhook deliveries",
        metric: `${shape}: p50 event → receiver`,
        conveyor: percentile(measured, 50),
        baseline: direct.p50,
        baselineName: "direct POST to the receiver",
        unit: "ms",
      },
      {
        scenario: "Webhook deliveries",
        metric: `${shape}: deliveries/s while events flowed`,
        conveyor: achieved,
        baseline: null,
        baselineName: "",
        unit: "/s",
      },
    ];
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await receiver.close();
    await env.db.pool.query("DELETE FROM webhook_endpoints WHERE org_id = $1", [env.orgId]);
    await env.db.pool.query("DELETE FROM event_cursors");
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
