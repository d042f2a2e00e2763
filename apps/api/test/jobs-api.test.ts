// The job endpoints of the API alone (no worker): docs/reference/http.md#errors and docs/reference/lifecycle.md#lifecycle field by field, against real Postgres/Redis.
import { Redis } from "ioredis";
import { JOB_DETAIL_FIELDS, JOB_ITEM_FIELDS } from "@conveyor/contracts";
import { createDatabase, isUuid } from "@conveyor/db";
import { freePort } from "@conveyor/testkit";
import supertest from "supertest";
import { createApp } from "../src/app";
import { addMember, createApiKey, createOrg, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
let alice: TestMember; // owner of org A
let bob: TestMember; // owner of org B, whose data must never show through
let aliceKey: string;

beforeAll(async () => {
  api = await startTestApi();
  alice = await createOrg(api.database.db, api.deps.config);
  bob = await createOrg(api.database.db, api.deps.config);
  aliceKey = (await createApiKey(api.database.db, alice)).key;
});
afterAll(() => api.close());

const asAlice = () => ({ Authorization: `Bearer ${alice.token}` });
const asBob = () => ({ Authorization: `Bearer ${bob.token}` });
const webhook = (n = 1) => ({ type: "webhook", payload: { url: `https://example.com/hook/${n}`, payload: { n } } });

async function create(body: object, headers: Record<string, string> = asAlice()) {
  return api.request.post("/jobs").set(headers).send(body);
}

describe("POST /jobs", () => {
  it("answers 202 {id, status: pending}, stores the job and puts it in the dispatcher's queue (not in Redis: the dispatcher hands it over)", async () => {
    const res = await create({ ...webhook(), max_retries: 2 });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.any(String), status: "pending" });
    expect(isUuid(res.body.id)).toBe(true);

    const row = await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row).toMatchObject({ orgId: alice.orgId, type: "webhook", status: "pending", retries: 0, maxRetries: 2 });

    const queued = await api.database.db.pool.query("SELECT type, org_id, priority, dispatched_at FROM job_queue WHERE job_id = $1", [res.body.id]);
    expect(queued.rows).toEqual([{ type: "webhook", org_id: alice.orgId, priority: 5, dispatched_at: null }]);
    const redis = new Redis(api.deps.config.REDIS_URL);
    try {
      expect(await redis.exists(`${api.deps.config.REDIS_PREFIX}:webhook:${res.body.id}`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it("accepts an API key as well as a JWT", async () => {
    const res = await create(webhook(), { "X-API-Key": aliceKey });
    expect(res.status).toBe(202);
  });

  it("defaults max_retries to 0 and payload fields to their documented defaults", async () => {
    const res = await create({ type: "compress_image", payload: { url: "https://example.com/a.png", width: 300 } });
    expect(res.status).toBe(202);
    const job = await api.request.get(`/jobs/${res.body.id}`).set(asAlice());
    expect(job.body).toMatchObject({ max_retries: 0, payload: { url: "https://example.com/a.png", width: 300, quality: 80 } });
  });

  it.each([
    [{}, ["type", "payload"]],
    [{ type: "webhook" }, ["payload"]],
    [{ type: "webhook", payload: [] }, ["payload"]],
    [{ type: "webhook", payload: "x" }, ["payload"]],
    [{ ...webhook(), max_retries: 26 }, ["max_retries"]],
    [{ ...webhook(), max_retries: -1 }, ["max_retries"]],
    [{ ...webhook(), max_retries: 1.5 }, ["max_retries"]],
    [{ ...webhook(), max_retries: "3" }, ["max_retries"]],
    [{ ...webhook(), status: "done" }, ["status"]],
    [{ ...webhook(), retries: 3, org_id: "x" }, ["retries", "org_id"]],
    [{ type: "Not A Type", payload: {} }, ["type"]],
  ])("refuses %j with 400 validation_failed naming %j", async (body, paths) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([...paths].sort());
  });

  it("refuses a body that is not an object", async () => {
    const res = await api.request.post("/jobs").set(asAlice()).set("Content-Type", "application/json").send("[1,2]");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
  });

  it("validates the payload against the type's schema and names each bad path under payload.", async () => {
    const res = await create({ type: "send_sms", payload: { to: "0712345678", message: "", extra: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: "payload.to", message: expect.stringContaining("E.164") },
        { path: "payload.message", message: "is not allowed to be empty" },
        { path: "payload.extra", message: "is not allowed" },
      ]),
    );
    expect(await api.database.db.prisma.job.count({ where: { orgId: alice.orgId, type: "send_sms" } })).toBe(0);
  });

  it("refuses an unknown type with 400 unknown_job_type listing the known types", async () => {
    const res = await create({ type: "send_fax", payload: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("unknown_job_type");
    expect(res.body.error.message).toMatch(/send_fax.*send_email.*webhook.*chat_notify/);
  });

  it("accepts a plugin type as soon as a worker has registered it", async () => {
    expect((await create({ type: "resize_video", payload: {} })).status).toBe(400);
    await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('resize_video')");
    const res = await create({ type: "resize_video", payload: { anything: ["goes", 1] } });
    expect(res.status).toBe(202);
  });

  it("refuses webhook URLs that point at internal addresses, at enqueue", async () => {
    for (const url of [
      "http://example.com/x",
      "https://127.0.0.1/x",
      "https://[::1]/",
      "https://169.254.169.254/latest",
      "https://user:pw@example.com/",
      "file:///etc/passwd",
      "https://metadata.google.internal/",
    ]) {
      const res = await create({ type: "webhook", payload: { url, payload: {} } });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe("payload.url");
    }
  });

  it("refuses an unauthenticated request with 401 and WWW-Authenticate", async () => {
    const res = await api.request.post("/jobs").send(webhook());
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
  });

  it("refuses a malformed or unknown API key with 401", async () => {
    for (const key of ["nope", "cvk_" + "a".repeat(43)]) {
      const res = await create(webhook(), { "X-API-Key": key });
      expect(res.status).toBe(401);
    }
  });
});

describe("Idempotency-Key", () => {
  const key = () => `order-${Math.random().toString(36).slice(2)}`;

  it("returns the first job with 200 for a repeat within 24 h, and creates nothing", async () => {
    const k = key();
    const first = await create(webhook(7), { ...asAlice(), "Idempotency-Key": k });
    expect(first.status).toBe(202);
    const again = await create(webhook(7), { ...asAlice(), "Idempotency-Key": k });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, status: "pending" });
    expect(await api.database.db.prisma.job.count({ where: { orgId: alice.orgId, payload: { path: ["payload", "n"], equals: 7 } } })).toBe(1);
  });

  it("treats the same request with defaults spelled out as the same request", async () => {
    const k = key();
    const first = await create({ type: "compress_image", payload: { url: "https://example.com/i.png", width: 10 } }, { ...asAlice(), "Idempotency-Key": k });
    const again = await create(
      { type: "compress_image", payload: { width: 10, url: "https://example.com/i.png", quality: 80 }, max_retries: 0 },
      { ...asAlice(), "Idempotency-Key": k },
    );
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
  });

  it("answers 409 idempotency_conflict for the same key with a different body", async () => {
    const k = key();
    await create(webhook(1), { ...asAlice(), "Idempotency-Key": k });
    const res = await create(webhook(2), { ...asAlice(), "Idempotency-Key": k });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("idempotency_conflict");
  });

  it("scopes keys to the organization", async () => {
    const k = key();
    const a = await create(webhook(), { ...asAlice(), "Idempotency-Key": k });
    const b = await create(webhook(), { ...asBob(), "Idempotency-Key": k });
    expect(b.status).toBe(202);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it("creates a new job once the key is older than 24 h", async () => {
    const k = key();
    // An API key: a JWT would have expired a day later.
    const first = await create(webhook(3), { "X-API-Key": aliceKey, "Idempotency-Key": k });
    api.clock.advance(24 * 60 * 60 * 1000 + 1000);
    try {
      const later = await create(webhook(3), { "X-API-Key": aliceKey, "Idempotency-Key": k });
      expect(later.status).toBe(202);
      expect(later.body.id).not.toBe(first.body.id);
    } finally {
      api.clock.advance(-(24 * 60 * 60 * 1000 + 1000));
    }
  });

  it("creates exactly one job for 10 concurrent requests with the same key", async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 10 }, () => create(webhook(99), { ...asAlice(), "Idempotency-Key": k })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(9);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  });

  it("refuses a key longer than 255 characters", async () => {
    const res = await create(webhook(), { ...asAlice(), "Idempotency-Key": "k".repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("headers.idempotency-key");
  });
});

describe("POST /jobs/batch", () => {
  it("creates 1..1000 jobs and answers 202 with their ids in order", async () => {
    const res = await api.request
      .post("/jobs/batch")
      .set(asAlice())
      .send({ jobs: [webhook(1), { ...webhook(2), max_retries: 4 }] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual([
      { id: expect.any(String), status: "pending" },
      { id: expect.any(String), status: "pending" },
    ]);
    const second = await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: res.body[1].id } });
    expect(second.maxRetries).toBe(4);
  });

  it("stores nothing when one job is invalid, and names it by index", async () => {
    const before = await api.database.db.prisma.job.count();
    const res = await api.request
      .post("/jobs/batch")
      .set(asAlice())
      .send({ jobs: [webhook(1), webhook(2), { type: "send_sms", payload: { to: "+254700000000" } }] });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: "jobs.2.payload.message", message: "is required" }]);
    expect(await api.database.db.prisma.job.count()).toBe(before);
  });

  it("refuses an empty batch, more than 1000 jobs, and unknown types", async () => {
    expect((await api.request.post("/jobs/batch").set(asAlice()).send({ jobs: [] })).status).toBe(400);
    expect(
      (
        await api.request
          .post("/jobs/batch")
          .set(asAlice())
          .send({ jobs: Array.from({ length: 1001 }, () => webhook()) })
      ).status,
    ).toBe(400);
    const unknown = await api.request
      .post("/jobs/batch")
      .set(asAlice())
      .send({ jobs: [webhook(), { type: "nope_type", payload: {} }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("unknown_job_type");
    expect(unknown.body.error.details).toEqual([{ path: "jobs.1.type", message: "is not a known job type" }]);
  });

  it("accepts exactly 1000 jobs", async () => {
    const res = await api.request
      .post("/jobs/batch")
      .set(asAlice())
      .send({ jobs: Array.from({ length: 1000 }, (_, i) => webhook(i)) });
    expect(res.status).toBe(202);
    expect(new Set(res.body.map((j: { id: string }) => j.id)).size).toBe(1000);
  });

  it("refuses an Idempotency-Key (supported on POST /jobs only)", async () => {
    const res = await api.request
      .post("/jobs/batch")
      .set(asAlice())
      .set("Idempotency-Key", "b1")
      .send({ jobs: [webhook()] });
    expect(res.status).toBe(400);
  });
});

describe("GET /jobs", () => {
  let org: TestMember;
  let ids: string[];
  beforeAll(async () => {
    org = await createOrg(api.database.db, api.deps.config);
    const res = await api.request
      .post("/jobs/batch")
      .set({ Authorization: `Bearer ${org.token}` })
      .send({ jobs: Array.from({ length: 7 }, (_, i) => webhook(i)) });
    ids = res.body.map((j: { id: string }) => j.id);
    await api.database.db.pool.query("UPDATE jobs SET status = 'done' WHERE id = ANY($1)", [[ids[1], ids[4]]]);
  });
  const as = () => ({ Authorization: `Bearer ${org.token}` });

  it("lists every job of the org, newest first, with exactly the list fields", async () => {
    const res = await api.request.get("/jobs").set(as());
    expect(res.status).toBe(200);
    expect(res.body.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    expect(Object.keys(res.body[0])).toEqual(JOB_ITEM_FIELDS);
    expect(res.body[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("filters by status", async () => {
    const res = await api.request.get("/jobs?status=done").set(as());
    expect(res.body.map((j: { id: string }) => j.id)).toEqual([ids[4], ids[1]]);
    expect((await api.request.get("/jobs?status=failed").set(as())).body).toEqual([]);
  });

  it("refuses status=completed and other values, naming the allowed ones", async () => {
    for (const status of ["completed", "DONE", ""]) {
      const res = await api.request.get(`/jobs?status=${status}`).set(as());
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      if (status) expect(res.body.error.message).toContain("pending, processing, done, failed");
    }
  });

  it("pages with limit and a Link rel=next cursor until the last page", async () => {
    const seen: string[] = [];
    let url: string | null = "/jobs?limit=3";
    let pages = 0;
    while (url) {
      const res: supertest.Response = await api.request.get(url).set(as());
      expect(res.status).toBe(200);
      seen.push(...res.body.map((j: { id: string }) => j.id));
      pages++;
      const link = res.headers.link as string | undefined;
      const next = link ? new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!) : null;
      url = next ? next.pathname + next.search : null;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it("keeps the status filter across pages", async () => {
    const first = await api.request.get("/jobs?status=pending&limit=4").set(as());
    expect(first.body).toHaveLength(4);
    expect(first.headers.link).toContain("status=pending");
    const next = new URL(/<([^>]+)>/.exec(String(first.headers.link))![1]!);
    const second = await api.request.get(next.pathname + next.search).set(as());
    expect(second.body).toHaveLength(1);
    expect(second.headers.link).toBeUndefined();
  });

  it("refuses a bad limit, a forged cursor and unknown parameters", async () => {
    for (const query of ["limit=0", "limit=1001", "limit=abc", "limit=2&cursor=bm90LWEtdXVpZA", "cursor=abc", "statuss=done", "status=done&status=failed"]) {
      const res = await api.request.get(`/jobs?${query}`).set(as());
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
  });

  it("never shows another org's jobs", async () => {
    const res = await api.request.get("/jobs").set(asBob());
    expect(res.body.some((j: { id: string }) => ids.includes(j.id))).toBe(false);
  });
});

describe("GET /jobs/{id}, /logs and /artifact", () => {
  let id: string;
  beforeAll(async () => {
    id = (await create({ ...webhook(5), max_retries: 1 })).body.id;
    await api.database.db.pool.query(
      `INSERT INTO job_logs (job_id, attempt, level, message, timestamp) VALUES
         ($1, 1, 'info', 'Attempt 1 of 2 started', now()), ($1, 1, 'warn', 'Attempt 1 failed: boom', now()), ($1, 2, 'info', 'second', now())`,
      [id],
    );
    await api.database.db.pool.query(
      "INSERT INTO job_artifacts (job_id, content_type, filename, size, data) VALUES ($1, 'application/pdf', 'invoice 1.pdf', 4, '\\x25504446')",
      [id],
    );
  });

  it("returns the job with payload, result and error", async () => {
    const res = await api.request.get(`/jobs/${id}`).set(asAlice());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      type: "webhook",
      status: "pending",
      payload: { url: "https://example.com/hook/5", payload: { n: 5 } },
      retries: 0,
      max_retries: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      run_at: null,
      priority: 5,
      replay_of: null,
      schedule_id: null,
      cancel_requested_at: null,
      concurrency_key: null,
      concurrency_limit: null,
      rate_limit: null,
      timeout_ms: null,
      dedupe_key: null,
      debounce_key: null,
      // No worker serves this API-only test's jobs.
      waiting_for: "no_worker",
      started_at: null,
      finished_at: null,
      progress: null,
      depends_on: [],
      dependents: [],
      on_dependency_failure: "cancel",
      replayed_as: [],
      steps: [],
      result: null,
      error: null,
    });
    expect(Object.keys(res.body)).toEqual(JOB_DETAIL_FIELDS);
  });

  it("returns the log lines in write order", async () => {
    const res = await api.request.get(`/jobs/${id}/logs`).set({ "X-API-Key": aliceKey });
    expect(res.status).toBe(200);
    expect(res.body.map((l: { attempt: number; level: string; message: string }) => [l.attempt, l.level, l.message])).toEqual([
      [1, "info", "Attempt 1 of 2 started"],
      [1, "warn", "Attempt 1 failed: boom"],
      [2, "info", "second"],
    ]);
    expect(Object.keys(res.body[0])).toEqual(["attempt", "message", "level", "timestamp"]);
  });

  it("returns [] for a job without logs", async () => {
    const other = (await create(webhook())).body.id;
    expect((await api.request.get(`/jobs/${other}/logs`).set(asAlice())).body).toEqual([]);
  });

  it("serves the artifact with its content type as a download", async () => {
    const res = await api.request
      .get(`/jobs/${id}/artifact`)
      .set(asAlice())
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on("data", (c: Buffer) => chunks.push(c)).on("end", () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/pdf");
    expect(res.headers["content-disposition"]).toBe('attachment; filename="invoice_1.pdf"');
    expect((res.body as Buffer).toString("latin1")).toBe("%PDF");
  });

  it("answers 404 for a job without an artifact", async () => {
    const other = (await create(webhook())).body.id;
    const res = await api.request.get(`/jobs/${other}/artifact`).set(asAlice());
    expect(res.status).toBe(404);
  });

  it.each(["", "/logs", "/artifact"])("answers another org's job%s exactly like a random id", async (suffix) => {
    const foreign = await api.request.get(`/jobs/${id}${suffix}`).set(asBob());
    const random = await api.request.get(`/jobs/01a1f000-0000-7000-8000-000000000000${suffix}`).set(asBob());
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(random.body);
    expect(foreign.body.error.code).toBe("not_found");
  });

  it("answers a malformed id with 404", async () => {
    for (const bad of ["123", "not-a-uuid", "..%2F..%2Fetc"]) {
      expect((await api.request.get(`/jobs/${bad}`).set(asAlice())).status).toBe(404);
    }
  });

  it("lets every role of the org read and create jobs", async () => {
    for (const role of ["admin", "member"] as const) {
      const m = await addMember(api.database.db, api.deps.config, alice.orgId, role);
      const headers = { Authorization: `Bearer ${m.token}` };
      expect((await api.request.get(`/jobs/${id}`).set(headers)).status).toBe(200);
      expect((await create(webhook(), headers)).status).toBe(202);
    }
  });
});

describe("when Postgres fails", () => {
  it("answers 503 unavailable while Postgres is unreachable", async () => {
    const dead = createDatabase({ url: `postgresql://postgres@127.0.0.1:${await freePort()}/conveyor` });
    try {
      const app = createApp({ ...api.deps, db: dead });
      const post = await supertest(app).post("/jobs").set(asAlice()).send(webhook());
      expect(post.status).toBe(503);
      expect(post.body.error.code).toBe("unavailable");
      expect(post.headers["retry-after"]).toBeDefined();
      const get = await supertest(app).get("/jobs").set({ "X-API-Key": aliceKey });
      expect(get.status).toBe(503);
    } finally {
      await dead.close();
    }
  });

  it("answers 500 internal_error without SQL, table names or stack for an unexpected database error", async () => {
    const id = (await create(webhook())).body.id;
    await api.database.db.pool.query("ALTER TABLE job_logs RENAME TO job_logs_renamed");
    try {
      const res = await api.request.get(`/jobs/${id}/logs`).set(asAlice());
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe("internal_error");
      const text = JSON.stringify(res.body);
      for (const leak of ["job_logs", "relation", "SELECT", "at ", "postgres"]) expect(text).not.toContain(leak);
    } finally {
      await api.database.db.pool.query("ALTER TABLE job_logs_renamed RENAME TO job_logs");
    }
  });
});

describe("per-organization rate limit on the job endpoints", () => {
  let limited: TestApi;
  beforeAll(async () => {
    limited = await startTestApi({ API_RATE_LIMIT_PER_SEC: "3" });
  });
  afterAll(() => limited.close());

  it("answers 429 rate_limited with Retry-After past API_RATE_LIMIT_PER_SEC, per organization", async () => {
    const a = await createOrg(limited.database.db, limited.deps.config);
    const b = await createOrg(limited.database.db, limited.deps.config);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await limited.request.get("/jobs?limit=1").set({ Authorization: `Bearer ${a.token}` })).status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    const refused = await limited.request.get("/jobs?limit=1").set({ Authorization: `Bearer ${a.token}` });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused.headers["ratelimit-limit"]).toBe("3");
    // Another organization has its own budget.
    expect((await limited.request.get("/jobs?limit=1").set({ Authorization: `Bearer ${b.token}` })).status).toBe(200);
  });
});
