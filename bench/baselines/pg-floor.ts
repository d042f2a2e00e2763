// The floor: what Postgres alone must do per job for the guarantees of docs/reference/lifecycle.md#lifecycle/docs/reference/events.md#events, batched — insert the job, its
// queue row and its job.created event; claim it with its job.started event; complete it with its job.succeeded
// event and the queue row's delete. No product code, no foreign keys, events with empty data: a ceiling to compare
// the worker's Postgres cost with, on the same server (after shared/bench/pg-floor.mjs).
import pg from "pg";

export type FloorOptions = { url: string; jobs: number; batch: number; connections: number };

/** Creates the floor's tables in a database of its own on the server of `url`. */
export async function prepareFloor(url: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query("DROP DATABASE IF EXISTS conveyor_floor WITH (FORCE)");
  await admin.query("CREATE DATABASE conveyor_floor");
  await admin.end();
  const floorUrl = url.replace(/\/[^/?]*(\?|$)/, "/conveyor_floor$1");
  const client = new pg.Client({ connectionString: floorUrl });
  await client.connect();
  await client.query(`
    CREATE TABLE jobs (id uuid PRIMARY KEY, org_id uuid NOT NULL, type text NOT NULL, status text NOT NULL, payload jsonb NOT NULL,
      retries int NOT NULL DEFAULT 0, max_retries int NOT NULL DEFAULT 0, fence text, created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz, result jsonb);
    CREATE INDEX ON jobs (org_id, id DESC);
    CREATE TABLE job_queue (job_id uuid PRIMARY KEY, org_id uuid NOT NULL, type text NOT NULL, priority int NOT NULL DEFAULT 5,
      due_at timestamptz NOT NULL DEFAULT now(), dispatched_at timestamptz);
    CREATE INDEX ON job_queue (type, priority DESC, due_at) WHERE dispatched_at IS NULL;
    CREATE TABLE events (id bigserial PRIMARY KEY, org_id uuid NOT NULL, job_id uuid NOT NULL, type text NOT NULL,
      time timestamptz NOT NULL DEFAULT now(), data jsonb NOT NULL);
    CREATE INDEX ON events (org_id, id);`);
  await client.end();
  return floorUrl;
}

/**
 * Inserts, claims and completes `jobs` jobs; resolves when every one is done, with the connections still open (a
 * backend's CPU time can only be read while it lives): call `close()` after measuring.
 */
export async function runFloor(options: FloorOptions): Promise<{ close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.connections + 1 });
  const org = "0193a000-0000-7000-8000-000000000001";
  // Every connection opened before the clock starts, so none ends (taking its CPU time with it) while measured.
  const clients = await Promise.all(Array.from({ length: options.connections + 1 }, () => pool.connect()));
  for (const client of clients) client.release();
  try {
    for (let i = 0; i < options.jobs; i += 1000) {
      await pool.query(
        `WITH j AS (INSERT INTO jobs (id, org_id, type, status, payload)
                    SELECT gen_random_uuid(), $1, 'noop', 'pending', '{"n":1}'::jsonb FROM generate_series(1, $2) RETURNING id, org_id),
              q AS (INSERT INTO job_queue (job_id, org_id, type) SELECT id, org_id, 'noop' FROM j)
         INSERT INTO events (org_id, job_id, type, data) SELECT org_id, id, 'job.created', '{}'::jsonb FROM j`,
        [org, Math.min(1000, options.jobs - i)],
      );
    }
    const loop = async () => {
      for (;;) {
        const { rows } = await pool.query<{ id: string }>(
          `WITH take AS (SELECT job_id FROM job_queue WHERE type = 'noop' AND dispatched_at IS NULL ORDER BY priority DESC, due_at LIMIT $1 FOR UPDATE SKIP LOCKED),
                m AS (UPDATE job_queue q SET dispatched_at = now() FROM take WHERE q.job_id = take.job_id RETURNING q.job_id),
                c AS (UPDATE jobs j SET status = 'processing', fence = 'f', updated_at = now() FROM m WHERE j.id = m.job_id RETURNING j.id, j.org_id, j.payload),
                e AS (INSERT INTO events (org_id, job_id, type, data) SELECT org_id, id, 'job.started', '{}'::jsonb FROM c)
           SELECT id FROM c`,
          [options.batch],
        );
        if (rows.length === 0) return;
        await pool.query(
          `WITH d AS (UPDATE jobs j SET status = 'done', fence = NULL, finished_at = now(), updated_at = now(), result = '{}'::jsonb
                       WHERE j.id = ANY($1::uuid[]) AND j.fence = 'f' RETURNING j.id, j.org_id),
                q AS (DELETE FROM job_queue q USING d WHERE q.job_id = d.id)
           INSERT INTO events (org_id, job_id, type, data) SELECT org_id, id, 'job.succeeded', '{}'::jsonb FROM d`,
          [rows.map((r) => r.id)],
        );
      }
    };
    await Promise.all(Array.from({ length: options.connections }, loop));
    return { close: () => pool.end() };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
