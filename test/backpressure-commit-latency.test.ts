// docs/reference/robustness.md#r53, docs/reference/tenants.md#usage-quotas-and-backpressure's "or commit latency past its threshold" (issue 36): with BACKPRESSURE_COMMIT_P99_MS
// set, while Postgres commits the API's job inserts slowly, the organization asking for most of the new jobs is refused
// 429 overloaded (counted on /metrics as commit_latency) while a quiet organization's posts are still accepted, and
// once commits are fast again the flood is accepted again. The slowness is real Postgres: a deferred constraint
// trigger on jobs, created in this test's own database only, sleeps once per transaction at its commit.
import { createApiKey, createOrg } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";
import { waitFor } from "@conveyor/testkit";

/** Well past the threshold below, so the p99 is past it whatever the machine's load. */
const COMMIT_SLEEP_S = 0.4;

describe("53: backpressure on commit latency sheds the organization asking for most of the jobs", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ apiEnv: { BACKPRESSURE_COMMIT_P99_MS: "150", API_RATE_LIMIT_PER_SEC: "0" } });
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  const slowCommits = async (on: boolean) => {
    const pool = stack.api.database.db.pool;
    if (!on) return void (await pool.query("DROP TRIGGER test_slow_commit ON jobs"));
    await pool.query(`CREATE OR REPLACE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('test.slept', true) IS DISTINCT FROM 'yes' THEN
          PERFORM set_config('test.slept', 'yes', true);
          PERFORM pg_sleep(${COMMIT_SLEEP_S});
        END IF;
        RETURN NULL;
      END $$`);
    await pool.query(
      "CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON jobs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit()",
    );
  };

  it("refuses the flood with 429 overloaded while commits are slow, serves a quiet organization, and accepts the flood again once they are fast", async () => {
    const accepted: string[] = [];
    // Five clients posting two jobs each, one after the other: their inserts commit apart, so the API gets several
    // samples of commit latency per round (the decision waits for ten within its window) however slow the machine.
    const flood = async () => {
      const answers: { status: number; body: any }[] = [];
      await Promise.all(
        Array.from({ length: 5 }, async () => {
          for (let i = 0; i < 2; i++) answers.push(await stack.post("/jobs", { type: "webhook", payload: { url: "https://example.com/h", payload: {} } }));
        }),
      );
      for (const a of answers) if (a.status === 202) accepted.push(a.body.id as string);
      return answers;
    };

    await slowCommits(true);
    let refusal: { status: number; body: any; headers?: unknown } | undefined;
    await waitFor(
      async () => {
        const answers = await flood();
        // Anything but accepted or overloaded is a broken test, not a slow machine.
        expect(answers.filter((a) => a.status !== 202 && a.status !== 429)).toEqual([]);
        refusal = answers.find((a) => a.status === 429);
        return refusal !== undefined;
      },
      "the flooding organization to be refused",
      60_000,
      0,
    );
    expect(refusal!.body.error.code).toBe("overloaded");
    expect(refusal!.body.error.message).toMatch(/committing slowly/);
    // Accepted until the slow commits were measured: what is refused is the flood's share, not everything at once.
    expect(accepted.length).toBeGreaterThan(0);

    // A quiet organization is still served while the flood goes on and commits stay slow.
    const quiet = await createOrg(stack.api.database.db, stack.api.deps.config);
    const { key } = await createApiKey(stack.api.database.db, quiet);
    let flooding = true;
    const floodRefusals: number[] = [];
    const background = (async () => {
      while (flooding) floodRefusals.push((await flood()).filter((a) => a.status === 429).length);
    })();
    const quietIds: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const res = await stack.api.request
          .post("/jobs")
          .set("X-API-Key", key)
          .send({ type: "webhook", payload: { url: "https://example.com/q", payload: {} } });
        expect(res.status).toBe(202);
        quietIds.push(res.body.id as string);
      }
    } finally {
      flooding = false;
      await background;
    }
    expect(floodRefusals.some((n) => n > 0)).toBe(true);
    expect((await stack.api.request.get("/readyz")).status).toBe(200);
    const metrics = (await stack.api.request.get("/metrics")).text;
    expect(metrics).toMatch(/^conveyor_jobs_refused_total\{reason="commit_latency"\} [1-9]/m);
    expect(metrics).not.toMatch(/^conveyor_jobs_refused_total\{reason="overloaded"\}/m);

    // Commits are fast again: once the slow ones leave the window, the flood is accepted again.
    await slowCommits(false);
    await waitFor(async () => (await flood()).every((a) => a.status === 202), "the flood to be accepted again", 60_000, 200);

    // Nothing accepted was lost: every accepted job of both organizations is stored.
    const { rows } = await stack.api.database.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[])", [[...accepted, ...quietIds]]);
    expect(rows[0].n).toBe(accepted.length + quietIds.length);
  }, 240_000);
});
