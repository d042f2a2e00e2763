// Transitions of durable steps (docs/reference/lifecycle.md#waitpoints-and-durable-steps): "step succeeded" stores a ctx.step's result, and "sleep/wait over" marks a
// replayed ctx.sleep or ctx.waitFor done — each under the attempt's fence, so a stale attempt (one a take-over
// replaced) never writes a step. What a later attempt replays is read with readSteps. The transitions that end an
// attempt for a sleep or a wait are in suspend.ts. Replaying a job (docs/reference/lifecycle.md#steering) creates a new job: it starts with no steps.
import type pg from "pg";

export type StepRow = {
  name: string;
  kind: "step" | "sleep" | "wait";
  status: "succeeded" | "sleeping" | "waiting" | "completed" | "failed";
  attempt: number;
  /** A step's stored result (JSON text), null when it returned nothing. */
  resultJson: string | null;
  wakeAt: Date | null;
  waitpointId: string | null;
};

/** The job's steps as its next attempt replays them. */
export async function readSteps(db: pg.Pool | pg.PoolClient, jobId: string): Promise<Map<string, StepRow>> {
  const { rows } = await db.query<{
    name: string;
    kind: StepRow["kind"];
    status: StepRow["status"];
    attempt: number;
    result: string | null;
    wake_at: Date | null;
    waitpoint_id: string | null;
  }>(`SELECT name, kind, status, attempt, result::text AS result, wake_at, waitpoint_id FROM job_steps WHERE job_id = $1`, [jobId]);
  return new Map(
    rows.map((r) => [
      r.name,
      { name: r.name, kind: r.kind, status: r.status, attempt: r.attempt, resultJson: r.result, wakeAt: r.wake_at, waitpointId: r.waitpoint_id },
    ]),
  );
}

/**
 * Transition "step succeeded": stores a step's result while the attempt still owns the job. False when it does not
 * (its fence is gone): the result is not stored and the attempt must stop.
 */
export async function recordStep(
  db: pg.Pool,
  step: { jobId: string; fence: string; name: string; attempt: number; resultJson: string | null; startedAt: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO job_steps (job_id, name, kind, status, attempt, result, started_at, finished_at)
     SELECT j.id, $2, 'step', 'succeeded', $4, $5::jsonb, $6, now() FROM jobs j WHERE j.id = $1 AND j.fence = $3 AND j.status = 'processing'
     ON CONFLICT (job_id, name) DO NOTHING`,
    [step.jobId, step.name, step.fence, step.attempt, step.resultJson, step.startedAt],
  );
  return rowCount === 1;
}

/** Transition "sleep/wait over": a replayed sleep or wait is done (completed), or its waitpoint did not complete (failed). */
export async function finishStep(db: pg.Pool, step: { jobId: string; fence: string; name: string; status: "completed" | "failed" }): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE job_steps s SET status = $4, finished_at = coalesce(s.finished_at, now())
       FROM jobs j WHERE s.job_id = $1 AND s.name = $2 AND j.id = s.job_id AND j.fence = $3 AND j.status = 'processing'`,
    [step.jobId, step.name, step.fence, step.status],
  );
  return rowCount === 1;
}
