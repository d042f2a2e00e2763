// The Queues page's charts (issue 38): per job type the organization can use, attempts started and their wait from
// due to start, minute by minute over the last hour, as dense series (one value per minute) a chart draws as they are.
import { readQueueActivity } from "@conveyor/db";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type QueueActivitySeries = {
  type: string;
  /** Attempts started in each minute; null for a minute before `covered_from` (unknown, not quiet). */
  started: (number | null)[];
  /** Their mean and 95th-percentile wait from due to start, in ms; null for a minute without a start. */
  wait_avg_ms: (number | null)[];
  wait_p95_ms: (number | null)[];
};
export type QueueActivityJson = { minutes: string[]; covered_from: string | null; queues: QueueActivitySeries[] };

export async function getQueueActivity(options: { caller: Caller }, deps: Pick<ServiceDeps, "reads" | "catalog">): Promise<QueueActivityJson> {
  const { caller } = options;
  const [activity, types] = await Promise.all([readQueueActivity(await deps.reads.poolFor(caller), caller.orgId), deps.catalog.knownTypes(caller.orgId)]);
  const { minutes, covered_from: coveredFrom } = activity;
  const index = new Map(minutes.map((minute, i) => [minute, i]));
  const unknown = (i: number) => coveredFrom !== null && minutes[i]! < coveredFrom;
  const series = new Map<string, QueueActivitySeries>();
  const seriesOf = (type: string) => {
    let found = series.get(type);
    if (!found) {
      found = {
        type,
        started: minutes.map((_, i) => (unknown(i) ? null : 0)),
        wait_avg_ms: minutes.map(() => null),
        wait_p95_ms: minutes.map(() => null),
      };
      series.set(type, found);
    }
    return found;
  };
  // Every type the org can use has a row on the Queues page, so each gets a series, quiet or not; a type whose
  // events exist but is no longer known (a plugin removed) still shows what it did.
  for (const type of [...types].sort()) seriesOf(type);
  for (const row of activity.rows) {
    const i = index.get(row.minute);
    if (i === undefined) continue;
    const target = seriesOf(row.type);
    target.started[i] = row.started;
    target.wait_avg_ms[i] = row.wait_avg_ms;
    target.wait_p95_ms[i] = row.wait_p95_ms;
  }
  return { minutes, covered_from: coveredFrom, queues: [...series.values()] };
}
