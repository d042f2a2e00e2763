// GET /metrics on the API: Prometheus text with request durations labelled by route pattern (never a raw URL
// or an id), jobs created by type, and process metrics; one registry per app.
import { metricSample as sample } from "@conveyor/testkit";
import supertest from "supertest";
import { createApp } from "../src/app";
import { createApiKey, createOrg, startTestApi, type TestApi } from "@conveyor/api/testing";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe("GET /metrics", () => {
  let api: TestApi;
  let key: string;
  beforeAll(async () => {
    api = await startTestApi();
    const owner = await createOrg(api.database.db, api.deps.config);
    key = (await createApiKey(api.database.db, owner)).key;
  });
  afterAll(() => api.close());

  const scrape = async (request = api.request) => {
    const res = await request.get("/metrics");
    expect(res.status).toBe(200);
    return res.text;
  };

  it("answers without a credential in Prometheus text format, with process metrics", async () => {
    const res = await api.request.get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toMatch(/^# HELP conveyor_http_request_duration_seconds /m);
    expect(sample(res.text, "process_cpu_user_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(res.text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it("labels request durations with the route pattern and status, never the URL's ids", async () => {
    const created = await api.request
      .post("/jobs")
      .set("X-API-Key", key)
      .send({ type: "chat_notify", payload: { channel: "#ops", text: "hi" } });
    expect(created.status).toBe(202);
    expect((await api.request.get(`/jobs/${created.body.id}`).set("X-API-Key", key)).status).toBe(200);
    expect((await api.request.get(`/jobs/${created.body.id}/logs`).set("X-API-Key", key)).status).toBe(200);
    expect((await api.request.get("/jobs/0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01").set("X-API-Key", key)).status).toBe(404);

    const text = await scrape();
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { method: "POST", route: "/jobs", status_code: "202" })).toBe(1);
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { method: "GET", route: "/jobs/:id", status_code: "200" })).toBe(1);
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { method: "GET", route: "/jobs/:id", status_code: "404" })).toBe(1);
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { method: "GET", route: "/jobs/:id/logs", status_code: "200" })).toBe(1);
    expect(sample(text, "conveyor_http_request_duration_seconds_bucket", { route: "/jobs", status_code: "202", le: "+Inf" })).toBe(1);
    expect(text).not.toMatch(UUID);
  });

  it("collapses every unknown route into one label", async () => {
    for (const path of ["/nope", "/nope/0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01", "/jobs/x/y/z", "/.env"]) {
      expect((await api.request.get(path)).status).toBe(404);
    }
    const text = await scrape();
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { method: "GET", route: "unmatched", status_code: "404" })).toBe(4);
    expect(text).not.toContain("/nope");
    expect(text).not.toContain(".env");
  });

  it("counts jobs created by type: batches per job, idempotent repeats not at all", async () => {
    const before = sample(await scrape(), "conveyor_jobs_created_total", { type: "send_email" }) ?? 0;
    const body = { type: "send_email", payload: { to: "ada@example.com", subject: "Hi", body: "Hello" } };
    const first = await api.request.post("/jobs").set("X-API-Key", key).set("Idempotency-Key", "metrics-1").send(body);
    const repeat = await api.request.post("/jobs").set("X-API-Key", key).set("Idempotency-Key", "metrics-1").send(body);
    expect([first.status, repeat.status]).toEqual([202, 200]);
    const batch = await api.request
      .post("/jobs/batch")
      .set("X-API-Key", key)
      .send({ jobs: [body, body, { type: "chat_notify", payload: { channel: "#a", text: "b" } }] });
    expect(batch.status).toBe(202);
    const invalid = await api.request.post("/jobs").set("X-API-Key", key).send({ type: "send_email", payload: {} });
    expect(invalid.status).toBe(400);

    const text = await scrape();
    expect(sample(text, "conveyor_jobs_created_total", { type: "send_email" })).toBe(before + 3);
    expect(sample(text, "conveyor_jobs_created_total", { type: "chat_notify" })).toBeGreaterThanOrEqual(2);
  });

  it("keeps one registry per app, so two apps in a process count apart", async () => {
    const other = supertest(createApp(api.deps));
    expect((await other.get("/healthz")).status).toBe(200);
    const text = await scrape(other);
    expect(sample(text, "conveyor_http_request_duration_seconds_count", { route: "/healthz", status_code: "200" })).toBe(1);
    expect(sample(text, "conveyor_jobs_created_total", { type: "send_email" })).toBeUndefined();
  });
});
