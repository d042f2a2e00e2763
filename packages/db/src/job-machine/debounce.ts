// Transition "debounced" (docs/reference/flow-control.md#flow-control): a job with a debounce key waits `debounce_ms` before it is due; while it has
// not been handed over, a new job of the same type and key replaces its payload (and its retries and priority)
// and moves its start to now + `debounce_ms` — a trailing debounce. Once handed over, the key is free (hand-over
// clears it from the queue row) and the next post creates a new job. Announced as `job.updated`.
import type pg from "pg";
import { searchValues } from "@conveyor/contracts";
import { isUniqueViolation } from "../core/errors";
import { EVENT_BASE, EVENTS_CHANNEL } from "../core/job-sql";
import { inTransaction } from "../core/transaction";
import { insertJobs, type CreationGuard, type NewJob } from "./create";
import { announce, eventOf } from "./sql";

export type Debounced = { id: string; replaced: boolean };

/**
 * Creates `job` (due after `debounceMs`) or replaces the waiting job holding its key. Of concurrent posts with one
 * key, one creates the job and the others replace it in turn (the queue row's unique key and its row lock order
 * them): the last one accepted is the payload that runs.
 */
export async function debounceJob(
  pool: pg.Pool,
  job: NewJob & { debounceKey: string },
  debounceMs: number,
  /** Runs after a new job's insert (not after a replacement, which creates nothing); throwing rolls it back. */
  guard?: CreationGuard,
): Promise<Debounced> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ id: string }>(
          `WITH ${EVENT_BASE}, target AS (
             SELECT q.job_id FROM job_queue q
              WHERE q.org_id = $1 AND q.type = $2 AND q.debounce_key = $3
                FOR UPDATE
           ), replaced AS (
             UPDATE jobs j SET payload = $4::jsonb, max_retries = $5, priority = $6,
                               run_at = now() + $7 * interval '1 millisecond', updated_at = now()
               FROM target t WHERE j.id = t.job_id AND j.status = 'pending'
             RETURNING j.*
           ), requeued AS (
             UPDATE job_queue q SET due_at = r.run_at, priority = r.priority FROM replaced r WHERE q.job_id = r.id
           ), searchable AS (
             INSERT INTO job_search (job_id, org_id, search_values)
             SELECT r.id, r.org_id, ARRAY(SELECT jsonb_array_elements_text($8::jsonb)) || right(r.id::text, 8) FROM replaced r
             ON CONFLICT (job_id) DO UPDATE SET search_values = EXCLUDED.search_values
           ), announced AS (
             ${announce({ from: "(SELECT r.id, r.org_id, r.type, r::jobs AS job FROM replaced r)", event: eventOf("debounced") })}
           )
           SELECT id, pg_notify('${EVENTS_CHANNEL}', '') FROM replaced`,
          [
            job.orgId,
            job.type,
            job.debounceKey,
            job.payloadJson,
            job.maxRetries,
            job.priority ?? 5,
            debounceMs,
            JSON.stringify(searchValues(job.payload ?? JSON.parse(job.payloadJson))),
          ],
        );
        if (rows[0]) {
          return { id: rows[0].id, replaced: true };
        }
        await insertJobs(client, [{ ...job, runAt: new Date(job.createdAt.getTime() + debounceMs) }]);
        if (guard) await guard(client);
        return { id: job.id, replaced: false };
      });
    } catch (error) {
      // Another post created the job with this key meanwhile: replace it instead.
      if (isUniqueViolation(error) && attempt < 5) continue;
      throw error;
    }
  }
}
