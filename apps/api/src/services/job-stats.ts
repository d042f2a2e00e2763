// GET /jobs/stats: what the console's overview charts (docs/reference/tenants.md#the-console): jobs created and finished per minute over the last
// hour, or per 15 minutes over the last day, in all and by type, the share of finished jobs that failed, and the queue
// right now. Internal jobs are never counted.
import { countJobsByBucket, countQueue, inReadSnapshot, rollJobStats, statsRolledUntil, type JobCounts, type QueueCounts } from "@conveyor/db";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type StatsWindow = "hour" | "day";

const WINDOWS: Record<StatsWindow, { bucketMs: number; buckets: number }> = {
  hour: { bucketMs: 60_000, buckets: 60 },
  day: { bucketMs: 15 * 60_000, buckets: 96 },
};

/**
 * How long after its timestamp a job's creation or finish is surely committed. Minutes are counted into job_stats
 * only this long after they end; what is younger is counted from the jobs on each request.
 */
const COMMIT_SLACK_MS = 30_000;
/** Counting into job_stats happens in steps of at least this much, not on every request. */
const ROLL_STEP_MS = 5_000;

export type StatsBucket = JobCounts & { start: string; by_type: Record<string, JobCounts> };
export type JobStatsJson = {
  window: StatsWindow;
  bucket_seconds: number;
  buckets: StatsBucket[];
  failure_rate: number | null;
  queue: QueueCounts;
};

const zero = (): JobCounts => ({ created: 0, done: 0, failed: 0, cancelled: 0 });

/** Where a window of `buckets` buckets of `bucketMs` ending now starts: the last bucket is the one now falls in. */
function windowStart(nowMs: number, bucketMs: number, buckets: number): number {
  return Math.floor(nowMs / bucketMs) * bucketMs - (buckets - 1) * bucketMs;
}

export async function jobStats(
  input: { caller: Caller; window: StatsWindow },
  { db, clock, reads }: Pick<ServiceDeps, "db" | "clock" | "reads">,
): Promise<JobStatsJson> {
  const { caller, window } = input;
  const { bucketMs, buckets } = WINDOWS[window];
  const nowMs = clock.now().getTime();
  const start = windowStart(nowMs, bucketMs, buckets);

  // Count what is old enough into job_stats first (nothing, most of the time), from the start of the longest window.
  const day = WINDOWS.day;
  const rollFrom = new Date(windowStart(nowMs, day.bucketMs, day.buckets));
  const rollUntil = Math.floor((nowMs - COMMIT_SLACK_MS) / ROLL_STEP_MS) * ROLL_STEP_MS;
  const rolledUntil = await rollJobStats(db.pool, { orgId: caller.orgId, from: rollFrom, until: new Date(rollUntil) });

  const reader = await reads.poolFor(caller);
  const counts = { orgId: caller.orgId, start: new Date(start), bucketMs, buckets };
  const [rows, queue] =
    reader === db.pool
      ? await Promise.all([countJobsByBucket(db.pool, { ...counts, rolledUntil }), countQueue(db.pool, { orgId: caller.orgId, now: new Date(nowMs) })])
      : // A replica may not have replayed the roll yet: its own watermark and its job_stats, read in one snapshot, agree.
        await inReadSnapshot(reader, async (client) => {
          const replicaRolledUntil = await statsRolledUntil(client, caller.orgId);
          const byBucket = await countJobsByBucket(client, { ...counts, rolledUntil: replicaRolledUntil });
          return [byBucket, await countQueue(client, { orgId: caller.orgId, now: new Date(nowMs) })] as const;
        });

  const series: StatsBucket[] = Array.from({ length: buckets }, (_, i) => ({ start: new Date(start + i * bucketMs).toISOString(), ...zero(), by_type: {} }));
  let done = 0;
  let failed = 0;
  for (const row of rows) {
    const bucket = series[row.bucket];
    if (!bucket) continue;
    const byType = (bucket.by_type[row.type] ??= zero());
    for (const key of ["created", "done", "failed", "cancelled"] as const) {
      bucket[key] += row[key];
      byType[key] += row[key];
    }
    done += row.done;
    failed += row.failed;
  }
  return {
    window,
    bucket_seconds: bucketMs / 1000,
    buckets: series,
    failure_rate: done + failed === 0 ? null : failed / (done + failed),
    queue,
  };
}
