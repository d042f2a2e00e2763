// Transition "result amended": a provider's callback adds to a job's result after the fact (M-Pesa's result.callback
// arrives after the push's job succeeded). The status does not change; the change is announced as `job.updated`, so
// streams and webhook endpoints learn the payment's outcome like any other change.
import type pg from "pg";
import { EVENT_BASE, EVENTS_CHANNEL } from "../core/job-sql";
import { announce, eventOf } from "./sql";

/** Merges `fields` into the job's result object (a non-object result is replaced by one), with its event. */
export async function amendResult(db: pg.Pool | pg.PoolClient, options: { jobId: string; fields: Record<string, unknown>; at: Date }): Promise<void> {
  await db.query(
    `WITH ${EVENT_BASE}, amended AS (
       UPDATE jobs SET result = (CASE WHEN jsonb_typeof(result) = 'object' THEN result ELSE '{}'::jsonb END) || $2::jsonb, updated_at = $3
        WHERE id = $1::uuid
       RETURNING jobs.*
     ), announced AS (
       ${announce({ from: "(SELECT a.id, a.org_id, a.type, a::jobs AS job FROM amended a)", event: eventOf("resultAmended") })}
     )
     SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM amended`,
    [options.jobId, JSON.stringify(options.fields), options.at],
  );
}
