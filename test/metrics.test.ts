// Metrics through real processes: a job created over the API and run by a worker process shows up in the
// API's /metrics (created) and on the worker's WORKER_METRICS_PORT (attempts, finished, durations, queues).
import { waitFor, metricSample as sample } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/testkit/stack";

let stack: Stack;
let workerMetrics: () => Promise<string>;
beforeAll(async () => {
  stack = await startStack();
  const worker = await stack.startWorker({ WORKER_TYPES: "scripted,chat_notify" });
  const port = Number((await worker.waitForOutput(/health on :(\d+)/))[1]);
  workerMetrics = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
});
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(() => stack.close());

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

describe("metrics across the API and a worker process", () => {
  it("counts a job created by the API and finished by the worker, by type and outcome", async () => {
    const ok = await stack.post("/jobs", { type: "scripted", payload: {} });
    const failing = await stack.post("/jobs", { type: "scripted", payload: { fail_until: 9 }, max_retries: 1 });
    expect([ok.status, failing.status]).toEqual([202, 202]);
    expect((await stack.waitForJob(ok.body.id, terminal)).status).toBe("done");
    expect((await stack.waitForJob(failing.body.id, terminal)).status).toBe("failed");

    const api = (await stack.api.request.get("/metrics")).text;
    expect(sample(api, "conveyor_jobs_created_total", { type: "scripted" })).toBe(2);
    expect(sample(api, "conveyor_http_request_duration_seconds_count", { method: "POST", route: "/jobs", status_code: "202" })).toBe(2);

    // The attempt's outcome is reported once the bookkeeper recorded it; poll rather than race it.
    const text = await waitFor(
      async () => {
        const current = await workerMetrics();
        return sample(current, "conveyor_jobs_finished_total", { type: "scripted", status: "failed" }) === 1 ? current : null;
      },
      "the failed job in the worker's metrics",
      10_000,
      100,
    );
    expect(sample(text, "conveyor_jobs_finished_total", { type: "scripted", status: "done" })).toBe(1);
    expect(sample(text, "conveyor_job_attempts_total", { type: "scripted", outcome: "done" })).toBe(1);
    expect(sample(text, "conveyor_job_attempts_total", { type: "scripted", outcome: "retry" })).toBe(1);
    expect(sample(text, "conveyor_job_attempts_total", { type: "scripted", outcome: "failed" })).toBe(1);
    expect(sample(text, "conveyor_job_attempt_duration_seconds_count", { type: "scripted" })).toBe(3);
  });

  it("reports queue depth for exactly the types the worker serves, read from Redis", async () => {
    const text = await workerMetrics();
    expect(sample(text, "conveyor_queue_stats_up")).toBe(1);
    for (const type of ["scripted", "chat_notify"]) {
      for (const state of ["waiting", "delayed", "active"]) expect(sample(text, "conveyor_queue_jobs", { type, state })).toBeGreaterThanOrEqual(0);
      expect(sample(text, "conveyor_queue_oldest_waiting_seconds", { type })).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, "conveyor_queue_jobs", { type: "send_email", state: "waiting" })).toBeUndefined();
    expect(sample(text, "conveyor_reconciler_reenqueued_total")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
  });
});
