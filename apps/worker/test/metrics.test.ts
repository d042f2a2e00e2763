// The worker's /metrics: attempt outcomes and durations from the runtime's hooks, re-enqueues, and the
// deployment's backlog per type read from real Postgres when scraped — by the leader only; a scrape still answers
// when Postgres does not.
import http from "node:http";
import pg from "pg";
import { listQueues, newId, readBacklog } from "@conveyor/db";
import { createTestDatabase, metricSample as sample, type TestDatabase } from "@conveyor/testkit";
import { startHealthServer, type HealthServer } from "../src/process/health-server";
import { createWorkerMetrics, type WorkerMetrics } from "../src/process/metrics";

function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path }, (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, type: String(res.headers["content-type"]), body }));
      })
      .on("error", reject);
  });
}

describe("worker metrics", () => {
  let database: TestDatabase;
  let leader = true;
  let metrics: WorkerMetrics;
  let server: HealthServer;
  let active = 0;
  const scrape = async () => {
    const res = await get(server.port, "/metrics");
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    metrics = createWorkerMetrics();
    metrics.observe({ pool: database.db.pool, isLeader: () => leader, knownTypes: ["send_email", "webhook", "compress_image"], active: () => active });
    server = await startHealthServer(0, () => true, { "/metrics": metrics.serve });
  });
  afterAll(async () => {
    await server.close();
    await database.drop();
  });

  it("counts attempts by type and outcome, finished jobs by status, and times every attempt but skipped deliveries", async () => {
    const outcomes = ["done", "done", "retry", "failed", "released", "discarded", "skipped"] as const;
    for (const outcome of outcomes) metrics.onAttempt({ type: "webhook", outcome, durationMs: 1_500 });
    const text = await scrape();
    expect(sample(text, "conveyor_job_attempts_total", { type: "webhook", outcome: "done" })).toBe(2);
    for (const outcome of ["retry", "failed", "released", "discarded", "skipped"]) {
      expect(sample(text, "conveyor_job_attempts_total", { type: "webhook", outcome })).toBe(1);
    }
    expect(sample(text, "conveyor_jobs_finished_total", { type: "webhook", status: "done" })).toBe(2);
    expect(sample(text, "conveyor_jobs_finished_total", { type: "webhook", status: "failed" })).toBe(1);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_count", { type: "webhook" })).toBe(6);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_sum", { type: "webhook" })).toBeCloseTo(9);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_bucket", { type: "webhook", le: "1" })).toBe(0);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_bucket", { type: "webhook", le: "2.5" })).toBe(6);
  });

  it("counts the reconciler's re-enqueues", async () => {
    metrics.onReenqueued(3);
    metrics.onReenqueued(2);
    expect(sample(await scrape(), "conveyor_reconciler_reenqueued_total")).toBe(5);
  });

  describe("the backlog, from Postgres", () => {
    const orgs = { a: newId(), b: newId() };
    const pool = () => database.db.pool;
    /** A live job and its row in the dispatcher's queue. */
    async function queued(
      orgId: string,
      type: string,
      fields: { dueInS?: number; dispatched?: "pending" | "processing"; key?: string; keyLimit?: number; rateLimit?: string } = {},
    ): Promise<void> {
      const id = newId();
      await pool().query(
        `INSERT INTO jobs (id, org_id, type, status, payload, concurrency_key, concurrency_limit, rate_limit)
         VALUES ($1, $2, $3, $4::job_status, '{}', $5, $6, $7)`,
        [id, orgId, type, fields.dispatched ?? "pending", fields.key ?? null, fields.keyLimit ?? null, fields.rateLimit ?? null],
      );
      await pool().query(
        `INSERT INTO job_queue (job_id, type, org_id, priority, due_at, dispatched_at, concurrency_key, concurrency_limit, rate_limit)
         VALUES ($1, $3, $2, 5, now() + $4 * interval '1 second', CASE WHEN $5 THEN now() END, $6, $7, $8)`,
        [id, orgId, type, fields.dueInS ?? 0, fields.dispatched !== undefined, fields.key ?? null, fields.keyLimit ?? null, fields.rateLimit ?? null],
      );
    }

    beforeAll(async () => {
      for (const [name, id] of Object.entries(orgs)) await database.db.prisma.organization.create({ data: { id, name } });
      // send_email: org a has 3 due (one for a minute) and 2 due in an hour; org b paused its queue over 2 due jobs.
      await queued(orgs.a, "send_email", { dueInS: -60 });
      await queued(orgs.a, "send_email");
      await queued(orgs.a, "send_email");
      await queued(orgs.a, "send_email", { dueInS: 3_600 });
      await queued(orgs.a, "send_email", { dueInS: 3_600 });
      await queued(orgs.b, "send_email");
      await queued(orgs.b, "send_email");
      await pool().query("INSERT INTO queue_settings (org_id, type, paused) VALUES ($1, 'send_email', true)", [orgs.b]);
      // webhook: org a runs one job of key k (limit 1) and has one handed over; its second job of k waits for the key.
      await queued(orgs.a, "webhook", { dispatched: "processing", key: "k", keyLimit: 1 });
      await queued(orgs.a, "webhook", { dispatched: "pending" });
      await queued(orgs.a, "webhook", { key: "k", keyLimit: 1 });
      // Org b's job names a rate limit whose window is spent; its other job is free to go.
      await pool().query(`INSERT INTO rate_limits (org_id, name, "limit", period_ms, starts) VALUES ($1, 'slow', 1, 60000, ARRAY[now()])`, [orgs.b]);
      await queued(orgs.b, "webhook", { rateLimit: "slow" });
      await queued(orgs.b, "webhook", { dueInS: -5 });
      // generate_pdf: the whole type is paused after a provider's 429.
      await pool().query("INSERT INTO type_state (type, paused_until) VALUES ('generate_pdf', now() + interval '1 minute')");
      await queued(orgs.a, "generate_pdf");
    });

    it("reports due, delayed, running and waiting on limits per type, and the oldest due job's age, without organizations", async () => {
      active = 4;
      const text = await scrape();
      const backlog = (type: string, state: string) => sample(text, "conveyor_queue_backlog", { type, state });
      expect([
        backlog("send_email", "due"),
        backlog("send_email", "delayed"),
        backlog("send_email", "running"),
        backlog("send_email", "waiting_on_limits"),
      ]).toEqual([3, 2, 0, 2]);
      // The job handed over and not started is due (it waits for a worker slot), not running (issue 32).
      expect([backlog("webhook", "due"), backlog("webhook", "delayed"), backlog("webhook", "running"), backlog("webhook", "waiting_on_limits")]).toEqual([
        2, 0, 1, 2,
      ]);
      expect([backlog("generate_pdf", "due"), backlog("generate_pdf", "waiting_on_limits")]).toEqual([0, 1]);
      // A known type with nothing queued reads 0 (an autoscaler's "scale to the minimum"), not absent.
      for (const state of ["due", "delayed", "running", "waiting_on_limits"]) expect(backlog("compress_image", state)).toBe(0);
      const age = sample(text, "conveyor_queue_oldest_due_seconds", { type: "send_email" })!;
      expect(age).toBeGreaterThanOrEqual(59);
      expect(age).toBeLessThan(600);
      const webhookAge = sample(text, "conveyor_queue_oldest_due_seconds", { type: "webhook" })!;
      expect(webhookAge).toBeGreaterThanOrEqual(4);
      expect(webhookAge).toBeLessThan(age);
      // Held jobs are not the scheduling delay.
      expect(sample(text, "conveyor_queue_oldest_due_seconds", { type: "generate_pdf" })).toBe(0);
      expect(sample(text, "conveyor_queue_backlog_up")).toBe(1);
      expect(sample(text, "conveyor_worker_leader")).toBe(1);
      expect(sample(text, "conveyor_worker_active_attempts")).toBe(4);
      expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
      for (const id of Object.values(orgs)) expect(text).not.toContain(id);
    });

    it("agrees with what GET /queues shows each organization, summed", async () => {
      const types = ["send_email", "webhook", "generate_pdf"];
      const whole = new Map((await readBacklog(pool(), types)).map((row) => [row.type, row]));
      const perOrg = [...(await listQueues(pool(), orgs.a, types)), ...(await listQueues(pool(), orgs.b, types))];
      for (const type of types) {
        const rows = perOrg.filter((row) => row.type === type);
        for (const state of ["due", "delayed", "running", "waiting_on_limits"] as const) {
          expect([type, state, whole.get(type)![state]]).toEqual([type, state, rows.reduce((sum, row) => sum + row[state], 0)]);
        }
      }
    });

    it("reports no backlog on a replica that does not lead", async () => {
      leader = false;
      try {
        const text = await scrape();
        expect(sample(text, "conveyor_worker_leader")).toBe(0);
        expect(sample(text, "conveyor_queue_backlog", { type: "send_email", state: "due" })).toBeUndefined();
        expect(sample(text, "conveyor_queue_oldest_due_seconds", { type: "send_email" })).toBeUndefined();
        expect(sample(text, "conveyor_queue_backlog_up")).toBe(0);
      } finally {
        leader = true;
      }
      expect(sample(await scrape(), "conveyor_queue_backlog", { type: "send_email", state: "due" })).toBe(3);
    });
  });

  it("still answers when Postgres does not, without backlog gauges and with conveyor_queue_backlog_up 0", async () => {
    // A port nothing listens on: every connection is refused.
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const unreachable = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${closed}/conveyor`, connectionTimeoutMillis: 1_000 });
    const own = createWorkerMetrics();
    own.observe({ pool: unreachable, isLeader: () => true, knownTypes: ["send_email"], active: () => 0 });
    try {
      const text = await own.registry.metrics();
      expect(sample(text, "conveyor_queue_backlog_up")).toBe(0);
      expect(sample(text, "conveyor_worker_leader")).toBe(1);
      expect(sample(text, "conveyor_queue_backlog", { type: "send_email", state: "due" })).toBeUndefined();
      expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    } finally {
      await unreachable.end();
    }
  });

  it("serves /healthz and /metrics on the same port, and nothing else", async () => {
    expect((await get(server.port, "/healthz")).status).toBe(200);
    expect((await get(server.port, "/nope")).status).toBe(404);
  });
});
