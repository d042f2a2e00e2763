// The one path that gives back to Redis the live jobs it should hold and does not: jobs the dispatcher handed over
// that a Redis restart without persistence or a FLUSHALL wiped, jobs a dispatcher marked and died before handing
// over, running jobs whose worker's delivery vanished. Used by a new leader for its predecessor's hand-overs and by
// the reconciler's sweeps. Postgres decides what must run; Redis is refilled from it.
import type pg from "pg";
import type { LiveStatus } from "@conveyor/contracts";
import { returnToLine } from "@conveyor/db";
import { jobKey, type JobQueues, type RedisClient } from "@conveyor/queue";

/** A job Postgres says Redis should hold: handed over (pending), or running (processing). */
export type HandedOverJob = { id: string; type: string; status: LiveStatus };

export type RedisRepairDeps = { pool: pg.Pool; redis: RedisClient; queues: JobQueues; prefix: string };

/**
 * Restores the jobs among `jobs` that Redis does not hold: a pending one goes back in line (the dispatcher hands it
 * over again, in its turn); a running one is put back on its queue directly, so another worker takes its attempt
 * over. Answers how many were restored.
 */
export async function restoreMissing(deps: RedisRepairDeps, jobs: readonly HandedOverJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const pipeline = deps.redis.pipeline();
  for (const job of jobs) pipeline.exists(jobKey(deps.prefix, job.type, job.id));
  const results = (await pipeline.exec()) ?? [];
  const missing = jobs.filter((_, i) => results[i]?.[1] === 0);
  if (missing.length === 0) return 0;
  const running = missing.filter((job) => job.status === "processing");
  await deps.queues.enqueue(running.map((job) => ({ id: job.id, type: job.type })));
  const waiting = missing.filter((job) => job.status === "pending").map((job) => job.id);
  return running.length + (await returnToLine(deps.pool, waiting));
}
