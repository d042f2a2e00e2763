// Read replicas (docs/reference/high-availability.md#high-availability): with DATABASE_READ_URL, lists, stats and the audit log are read from the replica,
// except by whoever just changed something — their reads go to the primary for DATABASE_READ_AFTER_WRITE_MS, so
// they see their own change. The replica's replay is paused to make "served by the replica" visible: what it
// has not replayed, it does not show.
import { createDatabase, migrate, resolveDatabaseUrl } from "@conveyor/db";
import { withPrisma, type DatabaseWithPrisma } from "@conveyor/db/prisma";
import { startReplicatedPostgres, waitFor, type ReplicatedPostgres, type TestDatabase } from "@conveyor/testkit";
import { addMember, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";

const WINDOW_MS = 1_500;
let pair: ReplicatedPostgres;
let db: DatabaseWithPrisma;
let api: TestApi;
let owner: TestMember;
let colleague: TestMember;
let second: SecondOrg;

beforeAll(async () => {
  pair = await startReplicatedPostgres();
  // As `npm run db:migrate` does with a multi-host URL, the standby named first: the primary is found, on "postgres"
  // since "conveyor" does not exist yet.
  const standbyFirst = `postgresql://postgres@127.0.0.1:${pair.replica.port},127.0.0.1:${pair.primary.port}/conveyor?target_session_attrs=read-write`;
  const resolved = await resolveDatabaseUrl(standbyFirst, "postgres");
  expect(resolved).toBe(pair.primary.url("conveyor"));
  await migrate(resolved);
  db = withPrisma(createDatabase({ url: pair.primary.url("conveyor"), readUrl: pair.replica.url("conveyor"), poolSize: 4, applicationName: "conveyor-test" }));
  const database: TestDatabase = { name: "conveyor", url: pair.primary.url("conveyor"), db, drop: () => db.close() };
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0", DATABASE_READ_AFTER_WRITE_MS: String(WINDOW_MS) }, { database });
  owner = await createOrg(db, api.deps.config);
  colleague = await addMember(db, api.deps.config, owner.orgId, "admin");
  second = await createSecondOrg(db);
  await db.pool.query("INSERT INTO job_types (name) VALUES ('word_count') ON CONFLICT DO NOTHING");
  await pair.caughtUp();
  await second.watch(api.get);
}, 120_000);

afterAll(async () => {
  await pair?.pauseReplay(false).catch(() => {});
  await api?.close();
  await pair?.destroy();
});

const auth = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const listedIds = async (member: TestMember) => {
  const res = await api.get("/jobs?limit=100", auth(member));
  expect(res.status).toBe(200);
  return (res.body as { id: string }[]).map((job) => job.id);
};
const createdThisHour = async (member: TestMember) => {
  const res = await api.get("/jobs/stats?window=hour", auth(member));
  expect(res.status).toBe(200);
  return (res.body as { buckets: { created: number }[] }).buckets.reduce((sum, bucket) => sum + bucket.created, 0);
};

describe("reads from a replica", () => {
  it("serves others from the replica and the person who just acted from the primary, for a few seconds", async () => {
    await pair.pauseReplay(true);
    const created = await api.request
      .post("/jobs")
      .set(auth(owner))
      .send({ type: "word_count", payload: { text: "read your writes" } });
    expect(created.status).toBe(202);
    const id = (created.body as { id: string }).id;

    // The colleague did nothing: the replica answers, and it has not replayed the job yet.
    expect(await listedIds(colleague)).not.toContain(id);
    expect(await createdThisHour(colleague)).toBe(0);
    // The owner just created it: their list and stats come from the primary.
    expect(await listedIds(owner)).toContain(id);
    expect(await createdThisHour(owner)).toBe(1);

    // Once the window has passed, the owner reads from the replica again (still paused: no job there).
    await waitFor(async () => !(await listedIds(owner)).includes(id), "the owner's reads to go back to the replica", 10_000, 200);

    // Replay resumes: everyone sees it.
    await pair.pauseReplay(false);
    await waitFor(async () => (await listedIds(colleague)).includes(id), "the replica to show the job");
    expect(await createdThisHour(colleague)).toBe(1);
    await second.expectUntouched(auth(owner));
  });

  it("reads the audit log from the replica, and the actor's own entry from the primary", async () => {
    await pair.pauseReplay(false);
    await pair.caughtUp();
    await pair.pauseReplay(true);
    const invited = await api.request
      .post("/org/invite")
      .set(auth(owner))
      .send({ email: `ha-${Date.now()}@example.com`, role: "member" });
    expect(invited.status).toBe(201);
    const actions = async (member: TestMember) => {
      const res = await api.get("/audit-log?limit=50", auth(member));
      expect(res.status).toBe(200);
      return (res.body as { action: string }[]).map((entry) => entry.action);
    };
    expect(await actions(owner)).toContain("member.invite");
    expect(await actions(colleague)).not.toContain("member.invite");
    await pair.pauseReplay(false);
    await waitFor(async () => (await actions(colleague)).includes("member.invite"), "the replica to show the audit entry");
    await second.expectUntouched(auth(owner));
  });
});
