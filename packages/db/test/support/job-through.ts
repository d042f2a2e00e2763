// A job written by the transitions as they are, for the migration tests: created, then claimed and ended as `moves`
// says, attempt after attempt (fences `fence-<attempt>`).
import type pg from "pg";
import { claimJobs, findJob, findJobAttempts, findJobLogs, insertJobs, newId, readEventTexts, writeOutcomes, type NewJob } from "../../src";

export type Move = "start" | "done" | "retry" | "fail";

export async function jobThrough(
  pool: pg.Pool,
  orgId: string,
  moves: readonly Move[],
  options: { job?: Partial<NewJob>; result?: string; error?: string } = {},
): Promise<string> {
  const id = newId();
  await insertJobs(pool, [{ id, orgId, type: "email", payloadJson: '{"to":"a@b.c"}', maxRetries: 2, createdAt: new Date(), ...options.job }]);
  let attempt = 0;
  for (const move of moves) {
    if (move === "start") {
      attempt += 1;
      await claimJobs(pool, [{ id, fence: `fence-${attempt}` }]);
      continue;
    }
    const status = move === "done" ? "done" : move === "fail" ? "failed" : "pending";
    const applied = await writeOutcomes(
      pool,
      [{ jobId: id, attempt, level: "info", message: `attempt ${attempt}`, timestamp: new Date() }],
      [
        {
          id,
          fence: `fence-${attempt}`,
          status,
          retries: move === "retry" ? attempt : attempt - 1,
          result: move === "done" ? (options.result ?? '{"sent":true}') : null,
          error: move === "done" ? null : (options.error ?? "it broke"),
          runAt: move === "retry" ? new Date() : null,
        },
      ],
    );
    if (applied.get(id) !== status) throw new Error(`the outcome ${status} of ${id} was not applied`);
  }
  return id;
}

/** What a client reads of `ids`, the jobs of `orgId`: each job, its logs and attempts, and the organization's events. */
export async function readsOf(pool: pg.Pool, orgId: string, ids: readonly string[]) {
  return {
    jobs: await Promise.all(ids.map((id) => findJob(pool, orgId, id))),
    logs: await Promise.all(ids.map((id) => findJobLogs(pool, orgId, id))),
    attempts: await Promise.all(ids.map((id) => findJobAttempts(pool, orgId, id))),
    events: (await readEventTexts(pool, { orgId, after: 0n, limit: 1000 })).events,
  };
}
