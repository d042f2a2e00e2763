// Transitions "progress reported" and "output appended" (docs/reference/events.md#progress-and-live-results): a running job's progress and output change no
// status, but they are job data announced as events (`job.progress`, `job.output`), so they are written here, with
// the other writers of events. Each call carries many jobs (the worker's live recorder batches a round of reports),
// and each job's write is fenced: an attempt that no longer owns its job changes nothing.
import type pg from "pg";
import { LIVE_EVENTS, type JobProgress } from "@conveyor/contracts";
import { EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "../core/job-sql";
import { announce } from "./sql";

/**
 * One job's latest progress, under its attempt's fence. `announce: false` stores it without a `job.progress` event
 * (an attempt's last report within a round of the previous event: its terminal event carries it, and the job keeps to
 * its rate of progress events).
 */
export type ProgressReport = { jobId: string; fence: string; progress: JobProgress; announce?: boolean };

/** One job's output append: its text and the byte offset it starts at (what the job stored before it). */
export type OutputAppend = { jobId: string; fence: string; offset: number; chunk: string };

/**
 * Sets each job's progress and announces it with a `job.progress` event (the job as it is now). Rows are locked in
 * id order, like every batched transition, so two batches never wait for each other in a cycle. Answers the ids of
 * the jobs written (the others are no longer this attempt's, or not processing).
 */
export async function recordProgress(db: pg.Pool | pg.PoolClient, reports: readonly ProgressReport[]): Promise<string[]> {
  if (reports.length === 0) return [];
  const { rows } = await db.query<{ id: string }>({
    name: "conveyor-record-progress",
    text: `WITH ${EVENT_BASE}, input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::boolean[]) AS i(id, fence, progress, announce)
     ), locked AS (
       SELECT j.id, i.progress, i.announce FROM jobs j JOIN input i ON i.id = j.id AND i.fence = j.fence
        WHERE j.status = 'processing'
        ORDER BY j.id FOR UPDATE OF j
     ), updated AS (
       UPDATE jobs SET progress = l.progress FROM locked l WHERE jobs.id = l.id
       RETURNING jobs.*
     ), announced AS (
       ${announce({ from: "(SELECT u.id, u.org_id, u.type, u::jobs AS job FROM updated u JOIN locked l ON l.id = u.id WHERE l.announce)", event: `'${LIVE_EVENTS.progress}'` })}
     )
     SELECT u.id, pg_notify('${EVENTS_CHANNEL}', '') FROM updated u`,
    values: [reports.map((r) => r.jobId), reports.map((r) => r.fence), reports.map((r) => JSON.stringify(r.progress)), reports.map((r) => r.announce ?? true)],
  });
  return rows.map((r) => r.id);
}

/** Bytes of output each job has stored (ctx.output's running total starts here for an attempt). */
export async function storedOutputBytes(db: pg.Pool | pg.PoolClient, jobIds: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ id: string; output_bytes: number }>("SELECT id, output_bytes FROM jobs WHERE id = ANY($1::uuid[])", [jobIds]);
  return new Map(rows.map((r) => [r.id, r.output_bytes]));
}

/**
 * Appends each chunk to its job's output (one row each, at its offset) and announces it with a `job.output` event:
 * the job as it is now, with `output: {offset, chunk}`. The caller has cut the chunks to the job's limit. A chunk
 * whose offset is not the job's stored length (another attempt wrote meanwhile) or whose fence is gone is dropped.
 * Answers the ids of the jobs written.
 */
export async function appendOutput(db: pg.Pool | pg.PoolClient, appends: readonly OutputAppend[]): Promise<string[]> {
  if (appends.length === 0) return [];
  const { rows } = await db.query<{ id: string }>({
    name: "conveyor-append-output",
    text: `WITH ${EVENT_BASE}, input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[]) AS i(id, fence, "offset", chunk)
     ), locked AS (
       SELECT j.id, i."offset", i.chunk FROM jobs j JOIN input i ON i.id = j.id AND i.fence = j.fence AND i."offset" = j.output_bytes
        WHERE j.status = 'processing'
        ORDER BY j.id FOR UPDATE OF j
     ), updated AS (
       UPDATE jobs SET output_bytes = l."offset" + octet_length(l.chunk) FROM locked l WHERE jobs.id = l.id
       RETURNING jobs.*
     ), stored AS (
       INSERT INTO job_output_chunks (job_id, "offset", chunk) SELECT l.id, l."offset", l.chunk FROM locked l JOIN updated u ON u.id = l.id
     ), announced AS (
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY u.id), u.org_id, u.id, '${LIVE_EVENTS.output}', now(),
              conveyor_job_data(u::jobs) || jsonb_build_object('output', jsonb_build_object('offset', l."offset", 'chunk', l.chunk))
         FROM updated u JOIN locked l ON l.id = u.id CROSS JOIN event_base e
        WHERE ${TENANT_JOB("u")}
     )
     SELECT u.id, pg_notify('${EVENTS_CHANNEL}', '') FROM updated u`,
    values: [appends.map((a) => a.jobId), appends.map((a) => a.fence), appends.map((a) => a.offset), appends.map((a) => a.chunk)],
  });
  return rows.map((r) => r.id);
}

/** The job's whole output as stored (its chunks in order), or null when the job is not the org's. */
export async function findJobOutput(db: pg.Pool | pg.PoolClient, orgId: string, jobId: string): Promise<{ output: string; bytes: number } | null> {
  const { rows } = await db.query<{ output: string | null; bytes: number }>(
    `SELECT (SELECT string_agg(c.chunk, '' ORDER BY c."offset") FROM job_output_chunks c WHERE c.job_id = j.id) AS output, j.output_bytes AS bytes
       FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [jobId, orgId],
  );
  const row = rows[0];
  return row ? { output: row.output ?? "", bytes: row.bytes } : null;
}
