// Metrics through real processes: a job created over the API and run by a worker process shows up in the
// API's /metrics (created) and on the worker's WORKER_METRICS_PORT (attempts, finished, durations), and the
// leading worker reports the deployment's backlog per type from Postgres (docs/reference/high-availability.md#scale-out-and-observability).
import { waitFor, metricSample as sample } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

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

  it("reports the backlog per type from Postgres: due, delayed, running, waiting on limits and the oldest due job's age", async () => {
    const owner = { Authorization: `Bearer ${stack.owner.token}` };
    const email = { to: "ada@example.com", subject: "Export ready", body: "Your export is ready." };
    // Running: a scripted job that sleeps. Delayed: one due in an hour. Due: send_email, which no worker serves.
    // Waiting on limits: chat_notify, served, in a queue the organization paused.
    const running = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 } });
    const later = await stack.post("/jobs", { type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await stack.api.request.patch("/queues/chat_notify").set(owner).send({ paused: true })).status).toBe(200);
    const created = [running, later];
    for (let i = 0; i < 2; i++) created.push(await stack.post("/jobs", { type: "send_email", payload: email }));
    created.push(await stack.post("/jobs", { type: "chat_notify", payload: { channel: "#ops", text: "hi" } }));
    expect(created.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    await stack.waitForJob(running.body.id, (job) => job.status === "processing");
    const chat = await stack.job(created[4]!.body.id);
    expect((chat as { waiting_for?: string }).waiting_for).toBe("queue_paused");

    const backlog = (text: string, type: string, state: string) => sample(text, "conveyor_queue_backlog", { type, state });
    const text = await waitFor(
      async () => {
        const current = await workerMetrics();
        return backlog(current, "send_email", "due") === 2 && backlog(current, "scripted", "running") === 1 ? current : null;
      },
      "the backlog in the leader's metrics",
      10_000,
      100,
    );
    expect(sample(text, "conveyor_worker_leader")).toBe(1);
    expect(sample(text, "conveyor_queue_backlog_up")).toBe(1);
    expect([backlog(text, "scripted", "due"), backlog(text, "scripted", "delayed"), backlog(text, "scripted", "waiting_on_limits")]).toEqual([0, 1, 0]);
    expect([backlog(text, "send_email", "delayed"), backlog(text, "send_email", "running"), backlog(text, "send_email", "waiting_on_limits")]).toEqual([
      0, 0, 0,
    ]);
    expect([backlog(text, "chat_notify", "due"), backlog(text, "chat_notify", "waiting_on_limits")]).toEqual([0, 1]);
    // Every type is reported, served here or not, with zeros where nothing waits.
    expect(backlog(text, "generate_pdf", "due")).toBe(0);
    expect(sample(text, "conveyor_queue_oldest_due_seconds", { type: "send_email" })).toBeGreaterThan(0);
    expect(sample(text, "conveyor_queue_oldest_due_seconds", { type: "chat_notify" })).toBe(0);
    expect(sample(text, "conveyor_worker_active_attempts")).toBe(1);
    expect(sample(text, "conveyor_reconciler_reenqueued_total")).toBe(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    // No organization, job or other id in any label.
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);

    for (const r of created) expect((await stack.post(`/jobs/${r.body.id}/cancel`, {})).status).toBe(200);
    expect((await stack.api.request.patch("/queues/chat_notify").set(owner).send({ paused: false })).status).toBe(200);
  });
});
