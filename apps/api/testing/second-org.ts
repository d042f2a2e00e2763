// Every tenant-scoped test has a second organization whose data must stay untouched (STYLE.md, "Tests"). This
// one has an owner, an API key and one finished job with a result and log lines, written straight to the
// database: no queue, worker, counter or metric sees it being made. A test takes what the org sees through the
// API as the baseline, and after each test checks that the org still sees exactly that, that no other org's job
// shows in its lists, and that another org's credential cannot read its job. A query that forgot its org
// filter, or a worker that wrote to the wrong job, fails one of these.
import { newId } from "@conveyor/db";
import type { DatabaseWithPrisma } from "@conveyor/db/prisma";
import { createApiKey, createUser } from "./factories";

/** GET `path` with `headers` from the API under test (over supertest, fetch or plain http). */
export type ApiGet = (path: string, headers: Record<string, string>) => Promise<{ status: number; body: unknown }>;

export type SecondOrg = {
  orgId: string;
  apiKey: string;
  /** Its finished job. */
  jobId: string;
  /** Takes the baseline through `get`: the org's job list (streamed and paged), its job and the job's logs. */
  watch(get: ApiGet): Promise<void>;
  /**
   * Fails unless the org reads exactly the baseline, none of the other orgs' jobs is in its lists, and a
   * credential of another org (`intruder`: its request headers) gets 404 for the org's job and its logs.
   */
  expectUntouched(intruder: Record<string, string>): Promise<void>;
};

type View = Record<string, { status: number; body: unknown }>;

export async function createSecondOrg(db: DatabaseWithPrisma, name = "Second org"): Promise<SecondOrg> {
  const orgId = newId();
  await db.prisma.organization.create({ data: { id: orgId, name } });
  const { userId } = await createUser(db, "second-org-owner");
  await db.prisma.membership.create({ data: { orgId, userId, role: "owner" } });
  const { key: apiKey } = await createApiKey(db, { orgId, userId }, "second org key");

  const jobId = newId();
  const at = (seconds: number) => new Date(Date.now() - 60_000 + seconds * 1000);
  await db.prisma.job.create({
    data: {
      id: jobId,
      orgId,
      type: "webhook",
      status: "done",
      payload: { url: "https://hooks.second-org.example/in", payload: { invoice: "SO-1" } },
      retries: 1,
      maxRetries: 2,
      result: { status: 200, webhook_id: `msg_${jobId}`, duration_ms: 42 },
      createdAt: at(0),
      updatedAt: at(3),
      logs: {
        create: [
          { attempt: 1, level: "info", message: "Attempt 1 of 3 started.", timestamp: at(1) },
          { attempt: 1, level: "warn", message: "Attempt 1 failed: hooks.second-org.example answered 503. Retry 1 of 2.", timestamp: at(1) },
          { attempt: 2, level: "info", message: "Attempt 2 of 3 started.", timestamp: at(2) },
          { attempt: 2, level: "info", message: "Attempt 2 succeeded in 42 ms.", timestamp: at(3) },
        ],
      },
    },
  });

  const own = { "X-API-Key": apiKey };
  const paths = { list: "/jobs", page: "/jobs?limit=1000", job: `/jobs/${jobId}`, logs: `/jobs/${jobId}/logs` };
  let watched: { get: ApiGet; baseline: View } | undefined;

  async function read(get: ApiGet): Promise<View> {
    const entries = await Promise.all(Object.entries(paths).map(async ([what, path]) => [what, await get(path, own)] as const));
    return Object.fromEntries(entries.map(([what, { status, body }]) => [what, { status, body }]));
  }

  return {
    orgId,
    apiKey,
    jobId,
    async watch(get) {
      const baseline = await read(get);
      if (baseline.job!.status !== 200) throw new Error(`the second org cannot read its own job: ${JSON.stringify(baseline.job)}`);
      watched = { get, baseline };
    },
    async expectUntouched(intruder) {
      if (!watched) throw new Error("expectUntouched() before watch(): there is no baseline to compare with");
      const { get, baseline } = watched;
      const now = await read(get);

      const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM jobs WHERE org_id <> $1", [orgId]);
      const foreign = new Set(rows.map((row) => row.id));
      for (const what of ["list", "page"] as const) {
        const listed = Array.isArray(now[what]!.body) ? (now[what]!.body as { id: string }[]) : [];
        expect({ path: paths[what], otherOrgsJobs: listed.map((job) => job.id).filter((id) => foreign.has(id)) }).toEqual({
          path: paths[what],
          otherOrgsJobs: [],
        });
      }
      expect(now).toEqual(baseline);

      for (const path of [paths.job, paths.logs]) {
        const { status } = await get(path, intruder);
        expect({ path, intruderStatus: status }).toEqual({ path, intruderStatus: 404 });
      }
    },
  };
}

/** An ApiGet over HTTP, for an API that runs as its own process at `baseUrl`. */
export function httpGet(baseUrl: string): ApiGet {
  return async (path, headers) => {
    const res = await fetch(`${baseUrl}${path}`, { headers });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
}
