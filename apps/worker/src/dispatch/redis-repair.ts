// The one path that gives back to Redis the live jobs it should hold and does not: envelopes the dispatcher handed
// over that a Redis restart without persistence or a FLUSHALL wiped, envelopes a dispatcher marked and died before
// handing over, running jobs whose worker's envelope vanished. Used by a new leader for its predecessor's hand-overs
// and by the reconciler's sweeps. Postgres decides what must run; Redis is refilled from it.
import type pg from "pg";
import type { LiveStatus } from "@conveyor/contracts";
import { newId, returnToLine, setEnvelope, stillInEnvelopes } from "@conveyor/db";
import { envelopeKey, type Envelope, type JobQueues, type RedisClient } from "@conveyor/queue";

/** A job Postgres says Redis should hold in an envelope: handed over (pending), or running (processing). */
export type HandedOverJob = { id: string; type: string; status: LiveStatus; envelopeId: string | null };

export type RedisRepairDeps = { pool: pg.Pool; redis: RedisClient; queues: JobQueues; prefix: string };

/**
 * Restores the jobs among `jobs` whose envelope Redis does not hold (a completed envelope counts as missing: its jobs
 * should have ended): a pending one goes back in line (the dispatcher hands it over again, in its turn); running ones
 * are put back on their queue in their envelope, so another worker takes their attempts over. Answers how many were
 * restored.
 */
export async function restoreMissing(deps: RedisRepairDeps, jobs: readonly HandedOverJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const envelopes = [...new Map(jobs.flatMap((job) => (job.envelopeId ? [[`${job.type} ${job.envelopeId}`, job] as const] : []))).values()];
  const pipeline = deps.redis.pipeline();
  for (const job of envelopes) pipeline.exists(envelopeKey(deps.prefix, job.type, job.envelopeId!));
  const results = (await pipeline.exec()) ?? [];
  const held = new Set(envelopes.filter((_, i) => results[i]?.[1] === 1).map((job) => job.envelopeId));
  const gone = jobs.filter((job) => !job.envelopeId || !held.has(job.envelopeId));
  // Read again now that Redis has answered: a job seen in an envelope that has since completed moved on (its outcome
  // was recorded first), and is not lost; only jobs still in the envelope Redis no longer holds are.
  const still = await stillInEnvelopes(
    deps.pool,
    gone.flatMap((job) => (job.envelopeId ? [{ id: job.id, envelopeId: job.envelopeId }] : [])),
  );
  const missing = gone.filter((job) => !job.envelopeId || still.has(job.id));
  if (missing.length === 0) return 0;

  // Running jobs: their envelope again, under its own id (a job that had none — it started before envelopes — gets one).
  const running = new Map<string, Envelope & { jobIds: string[] }>();
  const unassigned = new Map<string, string[]>();
  for (const job of missing.filter((j) => j.status === "processing")) {
    const id = job.envelopeId ?? `new ${job.type}`;
    let envelope = running.get(id);
    if (!envelope) running.set(id, (envelope = { id: job.envelopeId ?? newId(), type: job.type, jobIds: [] }));
    envelope.jobIds.push(job.id);
    if (!job.envelopeId) unassigned.set(envelope.id, envelope.jobIds);
  }
  for (const [envelopeId, jobIds] of unassigned) await setEnvelope(deps.pool, jobIds, envelopeId);
  await deps.queues.enqueue([...running.values()]);
  const waiting = missing.filter((job) => job.status === "pending").map((job) => job.id);
  return [...running.values()].reduce((n, e) => n + e.jobIds.length, 0) + (await returnToLine(deps.pool, waiting));
}
