// POST /jobs/batch with `waitpoints` (docs/reference/lifecycle.md#dependencies, docs/reference/lifecycle.md#waitpoints-and-durable-steps) through the API alone, against real Postgres and Redis: the
// batch makes its waitpoints in the graph's transaction, its jobs name them by ref in depends_on, the answer lists
// them after the jobs with their one-time complete_url; bad waitpoints, duplicate and unknown refs are 400s naming
// the item, and a batch refused in its transaction (a quota) leaves no waitpoint behind. The second organization
// sees none of it.
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let other: SecondOrg;
let otherKey: string;

beforeAll(async () => {
  // Four jobs a day per organization, read at every post: the quota refusal below happens inside the batch's transaction.
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0", QUOTA_JOBS_PER_DAY: "4", QUOTA_CACHE_MS: "0" });
  alice = await createOrg(api.database.db, api.deps.config);
  other = await createSecondOrg(api.database.db);
  await other.watch(api.get);
  otherKey = (await createApiKey(api.database.db, await createOrg(api.database.db, api.deps.config))).key;
}, 60_000);
afterEach(() => other.expectUntouched({ "X-API-Key": otherKey }));
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const job = (n: number, extra: object = {}) => ({ type: "webhook", payload: { url: `https://hooks.example.com/${n}`, payload: { n } }, ...extra });
const batch = (body: object, member = alice) => api.request.post("/jobs/batch").set(as(member)).send(body);
const counts = async (orgId: string) => {
  const { rows } = await api.database.db.pool.query<{ jobs: number; waitpoints: number }>(
    "SELECT (SELECT count(*) FROM jobs WHERE org_id = $1)::int AS jobs, (SELECT count(*) FROM waitpoints WHERE org_id = $1)::int AS waitpoints",
    [orgId],
  );
  return rows[0]!;
};

type Item = { id: string; status: string; ref?: string; kind?: string; complete_url?: string; expires_at?: string; created_at?: string };

describe("POST /jobs/batch with waitpoints", () => {
  it("makes the waitpoints with the jobs, lets jobs wait on them by ref, and answers them after the jobs with their complete_url", async () => {
    const member = await createOrg(api.database.db, api.deps.config);
    const res = await batch(
      {
        jobs: [job(1, { ref: "email", depends_on: ["approval"] }), job(2, { depends_on: ["email", "audit"] })],
        waitpoints: [
          { ref: "approval", timeout_seconds: 3600, description: "Approve invoice 118", tags: ["q4", 'a "quoted" \\ tag', "{a,b}", "NULL"] },
          { ref: "audit", tags: [] },
        ],
      },
      member,
    );
    expect(res.status).toBe(202);
    const items = res.body as Item[];
    for (const item of items) expect(responseSchemas.BatchItemAccepted.validate(item).error).toBeUndefined();
    expect(items).toHaveLength(4);
    expect(items[0]).toEqual({ id: expect.any(String), status: "pending", ref: "email" });
    expect(items[1]).toEqual({ id: expect.any(String), status: "pending" });
    const [approval, audit] = [items[2]!, items[3]!];
    expect(approval).toMatchObject({
      kind: "waitpoint",
      ref: "approval",
      status: "waiting",
      description: "Approve invoice 118",
      tags: ["q4", 'a "quoted" \\ tag', "{a,b}", "NULL"],
      data: null,
      job_id: null,
      finished_at: null,
    });
    expect(audit).toMatchObject({ kind: "waitpoint", ref: "audit", status: "waiting", description: null, tags: [] });
    const lifetime = (w: Item) => new Date(w.expires_at!).getTime() - new Date(w.created_at!).getTime();
    expect(Math.abs(lifetime(approval) - 3_600_000)).toBeLessThan(1_000);
    // The default timeout, as POST /waitpoints has it.
    expect(Math.abs(lifetime(audit) - 86_400_000)).toBeLessThan(1_000);
    for (const w of [approval, audit]) expect(w.complete_url).toMatch(/\/waitpoints\/complete\/[A-Za-z0-9_-]{43}$/);
    expect(approval.complete_url).not.toBe(audit.complete_url);
    // Only the token's hash is stored.
    const token = approval.complete_url!.split("/").at(-1)!;
    const { rows } = await api.database.db.pool.query("SELECT row_to_json(w)::text AS row FROM waitpoints w WHERE id = $1", [approval.id]);
    expect(rows[0].row).not.toContain(token);

    const read = async (id: string) => (await api.request.get(`/jobs/${id}`).set(as(member))).body;
    expect(await read(items[0]!.id)).toMatchObject({ status: "pending", waiting_for: "waitpoint", depends_on: [approval.id] });
    expect((await read(items[1]!.id)).depends_on.sort()).toEqual([items[0]!.id, audit.id].sort());
    expect((await api.request.get(`/waitpoints/${approval.id}`).set(as(member))).body).toMatchObject({ id: approval.id, status: "waiting" });
    expect((await api.request.get(`/waitpoints/${approval.id}`).set(as(alice))).status).toBe(404);

    // The third party completes it with no credential; the job waiting on it becomes due (here it waits for a worker:
    // this API runs none); the other still waits for it and for the audit waitpoint.
    const done = await api.request.post(new URL(approval.complete_url!).pathname).send({ data: { approved: true } });
    expect(done.status).toBe(200);
    expect(await read(items[0]!.id)).toMatchObject({ status: "pending", waiting_for: "no_worker" });
    expect(await read(items[1]!.id)).toMatchObject({ status: "pending", waiting_for: "waitpoint" });
    expect(await counts(member.orgId)).toEqual({ jobs: 2, waitpoints: 2 });
  });

  it("answers a repeat through complete_url with the same data 200 and the same waitpoint, other data 409, a wrong token 404", async () => {
    const created = await api.request.post("/waitpoints").set(as(alice)).send({ description: "Payer approves" });
    expect(created.status).toBe(201);
    const path = new URL(created.body.complete_url as string).pathname;
    const first = await api.request.post(path).send({ data: { approved: true } });
    expect(first.status).toBe(200);
    // A third party retrying after a lost answer (docs/reference/lifecycle.md#waitpoints-and-durable-steps): the same body is the same waitpoint.
    const again = await api.request.post(path).send({ data: { approved: true } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await api.request.post(path).send({ data: { approved: false } });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: { code: "conflict", message: expect.stringMatching(/already completed/) } });
    const wrong = await api.request.post(path.replace(/.{5}$/, "AAAAA")).send({ data: { approved: true } });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.code).toBe("not_found");
    // A cancelled waitpoint's URL is 409 too (the token is known; it says nothing a guesser could use).
    const cancelled = await api.request.post("/waitpoints").set(as(alice)).send({});
    expect((await api.request.post(`/waitpoints/${cancelled.body.id}/cancel`).set(as(alice))).status).toBe(200);
    const late = await api.request.post(new URL(cancelled.body.complete_url as string).pathname).send({ data: 1 });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("conflict");
  });

  it("makes waitpoints beside jobs that depend on nothing, as a graph batch", async () => {
    const member = await createOrg(api.database.db, api.deps.config);
    const res = await batch({ jobs: [job(1), job(2)], waitpoints: [{ ref: "later" }] }, member);
    expect(res.status).toBe(202);
    expect((res.body as Item[]).map((i) => i.kind ?? "job")).toEqual(["job", "job", "waitpoint"]);
    expect((res.body as Item[]).slice(0, 2).map((i) => i.status)).toEqual(["pending", "pending"]);
    expect(await counts(member.orgId)).toEqual({ jobs: 2, waitpoints: 1 });
  });

  it("refuses bad waitpoints, duplicate refs across jobs and waitpoints and unknown refs with 400 naming each item, storing nothing", async () => {
    const before = await counts(alice.orgId);
    const refused = async (body: object) => {
      const res = await batch(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      return res.body.error.details as { path: string; message: string }[];
    };
    const paths = async (body: object) => (await refused(body)).map((d) => d.path);
    const jobs = [job(1, { depends_on: ["a"] })];
    expect(await paths({ jobs, waitpoints: [{ ref: "a" }, { ref: "b", timeout_seconds: 59 }] })).toEqual(["waitpoints.1.timeout_seconds"]);
    expect(await paths({ jobs, waitpoints: [{ ref: "a", timeout_seconds: 2_592_001 }] })).toEqual(["waitpoints.0.timeout_seconds"]);
    expect(await paths({ jobs, waitpoints: [{ ref: "a", tags: "x" }] })).toEqual(["waitpoints.0.tags"]);
    expect(await paths({ jobs, waitpoints: [{ timeout_seconds: 60 }] })).toEqual(["waitpoints.0.ref"]);
    expect(await paths({ jobs, waitpoints: [{ ref: "a b" }] })).toEqual(["waitpoints.0.ref"]);
    // Fields a waitpoint does not take (its data, its status) are refused, never applied.
    expect(await paths({ jobs, waitpoints: [{ ref: "a", data: { approved: true } }] })).toEqual(["waitpoints.0.data"]);
    expect(await paths({ jobs, waitpoints: [{ ref: "a", status: "completed" }] })).toEqual(["waitpoints.0.status"]);
    expect(await paths({ jobs, waitpoints: [] })).toEqual(["waitpoints"]);
    expect(await paths({ jobs, waitpoints: Array.from({ length: 1001 }, (_, i) => ({ ref: `w${i}` })) })).toEqual(["waitpoints"]);

    expect(await refused({ jobs, waitpoints: [{ ref: "a" }, { ref: "a" }] })).toEqual([
      { path: "waitpoints.1.ref", message: "is also the ref of waitpoints.0; refs are unique in a batch" },
    ]);
    expect(await refused({ jobs: [job(1, { ref: "a" }), job(2, { depends_on: ["a"] })], waitpoints: [{ ref: "a" }] })).toEqual([
      { path: "waitpoints.0.ref", message: "is also the ref of jobs.0; refs are unique in a batch" },
    ]);
    expect(await refused({ jobs, waitpoints: [{ ref: "0193a5c4-7777-7c1d-9f3a-2b8e4d6f1a07" }] })).toEqual([
      { path: "waitpoints.0.ref", message: "must not look like a job id" },
    ]);
    expect(await refused({ jobs: [job(1, { depends_on: ["approval", "nope"] })], waitpoints: [{ ref: "approval" }] })).toEqual([
      { path: "jobs.0.depends_on.1", message: 'names no ref of this batch ("nope") and is not a job id' },
    ]);
    // A deduplicated item would leave the graph: dedupe keys stay out of batches with waitpoints too.
    expect(await refused({ jobs: [job(1, { dedupe_key: "once" })], waitpoints: [{ ref: "a" }] })).toEqual([
      { path: "jobs.0.dedupe_key", message: "cannot be used in a batch with depends_on, ref or waitpoints" },
    ]);
    // An attachment must name a job: a waitpoint's ref is not one.
    const email = {
      type: "send_email",
      depends_on: ["approval"],
      payload: { to: "ada@example.com", subject: "s", body: "b", attachments: [{ filename: "a.pdf", job: "approval" }] },
    };
    expect(await paths({ jobs: [email], waitpoints: [{ ref: "approval" }] })).toEqual(["jobs.0.payload.attachments.0.job"]);
    // An Idempotency-Key stays refused on batches, waitpoints or not.
    const keyed = await api.request
      .post("/jobs/batch")
      .set(as(alice))
      .set("Idempotency-Key", "k1")
      .send({ jobs, waitpoints: [{ ref: "a" }] });
    expect([keyed.status, keyed.body.error.details[0].path]).toEqual([400, "headers.idempotency-key"]);

    expect(await counts(alice.orgId)).toEqual(before);
  });

  it("is all or nothing: a batch refused in its transaction (past a quota) leaves none of its waitpoints", async () => {
    const member = await createOrg(api.database.db, api.deps.config);
    const over = await batch({ jobs: [1, 2, 3, 4, 5].map((n) => job(n, { depends_on: ["gate"] })), waitpoints: [{ ref: "gate" }] }, member);
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("quota_exceeded");
    expect(await counts(member.orgId)).toEqual({ jobs: 0, waitpoints: 0 });
    // Waitpoints are not jobs: four jobs and two waitpoints fit a quota of four jobs a day.
    const fits = await batch({ jobs: [1, 2, 3, 4].map((n) => job(n, { depends_on: ["gate"] })), waitpoints: [{ ref: "gate" }, { ref: "spare" }] }, member);
    expect(fits.status).toBe(202);
    expect(await counts(member.orgId)).toEqual({ jobs: 4, waitpoints: 2 });
  });

  it("lets another organization's credential see none of the batch's waitpoints", async () => {
    const res = await batch({ jobs: [job(1, { depends_on: ["mine"] })], waitpoints: [{ ref: "mine" }] });
    const wp = (res.body as Item[])[1]!;
    const theirs = await api.request.get(`/waitpoints/${wp.id}`).set("X-API-Key", otherKey);
    expect(theirs.status).toBe(404);
    const list = await api.request.get("/waitpoints").set("X-API-Key", otherKey);
    expect(list.body).toEqual([]);
    // Nor use it: naming it in their own batch is the 400 of an unknown id.
    const used = await api.request
      .post("/jobs/batch")
      .set("X-API-Key", otherKey)
      .send({ jobs: [job(1, { depends_on: [wp.id] })] });
    expect(used.body.error.details).toEqual([{ path: "jobs.0.depends_on.0", message: "is not a job or waitpoint of your organization" }]);
  });
});
