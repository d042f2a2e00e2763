// The Retries view's endpoints (issue 38) against real Postgres, Redis and a real worker: GET /jobs/retries lists a
// job that failed an attempt and waits to retry, with its error and next attempt; POST /jobs/{id}/run-now makes it
// (or a delayed job) due at once — it runs, its logs and the audit log say who asked — and refuses a job that is not
// due later (409), another organization's job (404, never 403) and bad input (400); the second organization stays
// untouched.
import { startStack, type Stack } from "@conveyor/api/testing/stack";
import { createOrg } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let stack: Stack;
beforeAll(async () => {
  // A failed attempt waits ten minutes before the next: it stays "waiting to retry" until run now.
  stack = await startStack({ workerEnv: { RETRY_BASE_MS: "600000" } });
  await stack.registerPluginTypes();
  await stack.startWorker();
}, 120_000);
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(() => stack?.close());

const auth = () => ({ Authorization: `Bearer ${stack.owner.token}` });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe("GET /jobs/retries and POST /jobs/{id}/run-now", () => {
  it("lists a job waiting to retry, and runs it now when asked", async () => {
    const posted = await stack.post("/jobs", { type: "scripted", payload: { fail_until: 1 }, max_retries: 3 });
    expect(posted.status).toBe(202);
    const id = posted.body.id as string;
    await stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);

    const listed = await stack.api.request.get("/jobs/retries").set(auth());
    expect(listed.status).toBe(200);
    expect(responseSchemas.RetryingJobs.validate(listed.body).error).toBeUndefined();
    const item = (listed.body.items as { id: string; error: string; next_attempt_at: string; waiting_for: string }[]).find((j) => j.id === id)!;
    expect(item.error).toMatch(/^scripted failure on attempt 1/);
    expect(Date.parse(item.next_attempt_at)).toBeGreaterThan(Date.now() + 60_000);

    const ran = await stack.api.request.post(`/jobs/${id}/run-now`).set(auth());
    expect(ran.status).toBe(200);
    await stack.waitForJob(id, (job) => job.status === "done", 30_000);
    const after = await stack.api.request.get("/jobs/retries").set(auth());
    expect((after.body.items as { id: string }[]).map((j) => j.id)).not.toContain(id);
    const logs = await stack.api.request.get(`/jobs/${id}/logs`).set(auth());
    expect((logs.body as { message: string }[]).map((l) => l.message).join("\n")).toMatch(/Retried now by /);
    const audit = await stack.api.request.get("/audit-log").query({ action: "job.run_now" }).set(auth());
    expect((audit.body as { target: { id: string } }[]).map((e) => e.target.id)).toContain(id);

    // Done: nothing is due later.
    const again = await stack.api.request.post(`/jobs/${id}/run-now`).set(auth());
    expect([again.status, again.body.error.code]).toEqual([409, "job_not_delayed"]);
  });

  it("runs a delayed job now, and refuses another organization's job, an id that is not one, and a bad limit", async () => {
    const posted = await stack.post("/jobs", { type: "scripted", payload: {}, run_at: inAnHour() });
    const id = posted.body.id as string;
    const other = await createOrg(stack.api.database.db, stack.api.deps.config);
    const theirs = await stack.api.request.post(`/jobs/${id}/run-now`).set({ Authorization: `Bearer ${other.token}` });
    expect([theirs.status, theirs.body.error.code]).toEqual([404, "not_found"]);
    expect((await stack.api.request.post("/jobs/not-a-job/run-now").set(auth())).status).toBe(404);
    const bad = await stack.api.request.get("/jobs/retries").query({ limit: 0 }).set(auth());
    expect([bad.status, bad.body.error.code]).toEqual([400, "validation_failed"]);

    const ran = await stack.api.request.post(`/jobs/${id}/run-now`).set(auth());
    expect(ran.status).toBe(200);
    expect(Date.parse(ran.body.run_at as string)).toBeLessThanOrEqual(Date.now() + 1000);
    await stack.waitForJob(id, (job) => job.status === "done", 30_000);
  });

  it("lists a failure group whose jobs are all still retrying in GET /jobs/failures (count 0, retrying 1)", async () => {
    const posted = await stack.post("/jobs", { type: "scripted", payload: { fail_until: 2 }, max_retries: 3 });
    const id = posted.body.id as string;
    await stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);
    const res = await stack.api.request.get("/jobs/failures").set(auth());
    expect(res.status).toBe(200);
    expect(responseSchemas.FailureGroups.validate(res.body).error).toBeUndefined();
    const group = (res.body.groups as { sample_job_id: string; count: number; retrying: number; sample_error: string }[]).find((g) => g.sample_job_id === id);
    expect(group).toMatchObject({ count: 0, retrying: 1, sample_error: expect.stringMatching(/^scripted failure on attempt 1/) as unknown });
    await stack.api.request.post(`/jobs/${id}/cancel`).set(auth()).expect(200);
  });
});
