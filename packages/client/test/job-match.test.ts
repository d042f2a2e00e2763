// jobMatchesFilter, the console's "does this job belong in this list", held to the API's own filter (GET /jobs,
// jobsMatching in SQL): for jobs of several types, statuses, creation times and schedules, and each filter, a
// "yes" is a job the API lists and a "no" one it does not; "unknown" only where the job's fields cannot tell.
import { createOrg, startTestApi, type TestApi } from "@conveyor/api/testing";
import { jobMatchesFilter, type JobListFilter } from "../src";

type Item = { id: string; status: string; type: string; created_at: string; finished_at: string | null; schedule_id: string | null };

let api: TestApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi();
  token = (await createOrg(api.database.db, api.deps.config)).token;
});
afterAll(() => api.close());

const auth = () => ({ Authorization: `Bearer ${token}` });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

async function list(filter: JobListFilter): Promise<Item[]> {
  const res = await api.request
    .get("/jobs")
    .query({ ...filter, limit: 200 })
    .set(auth());
  expect(res.status).toBe(200);
  return res.body as Item[];
}

describe("jobMatchesFilter against GET /jobs", () => {
  it("says yes to every job the API lists and no to every job it leaves out, for each filter", async () => {
    const schedule = await api.request
      .post("/schedules")
      .set(auth())
      .send({ name: "Matcher", cron: "0 8 * * 1", timezone: "UTC", job: { type: "send_sms", payload: { to: "+254712345678", message: "m" } } });
    expect(schedule.status).toBe(201);
    const ids: string[] = [];
    for (const body of [
      { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, run_at: inAnHour() },
      { type: "send_email", payload: { to: "b@example.com", subject: "s", body: "b" } },
      { type: "chat_notify", payload: { channel: "#ops", text: "t" }, run_at: inAnHour() },
      { type: "send_sms", payload: { to: "+254712345678", message: "m" } },
    ]) {
      const res = await api.request.post("/jobs").set(auth()).send(body);
      expect(res.status).toBe(202);
      ids.push(res.body.id as string);
    }
    await api.request.post(`/jobs/${ids[2]}/cancel`).set(auth()).expect(200);
    const middle = (await list({})).find((job) => job.id === ids[1])!.created_at;
    const all = await list({});

    const filters: JobListFilter[] = [
      { status: "pending" },
      { status: "cancelled" },
      { status: "pending,cancelled" },
      { type: "send_email" },
      { type: "chat_notify", status: "pending" },
      { created_after: middle },
      { created_before: middle },
      { schedule_id: schedule.body.id as string },
      // Finished jobs by when they finished (the overview's bars): the cancelled one only; a live job never.
      { finished_after: middle },
      { finished_before: new Date(Date.now() + 60_000).toISOString() },
      { finished_after: middle, status: "pending" },
      { due: "later" },
      { due: "now", type: "chat_notify" },
    ];
    for (const filter of filters) {
      const listed = new Set((await list(filter)).map((job) => job.id));
      for (const job of all) {
        const verdict = jobMatchesFilter(job, filter);
        if (verdict === "yes") expect([filter, job.id, listed.has(job.id)]).toEqual([filter, job.id, true]);
        if (verdict === "no") expect([filter, job.id, listed.has(job.id)]).toEqual([filter, job.id, false]);
      }
    }
    // Decided by the job's fields alone: everything but due (the queue's state) and a search (the payload).
    expect(jobMatchesFilter(all[0]!, { status: "pending,failed", type: all[0]!.type })).not.toBe("unknown");
    expect(jobMatchesFilter({ ...all[0]!, status: "pending" }, { due: "later" })).toBe("unknown");
    expect(jobMatchesFilter({ ...all[0]!, status: "cancelled" }, { due: "later" })).toBe("no");
    expect(jobMatchesFilter(all[0]!, { q: "anything" })).toBe("unknown");
    const cancelled = all.find((job) => job.id === ids[2])!;
    expect(jobMatchesFilter(cancelled, { finished_after: middle })).toBe("yes");
    expect(
      jobMatchesFilter(
        all.find((job) => job.id === ids[1])!,
        { finished_after: middle },
      ),
    ).toBe("no");
  });
});
