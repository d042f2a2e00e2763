// Replay with an edited payload (issue 23): POST /jobs/{id}/replay takes an optional `payload`, checked like POST /jobs's
// for the job's type; the replay names its original (`replay_of`) and the original lists its replays (`replayed_as`).
import { writeOutcomes } from "@conveyor/db";
import { type TestApi, type TestMember, startTwoOrgs } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let close: () => Promise<void>;

beforeAll(async () => {
  ({ api, alice, bob, close } = await startTwoOrgs());
});
afterAll(() => close());

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });

/** An e-mail job whose only attempt failed, recorded through the job machine as a worker records it. */
async function failedEmail(to: string): Promise<string> {
  const res = await api.request
    .post("/jobs")
    .set(as(alice))
    .send({ type: "send_email", payload: { to, subject: "Receipt", body: "Thanks." } });
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  await api.database.db.pool.query("UPDATE jobs SET status = 'processing', fence = 'attempt-1' WHERE id = $1", [id]);
  await writeOutcomes(
    api.database.db.pool,
    [],
    [{ id, fence: "attempt-1", status: "failed", retries: 0, result: null, error: "Mailbox does not exist", runAt: null }],
  );
  return id;
}

const job = async (id: string, member = alice) => (await api.request.get(`/jobs/${id}`).set(as(member))).body;

it("replays a failed job with a corrected payload, and records the replay on both jobs", async () => {
  const original = await failedEmail("nobody@example.invalid");
  const res = await api.request
    .post(`/jobs/${original}/replay`)
    .set(as(alice))
    .send({ payload: { to: "ada@example.com", subject: "Receipt", body: "Thanks." } });
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ id: expect.any(String), status: "pending" });
  const replay = await job(res.body.id);
  expect(replay).toMatchObject({
    type: "send_email",
    replay_of: original,
    replayed_as: [],
    payload: { to: "ada@example.com", subject: "Receipt", body: "Thanks." },
  });
  const before = await job(original);
  expect(responseSchemas.Job.validate(before).error).toBeUndefined();
  expect(before).toMatchObject({ status: "failed", replayed_as: [res.body.id], payload: { to: "nobody@example.invalid" } });
  // A second replay, with the original payload (no body at all), joins the history.
  const again = await api.request.post(`/jobs/${original}/replay`).set(as(alice));
  expect(again.status).toBe(202);
  expect((await job(original)).replayed_as).toEqual([res.body.id, again.body.id]);
  expect((await job(again.body.id)).payload).toEqual({ to: "nobody@example.invalid", subject: "Receipt", body: "Thanks." });
  // The audit log says the payload was edited, never what it was.
  const { rows } = await api.database.db.pool.query<{ details: Record<string, unknown> }>(
    "SELECT details FROM audit_log WHERE org_id = $1 AND action = 'job.replay' ORDER BY id",
    [alice.orgId],
  );
  expect(rows.map((r) => r.details)).toEqual([{ replay_id: res.body.id, payload_edited: true }, { replay_id: again.body.id }]);
});

it("refuses a payload the type's schema refuses with 400 validation_failed naming each path, and creates nothing", async () => {
  const original = await failedEmail("nobody@example.invalid");
  const res = await api.request
    .post(`/jobs/${original}/replay`)
    .set(as(alice))
    .send({ payload: { to: "not an address", subject: "Receipt" } });
  expectError(res, 400, "validation_failed");
  expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(["payload.body", "payload.to"]);
  expect((await job(original)).replayed_as).toEqual([]);
  expectError(await api.request.post(`/jobs/${original}/replay`).set(as(alice)).send({ payload: "text" }), 400, "validation_failed");
  expectError(await api.request.post(`/jobs/${original}/replay`).set(as(alice)).send({ payload: {}, priority: 9 }), 400, "validation_failed");
  // Another org's job stays out of reach, edited payload or not.
  expectError(
    await api.request
      .post(`/jobs/${original}/replay`)
      .set(as(bob))
      .send({ payload: { to: "a@example.com", subject: "s", body: "b" } }),
    404,
    "not_found",
  );
});
