// GET /jobs filters (docs/reference/lifecycle.md#steering): each alone and combined, in pages and streams, `q` over ids and payload values, bad
// input, every role — with a second organization holding look-alike jobs that no filter may ever show.
import supertest from "supertest";
import { newId } from "@conveyor/db";
import { addMember, createOrg, startTwoOrgs, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org, with jobs that look like Alice's
let second: SecondOrg;
let aliceKey: string;
const scheduleId = newId();
const T0 = Date.UTC(2026, 10, 1, 8, 0, 0);
const hour = 60 * 60 * 1000;
const at = (hours: number) => new Date(T0 + hours * hour).toISOString();

/** Alice's jobs by name, oldest first. */
const jobs: Record<string, string> = {};
const bobJobs: string[] = [];

async function make(member: TestMember, body: object, hours: number, fields: { status?: string; schedule?: boolean } = {}): Promise<string> {
  api.clock.advance(T0 + hours * hour - api.clock.now().getTime());
  const res = await api.request
    .post("/jobs")
    .set({ Authorization: `Bearer ${member.token}` })
    .send(body);
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  if (fields.status || fields.schedule) {
    await api.database.db.pool.query(
      `UPDATE jobs SET status = COALESCE($2::job_status, status), schedule_id = $3,
              finished_at = CASE WHEN $2 IN ('done', 'failed', 'cancelled') THEN created_at END
        WHERE id = $1`,
      [id, fields.status ?? null, fields.schedule ? scheduleId : null],
    );
  }
  return id;
}

let close: () => Promise<void>;
beforeAll(async () => {
  ({ api, alice, bob, aliceKey, second, close } = await startTwoOrgs({ jobTypes: ["echo_test"] }));

  for (const member of [alice, bob]) {
    const mine = member === alice;
    const ids = [
      await make(member, { type: "webhook", payload: { url: "https://example.com/a", payload: { order: "A-1", n: 42 } } }, 0, { status: "done" }),
      await make(member, { type: "send_email", payload: { to: "ada@example.com", subject: "Hi", body: "Welcome" } }, 1, { status: "failed" }),
      await make(member, { type: "echo_test", payload: { deep: { list: [1, { name: "needle" }], price: 19.9 } } }, 2),
      await make(member, { type: "echo_test", payload: { order: "A-1" } }, 3, { status: "cancelled", schedule: true }),
      await make(member, { type: "webhook", payload: { url: "https://example.com/e", payload: {} } }, 4, { status: "processing", schedule: true }),
    ];
    if (mine) ["done", "failed", "needle", "order", "processing"].forEach((name, i) => (jobs[name] = ids[i]!));
    else bobJobs.push(...ids);
  }
});
afterAll(() => close());

const asAlice = () => ({ Authorization: `Bearer ${alice.token}` });

/** The ids GET /jobs?`query` lists for Alice, streamed (no limit); every item checked against the documented schema. */
async function listed(query: string, headers: Record<string, string> = asAlice()): Promise<string[]> {
  const res = await api.request.get(`/jobs?${query}`).set(headers);
  expect({ query, status: res.status, body: res.status === 200 ? "ok" : res.body }).toEqual({ query, status: 200, body: "ok" });
  for (const item of res.body) expect(responseSchemas.JobListItem.validate(item).error).toBeUndefined();
  const ids = (res.body as { id: string }[]).map((j) => j.id);
  expect(ids.filter((id) => bobJobs.includes(id) || id === second.jobId)).toEqual([]);
  return ids;
}

/** Every page of GET /jobs?`query`&limit=`limit`, following Link; the ids, and the Links seen. */
async function paged(query: string, limit: number): Promise<{ ids: string[]; links: string[] }> {
  const ids: string[] = [];
  const links: string[] = [];
  let url: string | null = `/jobs?${query}&limit=${limit}`;
  while (url) {
    const res: supertest.Response = await api.request.get(url).set(asAlice());
    expect(res.status).toBe(200);
    ids.push(...res.body.map((j: { id: string }) => j.id));
    const link = res.headers.link as string | undefined;
    if (link) links.push(link);
    const next = link ? new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!) : null;
    url = next ? next.pathname + next.search : null;
  }
  return { ids, links };
}

describe("each filter alone", () => {
  it("status: one value, or several comma-separated", async () => {
    expect(await listed("status=done")).toEqual([jobs.done]);
    expect(await listed("status=failed")).toEqual([jobs.failed]);
    expect(await listed("status=cancelled")).toEqual([jobs.order]);
    expect(await listed("status=pending,processing")).toEqual([jobs.processing, jobs.needle]);
    expect(await listed("status=failed,cancelled,done")).toEqual([jobs.order, jobs.failed, jobs.done]);
  });

  it("type", async () => {
    expect(await listed("type=echo_test")).toEqual([jobs.order, jobs.needle]);
    expect(await listed("type=chat_notify")).toEqual([]);
  });

  it("created_after (at or after) and created_before (before): adjacent windows neither overlap nor leave a gap", async () => {
    expect(await listed(`created_after=${at(2)}`)).toEqual([jobs.processing, jobs.order, jobs.needle]);
    expect(await listed(`created_before=${at(2)}`)).toEqual([jobs.failed, jobs.done]);
    expect(await listed(`created_after=${encodeURIComponent("2026-11-01T11:00:00+01:00")}`)).toEqual([jobs.processing, jobs.order, jobs.needle]);
    expect(await listed("created_before=2026-11-01")).toEqual([]);
    expect(await listed("created_after=2026-11-01")).toHaveLength(5);
  });

  it("schedule_id", async () => {
    expect(await listed(`schedule_id=${scheduleId}`)).toEqual([jobs.processing, jobs.order]);
    expect(await listed(`schedule_id=${scheduleId.toUpperCase()}`)).toEqual([jobs.processing, jobs.order]);
    expect(await listed(`schedule_id=${newId()}`)).toEqual([]);
  });

  it("q: a job id, in any case", async () => {
    expect(await listed(`q=${jobs.failed}`)).toEqual([jobs.failed]);
    expect(await listed(`q=${jobs.failed!.toUpperCase()}`)).toEqual([jobs.failed]);
  });

  it("q: a string value of the payload, exactly", async () => {
    expect(await listed("q=A-1")).toEqual([jobs.order, jobs.done]);
    expect(await listed("q=ada%40example.com")).toEqual([jobs.failed]);
    expect(await listed("q=a-1")).toEqual([]);
    expect(await listed("q=A-")).toEqual([]);
  });

  it("q: a number value, as JSON writes it", async () => {
    expect(await listed("q=42")).toEqual([jobs.done]);
    expect(await listed("q=19.9")).toEqual([jobs.needle]);
    expect(await listed("q=1")).toEqual([jobs.needle]);
    expect(await listed("q=42.0")).toEqual([]);
  });

  it("q: values nested in objects and arrays", async () => {
    expect(await listed("q=needle")).toEqual([jobs.needle]);
    expect(await listed("q=https%3A%2F%2Fexample.com%2Fe")).toEqual([jobs.processing]);
  });

  it("q: nothing found is an empty list, and another org's id or values find nothing of theirs", async () => {
    expect(await listed("q=not-in-any-payload")).toEqual([]);
    expect(await listed(`q=${bobJobs[0]}`)).toEqual([]);
    expect(await listed(`q=${second.jobId}`)).toEqual([]);
    expect(await listed("q=SO-1")).toEqual([]);
  });

  it("no filter lists every job of the org, as before", async () => {
    expect(await listed("")).toEqual([jobs.processing, jobs.order, jobs.needle, jobs.failed, jobs.done]);
  });
});

describe("due: pending jobs due now or later, as the overview counts them", () => {
  it("splits the pending jobs in two, agrees with GET /jobs/stats, and bulk-cancels only the delayed", async () => {
    const carol = await createOrg(api.database.db, api.deps.config);
    const asCarol = { Authorization: `Bearer ${carol.token}` };
    const post = async (body: object) => {
      const res = await api.request.post("/jobs").set(asCarol).send(body);
      expect(res.status).toBe(202);
      return res.body.id as string;
    };
    const later = new Date(Date.now() + 24 * hour).toISOString();
    const dueNow = await post({ type: "echo_test", payload: { n: 1 } });
    const delayed = await post({ type: "echo_test", payload: { n: 2 }, run_at: later });
    // Handed over to a worker ahead of its time is due now (about to start), not delayed.
    const handedOver = await post({ type: "echo_test", payload: { n: 3 }, run_at: later });
    await api.database.db.pool.query("UPDATE job_queue SET dispatched_at = now() WHERE job_id = $1", [handedOver]);
    const running = await post({ type: "echo_test", payload: { n: 4 } });
    await api.database.db.pool.query("UPDATE jobs SET status = 'processing' WHERE id = $1", [running]);

    expect(await listed("due=now", asCarol)).toEqual([handedOver, dueNow]);
    expect(await listed("due=later", asCarol)).toEqual([delayed]);
    expect(await listed("due=later&status=processing", asCarol)).toEqual([]);
    // Alice's one pending job, in pages whose Links keep the filter; none of Carol's.
    const alices = await paged("due=now", 1);
    expect(alices.ids).toEqual([jobs.needle]);
    const stats = await api.request.get("/jobs/stats").set(asCarol);
    expect(stats.body.queue).toMatchObject({ pending: 3, waiting_due: 2, delayed: 1 });

    const bulk = await api.request
      .post("/jobs/bulk")
      .set(asCarol)
      .send({ action: "cancel", filter: { due: "later" } });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ matched: 1 });
    expect(await listed("status=cancelled", asCarol)).toEqual([delayed]);

    const bad = await api.request.get("/jobs?due=soon").set(asCarol);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: "query.due", message: expect.stringContaining("now, later") })]);
  });
});

describe("filters combined", () => {
  it("must all hold", async () => {
    expect(await listed("status=done,cancelled&q=A-1")).toEqual([jobs.order, jobs.done]);
    expect(await listed("status=done&q=A-1&type=webhook")).toEqual([jobs.done]);
    expect(await listed(`type=echo_test&created_after=${at(3)}`)).toEqual([jobs.order]);
    expect(await listed(`schedule_id=${scheduleId}&status=processing`)).toEqual([jobs.processing]);
    expect(await listed(`created_after=${at(1)}&created_before=${at(3)}&status=failed,pending`)).toEqual([jobs.needle, jobs.failed]);
    expect(await listed(`status=done&q=needle`)).toEqual([]);
    expect(await listed(`status=failed&type=send_email&created_after=${at(1)}&created_before=${at(2)}&q=Hi`)).toEqual([jobs.failed]);
  });
});

describe("pages and streams with filters", () => {
  it("pages keep their filters in every Link, and end where the filtered list ends", async () => {
    const { ids, links } = await paged("q=A-1&status=cancelled,done", 1);
    expect(ids).toEqual([jobs.order, jobs.done]);
    expect(links).toHaveLength(1);
    const next = new URL(/<([^>]+)>/.exec(links[0]!)![1]!);
    expect(Object.fromEntries(next.searchParams)).toEqual({ status: "done,cancelled", q: "A-1", limit: "1", cursor: expect.any(String) });

    const all = await paged(`created_after=${at(1)}&type=echo_test`, 1);
    expect(all.ids).toEqual([jobs.order, jobs.needle]);
    expect(all.links.every((l) => l.includes("type=echo_test") && l.includes("created_after="))).toBe(true);
  });

  it("gives the same jobs paged as streamed, for every filter", async () => {
    for (const query of ["status=done,failed,cancelled", "type=webhook", `created_before=${at(4)}`, `schedule_id=${scheduleId}`, "q=A-1", ""]) {
      expect({ query, ids: (await paged(query, 2)).ids }).toEqual({ query, ids: await listed(query) });
    }
  });

  it("order=oldest lists oldest first, in pages whose Links keep the order, and a newest-first cursor is refused there", async () => {
    for (const query of ["", "status=done,failed,cancelled", "q=A-1", "type=echo_test"]) {
      const newest = await listed(query);
      expect({ query, ids: await listed(`${query}&order=oldest`) }).toEqual({ query, ids: [...newest].reverse() });
      expect({ query, ids: await listed(`${query}&order=newest`) }).toEqual({ query, ids: newest });
      const { ids, links } = await paged(`${query}&order=oldest`, 2);
      expect({ query, ids }).toEqual({ query, ids: [...newest].reverse() });
      for (const link of links) expect(link).toContain("order=oldest");
    }
    const first = await api.request.get("/jobs?limit=1").set(asAlice());
    const cursor = new URL(/<([^>]+)>/.exec(String(first.headers.link))![1]!).searchParams.get("cursor")!;
    const mixed = await api.request.get(`/jobs?limit=1&order=oldest&cursor=${cursor}`).set(asAlice());
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.details[0].path).toBe("query.cursor");
    const bad = await api.request.get("/jobs?order=random").set(asAlice());
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ path: "query.order" });
  });

  it("refuses a cursor sent with other filters than the page that gave it, or with none", async () => {
    const first = await api.request.get("/jobs?type=echo_test&limit=1").set(asAlice());
    const cursor = new URL(/<([^>]+)>/.exec(String(first.headers.link))![1]!).searchParams.get("cursor")!;
    for (const query of [`type=webhook&limit=1&cursor=${cursor}`, `limit=1&cursor=${cursor}`, `type=echo_test&q=A-1&limit=1&cursor=${cursor}`]) {
      const res = await api.request.get(`/jobs?${query}`).set(asAlice());
      expect({ query, status: res.status, code: res.body.error?.code, path: res.body.error?.details?.[0]?.path }).toEqual({
        query,
        status: 400,
        code: "validation_failed",
        path: "query.cursor",
      });
    }
    // The same filter, spelled another way, is the same list.
    expect((await api.request.get(`/jobs?type=echo_test&limit=1&cursor=${cursor}`).set(asAlice())).body.map((j: { id: string }) => j.id)).toEqual([
      jobs.needle,
    ]);
    const unfiltered = await api.request.get("/jobs?limit=1").set(asAlice());
    const plain = new URL(/<([^>]+)>/.exec(String(unfiltered.headers.link))![1]!).searchParams.get("cursor")!;
    expect((await api.request.get(`/jobs?status=done&limit=1&cursor=${plain}`).set(asAlice())).status).toBe(400);
    const statuses = await api.request.get("/jobs?status=failed,done&limit=1").set(asAlice());
    const statusCursor = new URL(/<([^>]+)>/.exec(String(statuses.headers.link))![1]!).searchParams.get("cursor")!;
    expect((await api.request.get(`/jobs?status=done,failed,done&limit=1&cursor=${statusCursor}`).set(asAlice())).body).toEqual([
      expect.objectContaining({ id: jobs.done }),
    ]);
  });
});

describe("q held by many jobs", () => {
  it("lists every holder, newest first, in pages and streamed, past the 1,000 jobs it narrows to by id", async () => {
    const gus = await createOrg(api.database.db, api.deps.config);
    const seed = async (orgId: string, count: number) => {
      const ids = Array.from({ length: count }, () => newId());
      await api.database.db.pool.query(
        `WITH added AS (
           INSERT INTO jobs (id, org_id, type, status, payload)
           SELECT id, $2, 'echo_test', 'done', jsonb_build_object('tag', 'everywhere', 'n', n) FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)
         )
         INSERT INTO job_search (job_id, org_id, search_values)
         SELECT id, $2, ARRAY['everywhere', n::text] FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
        [ids, orgId],
      );
      return ids;
    };
    const ids = await seed(gus.orgId, 1_205);
    const bobs = await seed(bob.orgId, 1_100);
    const headers = { Authorization: `Bearer ${gus.token}` };
    const streamed = (await api.request.get("/jobs?q=everywhere").set(headers)).body.map((j: { id: string }) => j.id);
    expect(streamed).toEqual([...ids].reverse());
    const pagedIds: string[] = [];
    let url: string | null = "/jobs?q=everywhere&status=done&limit=500";
    while (url) {
      const res: supertest.Response = await api.request.get(url).set(headers);
      pagedIds.push(...res.body.map((j: { id: string }) => j.id));
      const link = res.headers.link as string | undefined;
      url = link ? new URL(/<([^>]+)>/.exec(link)![1]!).pathname + new URL(/<([^>]+)>/.exec(link)![1]!).search : null;
    }
    expect(pagedIds).toEqual([...ids].reverse());
    expect(streamed.filter((id: string) => bobs.includes(id))).toEqual([]);
    // A rare value among them still finds its one job.
    expect((await api.request.get("/jobs?q=1000").set(headers)).body.map((j: { id: string }) => j.id)).toEqual([ids[999]]);
  });
});

describe("bad input", () => {
  it.each([
    ["an unknown filter", "color=red", "query.color"],
    ["a filter spelled in another case", "Status=done", "query.Status"],
    ["a malformed date", "created_after=2026-13-01", "query.created_after"],
    ["a day the calendar lacks", "created_before=2026-02-31", "query.created_before"],
    ["a date-time without a zone", "created_after=2026-11-01T10:00:00", "query.created_after"],
    ["a word for a date", "created_before=yesterday", "query.created_before"],
    ["q over 256 characters", `q=${"x".repeat(257)}`, "query.q"],
    ["an empty q", "q=", "query.q"],
    ["q with a NUL character", "q=a%00b", "query.q"],
    ["an unknown status among several", "status=done,completed", "query.status"],
    ["a malformed schedule id", "schedule_id=42", "query.schedule_id"],
    ["an internal type name", "type=_webhook_delivery", "query.type"],
    ["a filter given twice", "type=webhook&type=echo_test", "query.type"],
  ])("answers %s with 400 validation_failed in docs/reference/http.md#errors's shape", async (_, query, path) => {
    const res = await api.request.get(`/jobs?${query}`).set(asAlice());
    expect(res.status).toBe(400);
    expect(responseSchemas.Error.validate(res.body).error).toBeUndefined();
    expect(res.body.error).toEqual({ code: "validation_failed", message: expect.stringContaining(path), details: [{ path, message: expect.any(String) }] });
  });

  it("takes q of exactly 256 characters", async () => {
    expect(await listed(`q=${"x".repeat(256)}`)).toEqual([]);
  });
});

describe("roles", () => {
  it("lets owners, admins, members and API keys filter alike", async () => {
    const admin = await addMember(api.database.db, api.deps.config, alice.orgId, "admin");
    const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
    for (const headers of [asAlice(), { Authorization: `Bearer ${admin.token}` }, { Authorization: `Bearer ${member.token}` }, { "X-API-Key": aliceKey }]) {
      expect(await listed("q=A-1&status=done", headers)).toEqual([jobs.done]);
    }
  });
});
