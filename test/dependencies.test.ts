// Dependencies end to end (docs/reference/lifecycle.md#dependencies, docs/reference/robustness.md#r42, docs/reference/robustness.md#r43): the real API, Postgres, Redis and worker processes. A job
// graph is one batch; a dependent starts only after every dependency succeeded — read from the event log, whose ids
// grow in the order the transactions began — and a failure or a cancellation cancels the waiting jobs below it.
import { startSendGridFake, startWebhookReceiver, type FakeServer, type SendGridFake } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(240_000);

const local = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };
const FINAL = ["done", "failed", "cancelled"];

let stack: Stack;
let sendgrid: SendGridFake;
let receiver: FakeServer;

beforeAll(async () => {
  sendgrid = await startSendGridFake();
  receiver = await startWebhookReceiver();
  stack = await startStack({
    apiEnv: local,
    workerEnv: {
      ...local,
      WORKER_CONCURRENCY: "20",
      EMAIL_PROVIDER: "sendgrid",
      EMAIL_PROVIDER_API_KEY: sendgrid.apiKey,
      EMAIL_PROVIDER_BASE_URL: sendgrid.url,
      EMAIL_FROM: "Billing <billing@conveyor.test>",
    },
  });
  await stack.startWorker();
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await sendgrid?.close();
  await receiver?.close();
});

type Accepted = { id: string; status: string; ref?: string };

async function batch(jobs: object[]): Promise<Accepted[]> {
  const res = await stack.post("/jobs/batch", { jobs });
  if (res.status !== 202) throw new Error(`POST /jobs/batch: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Accepted[];
}

const get = async (path: string) => {
  const res = await stack.api.request.get(path).set("X-API-Key", stack.apiKey);
  return { status: res.status, body: res.body };
};
const final = (id: string, timeoutMs = 60_000) => stack.waitForJob(id, (job) => FINAL.includes(job.status), timeoutMs);
const scripted = (payload: object = {}, extra: object = {}) => ({ type: "scripted", payload, ...extra });

/** The id of each job's event of `type` (the first one), from the event log. */
async function eventIds(ids: string[], type: string): Promise<Map<string, bigint>> {
  const { rows } = await stack.api.database.db.pool.query<{ job_id: string; id: string }>(
    "SELECT DISTINCT ON (job_id) job_id, id::text FROM events WHERE job_id = ANY($1::uuid[]) AND type = $2 ORDER BY job_id, id",
    [ids, type],
  );
  return new Map(rows.map((r) => [r.job_id, BigInt(r.id)]));
}

/**
 * Fails unless every dependent started (its first attempt) after each of its dependencies succeeded. How often a job
 * starts is not checked here: on a loaded machine a worker can lose a job's lock and another take it over
 * (at-least-once, docs/reference/lifecycle.md#lifecycle); dependencies-faults.test.ts checks a dependent runs once after a dependency's take-over.
 */
async function expectOrder(edges: { from: string; to: string }[]): Promise<void> {
  const ids = [...new Set(edges.flatMap((e) => [e.from, e.to]))];
  const succeeded = await eventIds(ids, "job.succeeded");
  const started = await eventIds(ids, "job.started");
  for (const { from, to } of edges) {
    expect(succeeded.get(from)).toBeDefined();
    expect(started.get(to)! > succeeded.get(from)!).toBe(true);
  }
}

describe("an invoice rendered, then e-mailed with it attached, in one request", () => {
  it("waits for the PDF, then sends it through SendGrid as an attachment", async () => {
    const [invoice, email] = await batch([
      {
        ref: "invoice",
        type: "generate_pdf",
        payload: {
          template: "invoice",
          data: { number: "INV-4471", customer: "Ada Lovelace", items: [{ description: "Engine", quantity: 1, unit_price: 100 }] },
        },
      },
      {
        ref: "email",
        type: "send_email",
        depends_on: ["invoice"],
        payload: { to: "ada@example.com", subject: "Your invoice", body: "Attached.", attachments: [{ filename: "INV-4471.pdf", job: "invoice" }] },
      },
    ]);
    expect(invoice).toEqual({ id: expect.any(String), status: "pending", ref: "invoice" });
    expect(email).toEqual({ id: expect.any(String), status: "pending", ref: "email" });
    const waiting = (await get(`/jobs/${email!.id}`)).body;
    expect(waiting).toMatchObject({ depends_on: [invoice!.id], dependents: [], on_dependency_failure: "cancel" });
    expect(waiting.payload.attachments).toEqual([{ filename: "INV-4471.pdf", job: invoice!.id }]);
    if (waiting.status === "pending" && (await get(`/jobs/${invoice!.id}`)).body.status !== "done") expect(waiting.waiting_for).toBe("dependencies");

    expect(await final(email!.id)).toMatchObject({ status: "done" });
    expect((await get(`/jobs/${invoice!.id}`)).body).toMatchObject({ status: "done", dependents: [email!.id], depends_on: [] });
    const sent = sendgrid.sent.find((m) => m.body.custom_args?.conveyor_job_id === email!.id)!;
    expect(sent.body.attachments).toEqual([{ content: expect.any(String), filename: "INV-4471.pdf", type: "application/pdf", disposition: "attachment" }]);
    const pdf = Buffer.from(sent.body.attachments[0].content, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const artifact = await stack.api.request.get(`/jobs/${invoice!.id}/artifact`).set("X-API-Key", stack.apiKey).buffer(true);
    expect(Buffer.compare(pdf, artifact.body as Buffer)).toBe(0);
    await expectOrder([{ from: invoice!.id, to: email!.id }]);
  });
});

describe("shapes", () => {
  it("a diamond: the bottom starts after both sides, and its handler sees both results", async () => {
    const [top, left, right, bottom] = await batch([
      scripted({}, { ref: "top" }),
      scripted({ sleep_ms: 200 }, { ref: "left", depends_on: ["top"] }),
      scripted({}, { ref: "right", depends_on: ["top"] }),
      scripted({ echo_dependencies: true }, { depends_on: ["left", "right"] }),
    ]);
    const done = await final(bottom!.id);
    expect(done.status).toBe("done");
    const seen = (done.result as { dependencies: { id: string; type: string; status: string; result: { ok: boolean } }[] }).dependencies;
    expect(seen.map((d) => d.id).sort()).toEqual([left!.id, right!.id].sort());
    for (const d of seen) expect(d).toMatchObject({ type: "scripted", status: "done", result: { ok: true } });
    await expectOrder([
      { from: top!.id, to: left!.id },
      { from: top!.id, to: right!.id },
      { from: left!.id, to: bottom!.id },
      { from: right!.id, to: bottom!.id },
    ]);

    const graph = (await get(`/jobs/${left!.id}/graph`)).body;
    expect(graph.truncated).toBe(false);
    expect(graph.nodes[0].id).toBe(left!.id);
    expect(graph.nodes.map((n: { id: string }) => n.id).sort()).toEqual([top!.id, left!.id, right!.id, bottom!.id].sort());
    expect(graph.edges).toHaveLength(4);
    expect(graph.edges).toContainEqual({ from: top!.id, to: right!.id });
    expect((await get(`/jobs/${stack.otherOrg.jobId}/graph`)).status).toBe(404);
  });

  it("a fan-in: one job waits for 100 others (ids of earlier jobs and of a batch), one of which waits for 50 by ref", async () => {
    const earlier = await batch(Array.from({ length: 50 }, () => scripted()));
    const children = Array.from({ length: 250 }, (_, i) => scripted({}, { ref: `child-${i}` }));
    const accepted = await batch([
      ...children,
      scripted({ echo_dependencies: true }, { ref: "parent", depends_on: children.slice(0, 50).map((_, i) => `child-${i}`) }),
    ]);
    // A job depends on at most 100; the rest of the fan-in goes through a second level.
    const parent = accepted[250]!;
    const res = await stack.post("/jobs", scripted({}, { depends_on: [...earlier.map((e) => e.id), ...accepted.slice(50, 99).map((a) => a.id), parent.id] }));
    expect(res.status).toBe(202);
    const done = await final(res.body.id);
    expect(done.status).toBe("done");
    await expectOrder([...earlier, ...accepted.slice(50, 99), parent].map((d) => ({ from: d.id, to: res.body.id })));
  });

  it("a graph of 1,000 jobs in one batch runs each job after its dependencies", async () => {
    // Ten layers of 100; each job of a layer depends on two of the layer before (its own place and the next), so the
    // whole graph is connected.
    const jobs = Array.from({ length: 1000 }, (_, i) => {
      const layer = Math.floor(i / 100);
      const k = i % 100;
      return scripted({}, { ref: `n${i}`, ...(layer ? { depends_on: [`n${(layer - 1) * 100 + k}`, `n${(layer - 1) * 100 + ((k + 1) % 100)}`] } : {}) });
    });
    const accepted = await batch(jobs);
    expect(accepted).toHaveLength(1000);
    expect(accepted.every((a, i) => a.ref === `n${i}` && a.status === "pending")).toBe(true);
    const id = (ref: string) => accepted[Number(ref.slice(1))]!.id;
    const edges = jobs.flatMap((job, i) => ((job as { depends_on?: string[] }).depends_on ?? []).map((ref) => ({ from: id(ref), to: accepted[i]!.id })));
    for (const a of accepted.slice(900)) expect((await final(a.id, 180_000)).status).toBe("done");
    await expectOrder(edges);
    const graph = (await get(`/jobs/${accepted[0]!.id}/graph`)).body;
    expect(graph.nodes).toHaveLength(1000);
    expect(graph.edges.length).toBe(new Set(edges.map((e) => `${e.from} ${e.to}`)).size);
  });
});

describe("failures and cancellations", () => {
  it("a failed dependency cancels the chain below it, unless a job runs on failure", async () => {
    const [broken, below, further, anyway] = await batch([
      scripted({ permanent: true }, { ref: "broken" }),
      scripted({}, { ref: "below", depends_on: ["broken"] }),
      scripted({}, { depends_on: ["below"] }),
      scripted({ echo_dependencies: true }, { depends_on: ["broken"], on_dependency_failure: "run" }),
    ]);
    expect((await final(broken!.id)).status).toBe("failed");
    for (const job of [below!, further!]) {
      const cancelled = await final(job.id);
      expect(cancelled.status).toBe("cancelled");
      expect(cancelled.error).toMatch(/^dependency_failed: job /);
      const logs = await stack.logs(job.id);
      expect(logs).toEqual([expect.objectContaining({ level: "warn", message: expect.stringMatching(/^Cancelled before it started: dependency_failed/) })]);
    }
    expect((await get(`/jobs/${below!.id}`)).body.error).toContain(`job ${broken!.id}, which this job depends on, failed.`);
    const ran = await final(anyway!.id);
    expect(ran.status).toBe("done");
    expect((ran.result as { dependencies: { status: string }[] }).dependencies).toEqual([expect.objectContaining({ id: broken!.id, status: "failed" })]);
    const cancelledEvents = await eventIds([below!.id, further!.id], "job.cancelled");
    expect(cancelledEvents.size).toBe(2);
  });

  it("cancelling a job cancels the jobs waiting for it; bulk cancel does too; nothing is left waiting", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const [root, mid, leaf] = await batch([
      scripted({}, { ref: "root", run_at: later }),
      scripted({}, { ref: "mid", depends_on: ["root"] }),
      scripted({}, { depends_on: ["mid"] }),
    ]);
    expect((await get(`/jobs/${mid!.id}`)).body.waiting_for).toBe("dependencies");
    const res = await stack.api.request.post(`/jobs/${root!.id}/cancel`).set("X-API-Key", stack.apiKey);
    expect(res.status).toBe(200);
    for (const job of [mid!, leaf!]) expect((await get(`/jobs/${job.id}`)).body).toMatchObject({ status: "cancelled", waiting_for: null });

    const [a, b] = await batch([scripted({}, { ref: "a", run_at: later }), scripted({}, { depends_on: ["a"] })]);
    const bulk = await stack.post("/jobs/bulk", { action: "cancel", ids: [a!.id] });
    expect(bulk.body).toMatchObject({ matched: 1, affected: 1 });
    expect((await get(`/jobs/${b!.id}`)).body).toMatchObject({ status: "cancelled", error: expect.stringMatching(/^dependency_failed/) });
    const { rows } = await stack.api.database.db.pool.query(
      "SELECT j.id FROM jobs j WHERE j.status = 'pending' AND j.dependencies_pending > 0 AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs x ON x.id = d.depends_on_id WHERE d.job_id = j.id AND x.status IN ('pending', 'processing'))",
    );
    expect(rows).toEqual([]);
  });

  it("a job created on a failed dependency is cancelled at once; a replay of the dependency lets a replayed dependent run", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const [dependency] = await batch([scripted({}, { run_at: later })]);
    await stack.api.request.post(`/jobs/${dependency!.id}/cancel`).set("X-API-Key", stack.apiKey);
    const created = await stack.post("/jobs", scripted({ echo_dependencies: true }, { depends_on: [dependency!.id] }));
    expect(created.body).toEqual({ id: expect.any(String), status: "cancelled" });

    const replayedDependency = await stack.post(`/jobs/${dependency!.id}/replay`, {});
    expect(replayedDependency.status).toBe(202);
    const replayedDependent = await stack.post(`/jobs/${created.body.id}/replay`, {});
    expect(replayedDependent.status).toBe(202);
    const done = await final(replayedDependent.body.id);
    expect(done.status).toBe("done");
    expect((await get(`/jobs/${replayedDependent.body.id}`)).body.depends_on).toEqual([replayedDependency.body.id]);
    expect((done.result as { dependencies: { id: string }[] }).dependencies.map((d) => d.id)).toEqual([replayedDependency.body.id]);
  });
});

describe("POST /jobs with depends_on", () => {
  it("waits for existing jobs by id, and an Idempotency-Key repeat answers the same job", async () => {
    const [first] = await batch([scripted({ sleep_ms: 300 })]);
    const body = scripted({ echo_dependencies: true }, { depends_on: [first!.id.toUpperCase()] });
    const created = await stack.post("/jobs", body, { "Idempotency-Key": "deps-once" });
    expect(created).toEqual({ status: 202, body: { id: expect.any(String), status: "pending" } });
    const again = await stack.post("/jobs", body, { "Idempotency-Key": "deps-once" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
    const other = await stack.post("/jobs", scripted({ echo_dependencies: true }, { depends_on: [first!.id], on_dependency_failure: "run" }), {
      "Idempotency-Key": "deps-once",
    });
    expect(other.status).toBe(409);
    const done = await final(created.body.id);
    expect((done.result as { dependencies: { id: string }[] }).dependencies.map((d) => d.id)).toEqual([first!.id]);
    await expectOrder([{ from: first!.id, to: created.body.id }]);
  });
});

describe("handlers see their dependencies", () => {
  it("webhook with include_dependencies adds them to the body", async () => {
    receiver.reset();
    const [first, hook] = await batch([
      scripted({}, { ref: "first" }),
      { type: "webhook", depends_on: ["first"], payload: { url: `${receiver.url}/hook`, payload: { order: 7 }, include_dependencies: true } },
    ]);
    expect((await final(hook!.id)).status).toBe("done");
    const body = JSON.parse(receiver.lastRequest().body);
    expect(body).toEqual({ order: 7, dependencies: [{ id: first!.id, type: "scripted", status: "done", result: expect.objectContaining({ ok: true }) }] });
  });
});

describe("refusals (400, naming the items; nothing created)", () => {
  const count = async () => (await stack.api.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs")).rows[0]!.n;

  async function refused(path: string, body: object): Promise<{ path: string; message: string }[]> {
    const before = await count();
    const res = await stack.post(path, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(await count()).toBe(before);
    return res.body.error.details;
  }

  it("a cycle names every item on it", async () => {
    const details = await refused("/jobs/batch", {
      jobs: [
        scripted({}, { ref: "a", depends_on: ["c"] }),
        scripted({}, { ref: "b", depends_on: ["a"] }),
        scripted({}, { ref: "c", depends_on: ["b"] }),
        scripted({}, { depends_on: ["a"] }),
      ],
    });
    expect(details.map((d) => d.path)).toEqual(["jobs.0.depends_on", "jobs.1.depends_on", "jobs.2.depends_on"]);
    expect(details[0]!.message).toMatch(/cycle/);
  });

  it("a self-reference, an unknown ref, another org's id and no job", async () => {
    expect(await refused("/jobs/batch", { jobs: [scripted({}, { ref: "me", depends_on: ["me"] })] })).toEqual([
      { path: "jobs.0.depends_on.0", message: expect.stringMatching(/itself/) },
    ]);
    expect(await refused("/jobs/batch", { jobs: [scripted({}, { ref: "a" }), scripted({}, { depends_on: ["a", "nope"] })] })).toEqual([
      { path: "jobs.1.depends_on.1", message: expect.stringMatching(/names no ref of this batch/) },
    ]);
    expect(await refused("/jobs", scripted({}, { depends_on: [stack.otherOrg.jobId] }))).toEqual([
      { path: "depends_on.0", message: "is not a job or waitpoint of your organization" },
    ]);
    expect(await refused("/jobs/batch", { jobs: [scripted({}, { depends_on: ["0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01"] })] })).toEqual([
      { path: "jobs.0.depends_on.0", message: "is not a job or waitpoint of your organization" },
    ]);
    expect(await refused("/jobs", scripted({}, { depends_on: ["not-an-id"] }))).toEqual([{ path: "depends_on.0", message: "is not a job id" }]);
  });

  it("refs unique and not ids, at most 100 dependencies, attachments among them, and no ref, debounce or dedupe where they cannot work", async () => {
    expect((await refused("/jobs/batch", { jobs: [scripted({}, { ref: "x" }), scripted({}, { ref: "x" })] }))[0]!.path).toBe("jobs.1.ref");
    expect((await refused("/jobs/batch", { jobs: [scripted({}, { ref: "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01" })] }))[0]!.path).toBe("jobs.0.ref");
    const many = Array.from({ length: 101 }, (_, i) => `0193a5c4-7b2e-7c1d-9f3a-${String(i).padStart(12, "0")}`);
    expect((await refused("/jobs", scripted({}, { depends_on: many })))[0]!.path).toBe("depends_on");
    expect((await refused("/jobs", scripted({}, { ref: "a" })))[0]).toEqual({ path: "ref", message: "is supported on POST /jobs/batch only" });
    expect((await refused("/jobs/batch", { jobs: [scripted({}, { ref: "a", dedupe_key: "k" }), scripted({}, { depends_on: ["a"] })] }))[0]!.path).toBe(
      "jobs.0.dedupe_key",
    );
    const [other] = await batch([scripted()]);
    expect(
      await refused("/jobs/batch", {
        jobs: [
          scripted({}, { ref: "a" }),
          {
            type: "send_email",
            depends_on: ["a"],
            payload: { to: "ada@example.com", subject: "s", body: "b", attachments: [{ filename: "f.pdf", job: other!.id }] },
          },
        ],
      }),
    ).toEqual([{ path: "jobs.1.payload.attachments.0.job", message: expect.stringMatching(/depends_on/) }]);
    expect((await refused("/jobs", scripted({}, { on_dependency_failure: "run" })))[0]!.message).toMatch(/depends_on/);
  });
});
