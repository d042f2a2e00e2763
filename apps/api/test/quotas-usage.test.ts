// Quotas and usage through the API (docs/reference/tenants.md#usage-quotas-and-backpressure, issue 36): 429 quota_exceeded naming the quota with RateLimit headers and
// Retry-After at the next UTC period, batches all or nothing, each quota kind, per-organization settings through
// `npm run org:quota` (audited), schedule ticks skipped and recorded, GET /usage's roles, ranges, groupings and CSV,
// and the counters on /metrics. Another organization's usage and jobs stay untouched throughout.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { runDueSchedules, type QuotaLimits } from "@conveyor/db";
import { repoRoot } from "@conveyor/testkit";
import { addMember, createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { USAGE_METRICS_MS } from "../src/observability/metrics";
import { expectError } from "./support/expect-error";

const entry = path.join(repoRoot, "apps/api/src/cli/org-quota.ts");
const tsx = pathToFileURL(path.join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href;

let api: TestApi;
let other: SecondOrg;
let otherKey: string;

beforeAll(async () => {
  // A deployment default of 1,000 jobs a day; organizations get their own through the CLI.
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0", QUOTA_JOBS_PER_DAY: "1000", QUOTA_CACHE_MS: "0" });
  other = await createSecondOrg(api.database.db);
  await other.watch(api.get);
  otherKey = (await createApiKey(api.database.db, await createOrg(api.database.db, api.deps.config))).key;
}, 60_000);
afterEach(() => other.expectUntouched({ "X-API-Key": otherKey }));
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const job = (n = 0) => ({ type: "webhook", payload: { url: `https://hooks.example.com/${n}`, payload: { n } } });

function orgQuota(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=conveyor-source", "--import", tsx, entry, ...args],
      {
        cwd: mkdtempSync(path.join(os.tmpdir(), "conveyor-cli-")),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: os.tmpdir(), DATABASE_URL: api.database.url, QUOTA_JOBS_PER_DAY: "1000" },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Sets quotas with the CLI (the API keeps no cache of them here: QUOTA_CACHE_MS=0). */
async function setQuota(org: TestMember, args: string[]): Promise<string> {
  const result = await orgQuota([org.orgId, ...args]);
  expect(result).toMatchObject({ code: 0, stderr: "" });
  return result.stdout;
}

const count = async (org: TestMember) => Number((await api.database.db.pool.query("SELECT count(*) FROM jobs WHERE org_id = $1", [org.orgId])).rows[0].count);

describe("quotas on job creation", () => {
  it("refuses past jobs_per_day with 429 quota_exceeded naming it, RateLimit headers and Retry-After at the next UTC midnight; batches all or nothing", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const shown = await setQuota(owner, ["--jobs-per-day=10"]);
    expect(shown).toContain("jobs-per-day: 10 (this organization's)");
    expect(shown).toContain("jobs-per-month: unlimited (default)");

    expect(
      (
        await api.request
          .post("/jobs/batch")
          .set(as(owner))
          .send({ jobs: Array.from({ length: 8 }, (_, i) => job(i)) })
      ).status,
    ).toBe(202);
    const batch = await api.request
      .post("/jobs/batch")
      .set(as(owner))
      .send({ jobs: [job(8), job(9), job(10)] });
    expectError(batch, 429, "quota_exceeded");
    expect(batch.body.error.message).toMatch(/jobs_per_day \(10 jobs created per UTC day\)/);
    expect(batch.body.error.details).toEqual([{ path: "quota.jobs_per_day", message: expect.stringMatching(/^allows 10;/) }]);
    expect(await count(owner)).toBe(8);

    expect(
      (
        await api.request
          .post("/jobs/batch")
          .set(as(owner))
          .send({ jobs: [job(8), job(9)] })
      ).status,
    ).toBe(202);
    const refused = await api.request.post("/jobs").set(as(owner)).send(job(11));
    expectError(refused, 429, "quota_exceeded");
    const now = api.clock.now();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Number(refused.headers["retry-after"])).toBe(Math.ceil((midnight - now.getTime()) / 1000));
    expect(refused.headers["ratelimit-limit"]).toBe("10");
    expect(refused.headers["ratelimit-remaining"]).toBe("0");
    expect(refused.headers["ratelimit-reset"]).toBe(refused.headers["retry-after"]);
    expect(refused.headers["ratelimit-policy"]).toBe("10;w=86400");
    expect(await count(owner)).toBe(10);

    // The idempotent and debounced paths are held to it too.
    expectError(await api.request.post("/jobs").set(as(owner)).set("Idempotency-Key", "k1").send(job(12)), 429, "quota_exceeded");
    expectError(
      await api.request
        .post("/jobs")
        .set(as(owner))
        .send({ ...job(13), debounce_key: "d", debounce_ms: 1000 }),
      429,
      "quota_exceeded",
    );
    expect(await count(owner)).toBe(10);

    const metrics = (await api.request.get("/metrics")).text;
    expect(metrics).toMatch(/^conveyor_jobs_refused_total\{reason="quota_exceeded"\} [4-9]/m);
  });

  it("lets exactly the room left through when posts race in one process, and an unlimited organization (0) past the default", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    await setQuota(owner, ["--jobs-per-day=25"]);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => api.request.post("/jobs").set(as(owner)).send(job(i))));
    expect(answers.filter((r) => r.status === 202)).toHaveLength(25);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(35);
    expect(await count(owner)).toBe(25);

    // Back to the default (1,000), then unlimited for this organization.
    expect(await setQuota(owner, ["--jobs-per-day=default"])).toContain("jobs-per-day: 1000 (default)");
    expect((await api.request.post("/jobs").set(as(owner)).send(job(99))).status).toBe(202);
    expect(await setQuota(owner, ["--jobs-per-day=0"])).toContain("jobs-per-day: unlimited (this organization's)");
  });

  it("holds pending_max (freed as jobs leave pending), payload_bytes_max (freed by deletes) and jobs_per_month (Retry-After at the next month)", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    await setQuota(owner, ["--pending-max=3"]);
    for (let i = 0; i < 3; i++) expect((await api.request.post("/jobs").set(as(owner)).send(job(i))).status).toBe(202);
    const pending = await api.request.post("/jobs").set(as(owner)).send(job(3));
    expectError(pending, 429, "quota_exceeded");
    expect(pending.body.error.message).toContain("pending_max");
    // A job leaves pending through the job machine, whose statement counts it (docs/reference/lifecycle.md#storage-and-leases: no trigger on jobs does).
    const { rows: first } = await api.database.db.pool.query("SELECT id FROM jobs WHERE org_id = $1 LIMIT 1", [owner.orgId]);
    expect((await api.request.post(`/jobs/${first[0].id}/cancel`).set(as(owner))).status).toBe(200);
    expect((await api.request.post("/jobs").set(as(owner)).send(job(4))).status).toBe(202);

    // Payload bytes are counted as Postgres writes the stored payload as JSON text; these jobs' payloads are one size.
    const { rows } = await api.database.db.pool.query("SELECT octet_length(payload::text) AS n FROM jobs WHERE org_id = $1 LIMIT 1", [owner.orgId]);
    const bytes = Number(rows[0].n);
    await setQuota(owner, ["--pending-max=default", `--payload-bytes-max=${5 * bytes + Math.floor(bytes / 2)}`]);
    // Four jobs stored (one cancelled): one more fits, the next does not.
    expect((await api.request.post("/jobs").set(as(owner)).send(job(5))).status).toBe(202);
    const full = await api.request.post("/jobs").set(as(owner)).send(job(6));
    expectError(full, 429, "quota_exceeded");
    expect(full.body.error.message).toContain("payload_bytes_max");
    expect(Number(full.headers["retry-after"])).toBeGreaterThan(0);
    // Retention deletes a job: its payload no longer counts.
    await api.database.db.pool.query("DELETE FROM jobs WHERE id = (SELECT id FROM jobs WHERE org_id = $1 AND status = 'cancelled')", [owner.orgId]);
    expect((await api.request.post("/jobs").set(as(owner)).send(job(7))).status).toBe(202);

    await setQuota(owner, ["--payload-bytes-max=default", "--jobs-per-month=6"]);
    const month = await api.request.post("/jobs").set(as(owner)).send(job(8));
    expectError(month, 429, "quota_exceeded");
    const now = api.clock.now();
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(Number(month.headers["retry-after"])).toBe(Math.ceil((next - now.getTime()) / 1000));
  });

  it("shows the quotas in force and what is used of each on GET /quotas (owners and admins)", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    await setQuota(owner, ["--pending-max=5"]);
    for (let i = 0; i < 2; i++) expect((await api.request.post("/jobs").set(as(owner)).send(job(i))).status).toBe(202);
    const res = await api.request.get("/quotas").set(as(owner));
    expect(res.status).toBe(200);
    const now = api.clock.now();
    expect(res.body).toEqual({
      quotas: [
        {
          name: "jobs_per_day",
          limit: 1000,
          used: 2,
          resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
        },
        { name: "jobs_per_month", limit: null, used: 0, resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString() },
        { name: "pending_max", limit: 5, used: 2, resets_at: null },
        { name: "payload_bytes_max", limit: null, used: 0, resets_at: null },
      ],
    });
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    expectError(await api.request.get("/quotas").set(as(member)), 403, "forbidden");
  });

  it("is set only by the operator's CLI, which refuses bad values and records each change in the audit log", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const bad = await orgQuota([owner.orgId, "--jobs-per-day=lots"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--jobs-per-day must be a whole number (0 = unlimited) or "default", not "lots".');
    expect((await orgQuota(["not-an-id", "--jobs-per-day=5"])).code).toBe(1);
    expect((await orgQuota(["00000000-0000-7000-8000-000000000000", "--jobs-per-day=5"])).stderr).toContain("No organization has the id");
    await setQuota(owner, ["--jobs-per-day=5", "--pending-max=7"]);
    const audit = await api.request.get("/audit-log?action=org.quota_update").set(as(owner));
    expect(audit.status).toBe(200);
    expect(audit.body.items ?? audit.body).toEqual([
      expect.objectContaining({
        action: "org.quota_update",
        actor: expect.objectContaining({ type: "system" }),
        changes: { jobs_per_day: { before: null, after: 5 }, pending_max: { before: null, after: 7 } },
      }),
    ]);
    // No HTTP route sets quotas: GET /quotas reads them, every other method is refused and changes nothing.
    for (const method of ["put", "patch", "post", "delete"] as const) {
      expectError(await api.request[method]("/quotas").set(as(owner)).send({ jobs_per_day: 1e9 }), 405, "method_not_allowed");
    }
    expect((await api.request.get("/quotas").set(as(owner))).body.quotas[0]).toMatchObject({ name: "jobs_per_day", limit: 5 });
  });

  it("skips a schedule's tick that would pass a quota and records it, instead of failing the run", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    await setQuota(owner, ["--jobs-per-day=1"]);
    const created = await api.request
      .post("/schedules")
      .set(as(owner))
      .send({ name: "every minute", cron: "* * * * *", job: job(1) });
    expect(created.status).toBe(201);
    const defaults: QuotaLimits = { jobs_per_day: 1000, jobs_per_month: null, pending_max: null, payload_bytes_max: null };
    const tick = async () => {
      await api.database.db.pool.query("UPDATE schedules SET next_run_at = now() - interval '1 second', last_run_at = NULL WHERE id = $1", [created.body.id]);
      // The same minute again: its run record (which keeps a tick from running twice) goes too.
      await api.database.db.pool.query("DELETE FROM schedule_runs WHERE schedule_id = $1", [created.body.id]);
      return (await runDueSchedules(api.database.db.pool, 100, defaults)).ticks.find((t) => t.scheduleId === created.body.id)!;
    };
    expect((await tick()).jobId).toEqual(expect.any(String));
    const skipped = await tick();
    expect(skipped).toMatchObject({ jobId: null, skipped: "jobs_per_day" });
    expect(await count(owner)).toBe(1);
    const audit = await api.request.get("/audit-log?action=schedule.run_skipped").set(as(owner));
    expect(audit.body.items ?? audit.body).toEqual([
      expect.objectContaining({
        target: expect.objectContaining({ type: "schedule", id: created.body.id }),
        details: expect.objectContaining({ reason: "quota_exceeded", quota: "jobs_per_day" }),
      }),
    ]);
  });
});

describe("GET /usage", () => {
  it("answers the organization's usage by day and by type, as JSON and CSV, and nothing of another organization's", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const payloads = [job(1), job(22), { type: "send_email", payload: { to: "a@example.com", subject: "hi", body: "hello" } }];
    for (const p of payloads) expect((await api.request.post("/jobs").set(as(owner)).send(p)).status).toBe(202);
    const stored = await api.database.db.pool.query<{ type: string; bytes: string }>(
      "SELECT type, sum(octet_length(payload::text))::text AS bytes FROM jobs WHERE org_id = $1 GROUP BY type ORDER BY type",
      [owner.orgId],
    );
    const today = api.clock.now().toISOString().slice(0, 10);

    const byType = await api.request.get(`/usage?group_by=type&from=${today}&to=${today}`).set(as(owner));
    expect(byType.status).toBe(200);
    expect(byType.body).toEqual(
      stored.rows.map((r) => ({
        type: r.type,
        jobs_created: r.type === "webhook" ? 2 : 1,
        attempts_started: 0,
        attempt_seconds: 0,
        webhook_deliveries: 0,
        payload_bytes: Number(r.bytes),
      })),
    );
    const byDay = await api.request.get("/usage").set(as(owner));
    expect(byDay.body).toHaveLength(30);
    expect(byDay.body.at(-1)).toMatchObject({ day: today, jobs_created: 3 });
    expect(byDay.body.slice(0, -1).every((r: { jobs_created: number }) => r.jobs_created === 0)).toBe(true);

    const csv = await api.request.get(`/usage?group_by=type&from=${today}&to=${today}`).set(as(owner)).set("Accept", "text/csv");
    expect(csv.status).toBe(200);
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/);
    expect(csv.text.split("\r\n")).toEqual([
      "type,jobs_created,attempts_started,attempt_seconds,webhook_deliveries,payload_bytes",
      ...stored.rows.map((r) => `${r.type},${r.type === "webhook" ? 2 : 1},0,0,0,${r.bytes}`),
      "",
    ]);

    // Another organization sees only its own (nothing today).
    const stranger = await createOrg(api.database.db, api.deps.config);
    expect((await api.request.get(`/usage?group_by=type&from=${today}&to=${today}`).set(as(stranger))).body).toEqual([]);
  });

  it("is for owners and admins: members and API keys get 403", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const admin = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
    const member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    const { key } = await createApiKey(api.database.db, owner);
    expect((await api.request.get("/usage").set(as(admin))).status).toBe(200);
    expectError(await api.request.get("/usage").set(as(member)), 403, "forbidden");
    expectError(await api.request.get("/usage").set("X-API-Key", key), 403, "forbidden");
    expectError(await api.request.get("/usage"), 401, "unauthorized");
  });

  it.each([
    ["group_by=week", "query.group_by"],
    ["from=2026-13-01", "query.from"],
    ["from=2026-02-30&to=2026-03-01", "query.from"],
    ["to=yesterday", "query.to"],
    ["from=2026-05-02&to=2026-05-01", "query.from"],
    ["from=2025-01-01&to=2026-02-05", "query.from"],
  ])("refuses %s with 400 naming %s", async (query, field) => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const res = await api.request.get(`/usage?${query}`).set(as(owner));
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it("takes a range of exactly 400 days", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const res = await api.request.get("/usage?from=2025-01-01&to=2026-02-04").set(as(owner));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(400);
  });

  it("serves the deployment's usage counters by type on /metrics, without organizations", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    expect((await api.request.post("/jobs").set(as(owner)).send(job(1))).status).toBe(202);
    const { rows } = await api.database.db.pool.query("SELECT sum(jobs_created)::int AS n FROM usage_counts WHERE type = 'webhook'");
    const line = new RegExp(`^conveyor_usage_jobs_created_total\\{type="webhook"\\} ${rows[0].n}$`, "m");
    // /metrics reads the counters at most every USAGE_METRICS_MS: an earlier test's scrape may still be the answer.
    let text = (await api.request.get("/metrics")).text;
    for (const until = Date.now() + 2 * USAGE_METRICS_MS; !line.test(text) && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      text = (await api.request.get("/metrics")).text;
    }
    expect(text).toMatch(line);
    expect(text).toMatch(/^# TYPE conveyor_usage_attempt_seconds_total counter$/m);
    expect(text).not.toContain(owner.orgId);
  });
});
