// What a replay copies (docs/reference/lifecycle.md#steering): type, payload, max_retries and priority of the org's final jobs. Read in
// pieces bounded in rows and payload bytes, so replaying 10,000 jobs of 1 MiB payloads never holds them all.
import type pg from "pg";
import { FINAL_STATUSES } from "@conveyor/contracts";
import { TENANT_JOB } from "../core/job-sql";

export type ReplaySource = {
  id: string;
  type: string;
  payloadJson: string;
  maxRetries: number;
  priority: number;
  /** How it ran alongside others (docs/reference/flow-control.md#flow-control): a replay runs the same way. */
  concurrencyKey: string | null;
  concurrencyLimit: number | null;
  rateLimit: string | null;
  timeoutMs: number | null;
  /**
   * What it depended on (docs/reference/lifecycle.md#dependencies), each dependency replaced by its newest replay when it has one: replaying a
   * failed dependency and then its dependent runs the dependent after the dependency's replay.
   */
  dependsOn: string[];
  runOnDependencyFailure: boolean;
};

/** Pieces hold at most this many jobs. */
const PIECE_ROWS = 1000;

/**
 * The final jobs of the org among `ids` (oldest first), as pieces of at most 1,000 jobs and about `maxBytes` of
 * payload (a single larger payload is a piece of its own). Ids of other orgs, internal or live jobs are skipped.
 */
export async function* replaySources(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; ids: readonly string[]; maxBytes: number },
): AsyncGenerator<ReplaySource[]> {
  if (options.ids.length === 0) return;
  const condition = `j.id = ANY($1::uuid[]) AND j.org_id = $2 AND ${TENANT_JOB("j")} AND j.status = ANY($3::job_status[])`;
  const { rows: sizes } = await db.query<{ id: string; bytes: number }>(
    `SELECT j.id, octet_length(j.payload::text) AS bytes FROM jobs j WHERE ${condition} ORDER BY j.id`,
    [options.ids, options.orgId, FINAL_STATUSES],
  );
  let piece: string[] = [];
  let bytes = 0;
  const read = async (ids: string[]) => {
    const { rows } = await db.query<{
      id: string;
      type: string;
      payload: string;
      max_retries: number;
      priority: number;
      concurrency_key: string | null;
      concurrency_limit: number | null;
      rate_limit: string | null;
      timeout_ms: number | null;
      depends_on: string[] | null;
      run_on_dependency_failure: boolean;
    }>(
      `SELECT j.id, j.type, j.payload::text AS payload, j.max_retries, j.priority, j.concurrency_key, j.concurrency_limit, j.rate_limit, j.timeout_ms,
              j.run_on_dependency_failure,
              CASE WHEN j.dependencies > 0 THEN (
                SELECT array_agg(coalesce((SELECT r.id FROM jobs r WHERE r.replay_of = d.depends_on_id AND r.org_id = j.org_id ORDER BY r.id DESC LIMIT 1),
                                          d.depends_on_id)::text)
                  FROM job_dependencies d WHERE d.job_id = j.id) END AS depends_on
         FROM jobs j WHERE ${condition} ORDER BY j.id`,
      [ids, options.orgId, FINAL_STATUSES],
    );
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      payloadJson: r.payload,
      maxRetries: r.max_retries,
      priority: r.priority,
      concurrencyKey: r.concurrency_key,
      concurrencyLimit: r.concurrency_limit,
      rateLimit: r.rate_limit,
      timeoutMs: r.timeout_ms,
      dependsOn: r.depends_on ?? [],
      runOnDependencyFailure: r.run_on_dependency_failure,
    }));
  };
  for (const size of sizes) {
    if (piece.length && (piece.length >= PIECE_ROWS || bytes + size.bytes > options.maxBytes)) {
      yield await read(piece);
      piece = [];
      bytes = 0;
    }
    piece.push(size.id);
    bytes += size.bytes;
  }
  if (piece.length) yield await read(piece);
}
