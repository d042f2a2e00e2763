// `npm run soak` (docs/reference/time.md#partitions-and-retention; not in CI): the API and two workers as the README deploys them (separate processes,
// production settings), fed a mix of built-in job types at a fixed rate whose providers are the test fakes
// (the wire formats of docs/reference/providers.md), while workers are SIGKILLed, Redis is restarted and retention passes run. It ends (at
// its duration, or on SIGINT/SIGTERM) with a report: nothing lost (every accepted job accounted for), duplicates
// only after kills, RSS per process, Postgres' table and index sizes, start lateness and throughput over time —
// as a JSON file and an HTML page of plots.
//
// Options (all optional): --rate=1000 (jobs/s)  --duration=2h (s, m or h)  --kill-every=15m  --redis-restart-at=0.5
// (fraction of the run; 0 for none)  --retention-every=10m  --retention-age=10m  --sample=10s  --drain=3m
// --api-port=3700 --worker-ports=3701,3702 --redis-port=7450 (a private redis-server, never the shared one)
// --database-server=URL (default the machine's Postgres; a database `soak_<hex>` is made on it and dropped after,
// unless --keep-db)  --setup-sql=FILE (run on that database after its migrations, e.g. per-table autovacuum settings)
// --out=bench/results/soak-<time>  --connections=64
//
// The machine's Postgres runs with autovacuum off: there the tables grow with every dead row. For sizes that go flat,
// point --database-server at a server with autovacuum on (docs/operations.md, "Autovacuum for the hot tables").
//
// Retention: JOB_RETENTION_DAYS counts whole days, so the soak runs the leader's own statement (deleteFinishedJobs,
// as maintenance/retention.ts does) with a cut-off `--retention-age` ago, in batches of 2,000. Just before each pass
// it reads which jobs that cut-off will take (final ones only) and books them as settled: a job retention deletes is
// never counted lost.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { deleteFinishedJobs } from "@conveyor/db";
import {
  AT_TEST_KEY,
  AT_TEST_USERNAME,
  SENDGRID_TEST_KEY,
  startAfricasTalkingFake,
  startSendGridFake,
  startSlackFake,
  startWebhookReceiver,
  type FakeServer,
} from "@conveyor/testkit/fakes";
import { repoRoot, rssMb, run, sleep, waitForHttp, type Child } from "../lib/procs";
import { conveyorEnv, prepare, type BenchEnv } from "../lib/setup";
import { Fate, Ledger, MARKER, percentile } from "./ledger";
import { writeReportPage } from "./page";
import type { SoakReport, SoakSample } from "./report-types";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));

/** "90", "90s", "10m", "2h" → seconds. */
function seconds(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new Error(`not a duration: ${value}`);
  return Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
}

const options = {
  rate: Number(args.rate ?? 1000),
  durationS: seconds(args.duration ?? "2h"),
  killEveryS: seconds(args["kill-every"] ?? "15m"),
  redisRestartAt: Number(args["redis-restart-at"] ?? 0.5),
  retentionEveryS: seconds(args["retention-every"] ?? "10m"),
  retentionAgeS: seconds(args["retention-age"] ?? "10m"),
  sampleS: seconds(args.sample ?? "10s"),
  drainS: seconds(args.drain ?? "3m"),
  apiPort: Number(args["api-port"] ?? 3700),
  workerPorts: (args["worker-ports"] ?? "3701,3702").split(",").map(Number),
  redisPort: Number(args["redis-port"] ?? 7450),
  databaseServer: args["database-server"] ?? process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@localhost:5432/postgres",
  keepDb: "keep-db" in args,
  setupSql: args["setup-sql"],
  connections: Number(args.connections ?? 64),
  out: args.out ?? path.join(repoRoot, "bench/results", `soak-${new Date().toISOString().replace(/[:.]/g, "-")}`),
};

/** The mix: each type's share of the jobs and its request body for sequence number n. */
type Fakes = { webhook: FakeServer; sendgrid: FakeServer; sms: FakeServer; slack: FakeServer & { webhookUrl: string } };
const MIX: { type: string; share: number; body(n: number, fakes: Fakes): unknown }[] = [
  {
    type: "webhook",
    share: 0.4,
    body: (n, f) => ({ type: "webhook", payload: { url: `${f.webhook.url}/hooks/soak`, payload: { ref: `soak-${n}`, total: "19.90" } }, max_retries: 3 }),
  },
  {
    type: "send_email",
    share: 0.3,
    body: (n) => ({ type: "send_email", payload: { to: "ada@example.com", subject: `Receipt soak-${n}`, body: "Thank you for your order." }, max_retries: 3 }),
  },
  { type: "send_sms", share: 0.2, body: (n) => ({ type: "send_sms", payload: { to: "+254712345678", message: `Your code soak-${n}` }, max_retries: 3 }) },
  { type: "chat_notify", share: 0.1, body: (n) => ({ type: "chat_notify", payload: { channel: "#soak", text: `Deploy soak-${n} finished` }, max_retries: 3 }) },
];

function typeFor(n: number): (typeof MIX)[number] {
  // A fixed pattern of 10: 4 webhook, 3 e-mail, 2 SMS, 1 chat.
  const slot = n % 10;
  let acc = 0;
  for (const entry of MIX) {
    acc += entry.share * 10;
    if (slot < acc) return entry;
  }
  return MIX[0]!;
}

/** A private redis-server on a fixed port (never the machine's shared one), restartable. */
function privateRedis(port: number) {
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    pid: () => child?.pid ?? 0,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
      const deadline = Date.now() + 10_000;
      for (;;) {
        const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on("error", () => {});
        try {
          await client.connect();
          if ((await client.ping()) === "PONG") return;
        } catch {
          if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
        } finally {
          client.disconnect();
        }
        await sleep(100);
      }
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

async function tableSizes(env: BenchEnv): Promise<SoakSample["tables"]> {
  const { rows } = await env.db.pool.query<{ name: string; heap: string; indexes: string; total: string; live: string; dead: string; vacuums: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes, pg_total_relation_size(c.oid) AS total,
            coalesce(s.n_live_tup, 0) AS live, coalesce(s.n_dead_tup, 0) AS dead, coalesce(s.autovacuum_count, 0) AS vacuums
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND (pg_total_relation_size(c.oid) > 256 * 1024 OR s.n_dead_tup > 1000)
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  return Object.fromEntries(
    rows.map((r) => [
      r.name,
      { heap: Number(r.heap), indexes: Number(r.indexes), total: Number(r.total), live: Number(r.live), dead: Number(r.dead), autovacuums: Number(r.vacuums) },
    ]),
  );
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  mkdirSync(options.out, { recursive: true });
  const capacity = Math.ceil(options.rate * options.durationS * 1.05) + 10_000;
  const ledger = new Ledger(capacity);
  const events: SoakReport["events"] = [];
  const note = (kind: string, detail: string) => {
    events.push({ atS: now() / 1000, kind, detail });
    process.stdout.write(`[${(now() / 1000).toFixed(0)} s] ${kind}: ${detail}\n`);
  };

  let stopping = false;
  const stopEarly = (signal: string) => {
    if (stopping) return;
    stopping = true;
    note("stop", `${signal}: ending early, draining and reporting`);
  };
  process.on("SIGINT", () => stopEarly("SIGINT"));
  process.on("SIGTERM", () => stopEarly("SIGTERM"));

  const redis = privateRedis(options.redisPort);
  await redis.start();
  const env = await prepare(options.databaseServer, "soak");
  env.redisUrl = redis.url;
  if (options.setupSql) await env.db.pool.query(readFileSync(options.setupSql, "utf8"));
  const [webhook, sendgrid, sms, slack] = await Promise.all([
    startWebhookReceiver(),
    startSendGridFake(),
    startAfricasTalkingFake(),
    startSlackFake({ channels: ["#soak", "soak"] }),
  ]);
  const fakes: Fakes = { webhook, sendgrid, sms, slack };

  // Lateness samples of the current interval, and the interval's counts.
  let lateness: number[] = [];
  let acceptedInInterval = 0;
  let deliveredInInterval = 0;
  let refusedInInterval = 0;
  const drainFakes = () => {
    for (const fake of [webhook, sendgrid, sms, slack]) {
      const batch = fake.requests.splice(0, fake.requests.length);
      fake.reset();
      for (const request of batch) {
        const m = MARKER.exec(request.body);
        if (!m) continue;
        const late = ledger.delivered(Number(m[1]), request.receivedAt - startedAt.getTime());
        if (late !== null) {
          lateness.push(late);
          deliveredInInterval++;
        }
      }
    }
  };

  const workerEnv = (port: number) =>
    conveyorEnv(env, {
      WORKER_METRICS_PORT: String(port),
      WEBHOOK_ALLOW_HTTP: "true",
      ALLOW_PRIVATE_NETWORK: "true",
      EMAIL_PROVIDER: "sendgrid",
      EMAIL_PROVIDER_API_KEY: SENDGRID_TEST_KEY,
      EMAIL_PROVIDER_BASE_URL: sendgrid.url,
      EMAIL_FROM: "soak@example.com",
      SMS_PROVIDER_USERNAME: AT_TEST_USERNAME,
      SMS_PROVIDER_API_KEY: AT_TEST_KEY,
      SMS_PROVIDER_BASE_URL: sms.url,
      CHAT_WEBHOOK_URL: slack.webhookUrl,
    });
  const startWorker = async (i: number) => {
    const child = run("apps/worker/src/main.ts", workerEnv(options.workerPorts[i]!));
    await waitForHttp(`http://127.0.0.1:${options.workerPorts[i]}/healthz`);
    return child;
  };
  const api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(options.apiPort), WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" }));
  const workers: (Child | undefined)[] = [undefined, undefined];
  const samples: SoakSample[] = [];
  const retentionPasses: SoakReport["retentionPasses"] = [];
  const db = env.db.pool;
  let lastTables: SoakSample["tables"] = {};
  let pool: Pool | undefined;
  try {
    await waitForHttp(`http://127.0.0.1:${options.apiPort}/healthz`);
    workers[0] = await startWorker(0);
    workers[1] = await startWorker(1);
    note("start", `rate ${options.rate} jobs/s for ${options.durationS} s; database ${env.databaseUrl.replace(/^.*\//, "")}; redis ${redis.url}`);

    pool = new Pool(`http://127.0.0.1:${options.apiPort}`, { connections: options.connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
    const headers = { "content-type": "application/json", "x-api-key": env.apiKey };
    let inFlight = 0;
    const send = (seq: number) => {
      inFlight++;
      pool!
        .request({ path: "/jobs", method: "POST", headers, body: JSON.stringify(typeFor(seq).body(seq, fakes)) })
        .then(async (response) => {
          await response.body.dump();
          if (response.statusCode === 202) {
            ledger.fate[seq] = Fate.Accepted;
            acceptedInInterval++;
          } else {
            ledger.fate[seq] = Fate.Refused;
            refusedInInterval++;
          }
        })
        .catch(() => {
          ledger.fate[seq] = Fate.Refused;
          refusedInInterval++;
        })
        .finally(() => inFlight--);
    };

    // Open loop: job i is due at i / rate seconds; each tick sends every job now due.
    const loadStart = now();
    let due = 0;
    const tick = setInterval(() => {
      if (stopping) return;
      const elapsed = (now() - loadStart) / 1000;
      const target = Math.min(Math.floor(elapsed * options.rate), Math.floor(options.durationS * options.rate));
      // A backlog of unanswered requests beyond 30 s of load means the API is down: stop piling on.
      while (due < target && inFlight < options.rate * 30) {
        send(ledger.next(now()));
        due++;
      }
    }, 5);

    const fakeTimer = setInterval(drainFakes, 250);
    let nextSample = options.sampleS;
    let nextKill = options.killEveryS;
    let kills = 0;
    let nextRetention = options.retentionEveryS;
    let redisRestarted = options.redisRestartAt <= 0;
    let tablesAt = -Infinity;
    const busy = new Map<string, Promise<void>>();
    const track = (name: string, fn: () => Promise<void>) => {
      busy.set(
        name,
        fn()
          .catch((error: Error) => note("error", `${name}: ${error.message}`))
          .finally(() => busy.delete(name)),
      );
    };
    let lastSampleAt = 0;
    while (!stopping && (now() - loadStart) / 1000 < options.durationS) {
      await sleep(200);
      const t = (now() - loadStart) / 1000;
      if (t >= nextSample) {
        drainFakes();
        if (t - tablesAt >= 30 || !Object.keys(lastTables).length) {
          lastTables = await tableSizes(env).catch(() => lastTables);
          tablesAt = t;
        }
        const span = (now() - lastSampleAt) / 1000;
        lastSampleAt = now();
        const sample: SoakSample = {
          atS: now() / 1000,
          acceptedPerS: acceptedInInterval / span,
          deliveredPerS: deliveredInInterval / span,
          refusedPerS: refusedInInterval / span,
          latenessP50: percentile(lateness, 0.5),
          latenessP99: percentile(lateness, 0.99),
          rssMb: {
            api: rssMb(api.pid),
            "worker 1": workers[0] ? rssMb(workers[0].pid) : 0,
            "worker 2": workers[1] ? rssMb(workers[1].pid) : 0,
            redis: rssMb(redis.pid()),
            "soak (load + fakes)": process.memoryUsage.rss() / 1048576,
          },
          tables: lastTables,
        };
        samples.push(sample);
        acceptedInInterval = deliveredInInterval = refusedInInterval = 0;
        lateness = [];
        nextSample = t + options.sampleS;
        process.stdout.write(
          `[${sample.atS.toFixed(0)} s] accepted ${sample.acceptedPerS.toFixed(0)}/s delivered ${sample.deliveredPerS.toFixed(0)}/s lateness p50 ${sample.latenessP50.toFixed(0)} p99 ${sample.latenessP99.toFixed(0)} ms; jobs ${((lastTables.jobs?.total ?? 0) / 1048576).toFixed(0)} MB\n`,
        );
      }
      // Disruptions and retention run beside the loop (one of each at a time), so sampling never waits for them.
      if (t >= nextKill && !busy.has("kill")) {
        nextKill += options.killEveryS;
        const i = kills++ % 2;
        track("kill", async () => {
          workers[i]!.proc.kill("SIGKILL");
          await workers[i]!.stop();
          note("kill", `worker ${i + 1} SIGKILLed`);
          await sleep(3_000);
          workers[i] = await startWorker(i);
          note("restart", `worker ${i + 1} serving again`);
        });
      }
      if (!redisRestarted && t >= options.redisRestartAt * options.durationS) {
        redisRestarted = true;
        track("redis", async () => {
          await redis.stop();
          note("redis", "private redis-server killed (no persistence: every key gone)");
          await sleep(2_000);
          await redis.start();
          note("redis-up", "redis-server serving again");
        });
      }
      if (t >= nextRetention && !busy.has("retention")) {
        nextRetention += options.retentionEveryS;
        track("retention", async () => {
          const pass = await retentionPass(new Date(Date.now() - options.retentionAgeS * 1000));
          retentionPasses.push({ atS: now() / 1000, ...pass });
          note("retention", `${pass.deleted} jobs deleted in ${pass.seconds.toFixed(1)} s (${pass.settled} booked as settled first)`);
        });
      }
    }
    await Promise.all(busy.values());
    clearInterval(tick);
    note("load", `stopped after ${ledger.sent} jobs sent`);

    // Drain: wait for the answers, then for every accepted job to be final (or the drain time to pass).
    const drainBy = now() + options.drainS * 1000;
    while (inFlight > 0 && now() < drainBy) await sleep(200);
    for (;;) {
      drainFakes();
      const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status IN ('pending', 'processing')");
      const live = Number(rows[0]!.n);
      if (live === 0 || now() > drainBy) {
        note("drain", `${live} jobs not final`);
        break;
      }
      await sleep(1_000);
    }
    clearInterval(fakeTimer);
    drainFakes();
    lastTables = await tableSizes(env);

    const report = await account();
    writeFileSync(path.join(options.out, "report.json"), JSON.stringify(report, null, 1));
    writeReportPage(path.join(options.out, "report.html"), report);
    process.stdout.write(`\nreport: ${path.join(options.out, "report.html")}\n${JSON.stringify(report.summary, null, 1)}\n`);
    process.exitCode = report.summary.lost === 0 && report.summary.unexplainedDuplicates === 0 ? 0 : 1;
  } finally {
    await pool?.close().catch(() => {});
    for (const w of workers) await w?.stop();
    await api.stop();
    await Promise.all([webhook, sendgrid, sms, slack].map((f) => f.close()));
    await redis.stop();
    if (options.keepDb) await env.db.close().catch(() => {});
    else await env.close();
  }

  /** Books what the cut-off will take as settled, then deletes it as the leader's retention does. */
  async function retentionPass(before: Date): Promise<{ deleted: number; settled: number; seconds: number }> {
    const { rows } = await db.query<{ seq: number; status: string }>(
      `SELECT substring(payload::text from 'soak-([0-9]+)')::int AS seq, status FROM jobs
        WHERE finished_at < $1 AND status IN ('done', 'failed', 'cancelled')`,
      [before],
    );
    for (const r of rows) if (r.seq !== null) ledger.settle(r.seq, r.status);
    const started = performance.now();
    let deleted = 0;
    for (;;) {
      const n = await deleteFinishedJobs(db, { before, limit: 2_000 });
      deleted += n;
      if (n < 2_000) break;
    }
    return { deleted, settled: rows.length, seconds: (performance.now() - started) / 1000 };
  }

  /** The final books: every accepted job is final in Postgres or was settled before retention took it. */
  async function account(): Promise<SoakReport> {
    const { rows } = await db.query<{ seq: number; status: string }>("SELECT substring(payload::text from 'soak-([0-9]+)')::int AS seq, status FROM jobs");
    const inDb = new Uint8Array(ledger.sent);
    const statuses: Record<string, number> = {};
    for (const r of rows) {
      if (r.seq === null || r.seq >= ledger.sent) continue;
      inDb[r.seq] = r.status === "done" ? 1 : r.status === "failed" ? 2 : r.status === "cancelled" ? 3 : 4;
    }
    const disruptions = events.filter((e) => e.kind === "kill" || e.kind === "redis").map((e) => e.atS * 1000);
    // A duplicate is explained when its second delivery came within 2 minutes after a kill or Redis' restart
    // (the lock to lapse, 30 s by default, and the reconciler's grace, 30 s, plus a queue to work through).
    const explained = (at: number) => disruptions.some((d) => at >= d && at <= d + 120_000);
    let accepted = 0;
    let refused = 0;
    let settled = 0;
    let lost = 0;
    let notFinal = 0;
    let undelivered = 0;
    let duplicates = 0;
    let unexplainedDuplicates = 0;
    const lostExamples: number[] = [];
    for (let seq = 0; seq < ledger.sent; seq++) {
      const fate = ledger.fate[seq];
      if (fate === Fate.Refused || fate === Fate.Unsent) {
        refused++;
        continue;
      }
      accepted++;
      if (fate === Fate.Settled) settled++;
      const status = fate === Fate.Settled ? ledger.settledStatus[seq]! : inDb[seq]!;
      if (status === 0) {
        lost++;
        if (lostExamples.length < 20) lostExamples.push(seq);
      } else if (status === 4) notFinal++;
      if (status > 0)
        statuses[["", "done", "failed", "cancelled", "not final"][status]!] = (statuses[["", "done", "failed", "cancelled", "not final"][status]!] ?? 0) + 1;
      if (status === 1 && ledger.deliveries[seq] === 0) undelivered++;
      if (ledger.deliveries[seq]! > 1) {
        duplicates++;
        if (!explained(ledger.lastDelivery[seq]!)) unexplainedDuplicates++;
      }
    }
    return {
      startedAt: startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      options: { ...options, out: path.relative(repoRoot, options.out) },
      summary: {
        sent: ledger.sent,
        accepted,
        refused,
        settledBeforeRetention: settled,
        statuses,
        lost,
        lostExamples,
        notFinal,
        doneWithoutDelivery: undelivered,
        duplicates,
        unexplainedDuplicates,
        kills: events.filter((e) => e.kind === "kill").length,
        redisRestarts: events.filter((e) => e.kind === "redis").length,
        retentionPasses: retentionPasses.length,
        deletedByRetention: retentionPasses.reduce((a, p) => a + p.deleted, 0),
      },
      events,
      retentionPasses,
      samples,
      finalTables: lastTables,
    };
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
