// The one SQL builder for "the org's jobs matching a filter" (docs/reference/lifecycle.md#steering): pages, streams and the selection of a
// bulk action all start from jobsMatching(), so a filter means the same everywhere and no query forgets the
// org or lets an internal job through.
import type pg from "pg";
import { FINAL_STATUSES, type JobFilter, type JobStatus } from "@conveyor/contracts";
import { isUuid } from "../core/ids";
import { DUE_LATER, TENANT_JOB } from "../core/job-sql";

/**
 * What a search `q` looks for (issue 23): the value as given (a payload value, or a job's 8-character short id, which
 * is among its search values); a job id; written `field:value`, that value under a key named `field` (or at that
 * dotted path) in the payload; and, ending in `*` after at least PREFIX_MIN_LENGTH characters, any value starting
 * with what comes before the `*` (`prefix`; in a field-scoped search, `field.prefix`). Every reading is tried; a job
 * matching any of them is found (a value that is literally `INV-20*` starts with `INV-20`, so it is found too).
 */
export type SearchTerms = { values: string[]; prefix?: string; jobId?: string; field?: { name: string; value: string; prefix?: string } };

const FIELD_SCOPED = /^([A-Za-z_][A-Za-z0-9_.-]{0,99}):(.+)$/s;
const SHORT_ID = /^[0-9A-Fa-f]{8}$/;
/**
 * The shortest prefix searched as one: a GIN partial match reads every index entry starting with it, and 1 or 2
 * characters (`I*`, `12*`) start a large part of all values, so the search would read much of the index to list a
 * page. Shorter ones are only the literal value (`I*`).
 */
export const PREFIX_MIN_LENGTH = 3;

function prefixOf(text: string): string | undefined {
  if (!text.endsWith("*")) return undefined;
  const prefix = text.slice(0, -1);
  return [...prefix].length >= PREFIX_MIN_LENGTH ? prefix : undefined;
}

export function searchTerms(q: string): SearchTerms {
  const values = [q];
  // Short ids are stored as the console shows them, in lower case.
  if (SHORT_ID.test(q) && q.toLowerCase() !== q) values.push(q.toLowerCase());
  const scoped = FIELD_SCOPED.exec(q);
  const field = scoped ? { name: scoped[1]!, value: scoped[2]!, prefix: prefixOf(scoped[2]!) } : undefined;
  if (field) values.push(field.value);
  return { values, prefix: prefixOf(q), jobId: isUuid(q) ? q : undefined, field };
}

/**
 * A tsquery finding any of `values` whole, or any value starting with one of `prefixes`, in the index
 * job_search_vector_idx (conveyor_search_vector: each value one lexeme, verbatim). Each is quoted as a lexeme (`'`
 * doubled, `\` escaped), so no character of a value is read as a tsquery operator.
 */
export function searchTsquery(values: readonly string[], prefixes: readonly (string | undefined)[] = []): string {
  const lexeme = (value: string) => `'${value.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
  return [...values.map(lexeme), ...prefixes.filter((p) => p !== undefined).map((p) => `${lexeme(p)}:*`)].join(" | ");
}

/** Pushes a value onto `params` and answers its placeholder (`$n`). */
const binder =
  (params: unknown[]) =>
  (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };

/**
 * SQL: the path of a field-scoped search's value (or of a value starting with its prefix; that covers the literal
 * value too, `Glo*` starting with `Glo`) under the key or at the dotted path it names in `alias`'s payload; null when
 * there is none. The list's condition and its `matched` both read it.
 */
function fieldPath(alias: string, field: NonNullable<SearchTerms["field"]>, param: (value: unknown) => string): string {
  return field.prefix
    ? `conveyor_value_path(${alias}.payload, ${param(field.prefix)}::text, ${param(field.name)}::text, true)`
    : `conveyor_value_path(${alias}.payload, ${param(field.value)}::text, ${param(field.name)}::text)`;
}

/** A filter, and possibly the ids of the only jobs that can match its `q` (see withSearchHits). */
export type JobSelection = JobFilter & { among?: readonly string[] };

/**
 * Conditions on jobs `alias` for the org's visible jobs (internal ones excluded) matching `filter`, for a WHERE
 * clause; the values go to the end of `params`. With no filter it is the condition the unfiltered list always used.
 */
export function jobsMatching(alias: string, orgId: string, filter: JobSelection | undefined, params: unknown[]): string {
  const param = binder(params);
  const where = [`${alias}.org_id = ${param(orgId)}`, TENANT_JOB(alias)];
  const statuses = filter?.statuses ?? [];
  // One status keeps the (org_id, status, id) index in id order; several are one array.
  if (statuses.length === 1) where.push(`${alias}.status = ${param(statuses[0])}::job_status`);
  else if (statuses.length > 1) where.push(`${alias}.status = ANY(${param(statuses)}::job_status[])`);
  if (filter?.type) where.push(`${alias}.type = ${param(filter.type)}`);
  if (filter?.createdAfter) where.push(`${alias}.created_at >= ${param(filter.createdAfter)}::timestamptz`);
  if (filter?.createdBefore) where.push(`${alias}.created_at < ${param(filter.createdBefore)}::timestamptz`);
  // Through jobs_org_id_finished_at_idx, the index the overview's finished counts read (a job unfinished has none).
  if (filter?.finishedAfter) where.push(`${alias}.finished_at >= ${param(filter.finishedAfter)}::timestamptz`);
  if (filter?.finishedBefore) where.push(`${alias}.finished_at < ${param(filter.finishedBefore)}::timestamptz`);
  if (filter?.scheduleId) where.push(`${alias}.schedule_id = ${param(filter.scheduleId)}::uuid`);
  // Through jobs_failure_group_idx (partial: only jobs with an error).
  if (filter?.failureGroup) where.push(`${alias}.failure_group IS NOT NULL AND ${alias}.failure_group = ${param(filter.failureGroup)}`);
  // Due later or now as the overview counts them (countQueue), by the database's clock, as the dispatcher decides.
  if (filter?.due) {
    const later = `EXISTS (SELECT 1 FROM job_queue q WHERE q.job_id = ${alias}.id AND ${DUE_LATER("q", "now()")})`;
    where.push(`${alias}.status = 'pending' AND ${filter.due === "later" ? later : `NOT ${later}`}`);
  }
  if (filter?.q !== undefined) {
    const terms = searchTerms(filter.q);
    // `@@` on conveyor_search_vector(search_values) is what the GIN index job_search_vector_idx answers.
    const holding = (tsquery: string) =>
      `EXISTS (SELECT 1 FROM job_search s WHERE s.job_id = ${alias}.id AND conveyor_search_vector(s.search_values) @@ ${param(tsquery)}::tsquery)`;
    const readings = [
      holding(
        searchTsquery(
          terms.values.filter((v) => v !== terms.field?.value),
          [terms.prefix],
        ),
      ),
    ];
    if (terms.jobId) readings.push(`${alias}.id = ${param(terms.jobId)}::uuid`);
    if (terms.field) {
      const path = fieldPath(alias, terms.field, param);
      readings.push(`(${holding(searchTsquery([terms.field.value], [terms.field.prefix]))} AND ${path} IS NOT NULL)`);
    }
    where.push(`(${readings.join(" OR ")})`);
  }
  if (filter?.among) where.push(`${alias}.id = ANY(${param(filter.among)}::uuid[])`);
  return where.join(" AND ");
}

/** A `q` held by more jobs than this is listed by its plain condition; by the ids of its jobs below it. */
const SEARCH_HITS_LIMIT = 1000;

/**
 * The filter, narrowed to the ids of the org's jobs that `q` matches when they are few. Postgres keeps no
 * statistics for values that are rare (most are: order numbers, e-mail addresses), guesses that 0.5 % of jobs hold
 * one, and for "newest first, first page" would walk the id index backwards expecting a match soon — through a
 * million rows for a value a single job holds. So the matching ids are looked up first, through the GIN index only,
 * stopping at 1,001 (a MATERIALIZED CTE keeps the LIMIT from steering that lookup back to a scan); the list then
 * reads those jobs by id. A value held by more jobs is common, and the plain condition finds it early in id order.
 */
export async function withSearchHits(db: pg.Pool | pg.PoolClient, orgId: string, filter: JobFilter | undefined): Promise<JobSelection | undefined> {
  if (filter?.q === undefined) return filter;
  const terms = searchTerms(filter.q);
  // job_search holds no internal job; a job id is looked up in jobs itself. Jobs holding a field-scoped value under
  // another key are among the hits, and left out by the list's own condition.
  const byId = terms.jobId ? `UNION SELECT j.id FROM jobs j WHERE j.id = $3::uuid AND j.org_id = $1 AND ${TENANT_JOB("j")}` : "";
  const { rows } = await db.query<{ id: string }>(
    `WITH hits AS MATERIALIZED (
       SELECT s.job_id AS id FROM job_search s WHERE conveyor_search_vector(s.search_values) @@ $2::tsquery AND s.org_id = $1 ${byId}
     )
     SELECT id FROM hits LIMIT ${SEARCH_HITS_LIMIT + 1}`,
    [orgId, searchTsquery(terms.values, [terms.prefix, terms.field?.prefix]), ...(terms.jobId ? [terms.jobId] : [])],
  );
  return rows.length > SEARCH_HITS_LIMIT ? filter : { ...filter, among: rows.map((r) => r.id) };
}

/**
 * What a search matched in a job, as a list item's `matched` says it: `id`, `short_id`, or `payload.` and the path of
 * the value (a field-scoped search's when it matched, then the value as given, then a prefix's; SQL, evaluated for the rows listed only).
 */
function matchedField(alias: string, q: string, params: unknown[]): string {
  const param = binder(params);
  const terms = searchTerms(q);
  const cases: string[] = [];
  if (terms.jobId) cases.push(`WHEN ${alias}.id = ${param(terms.jobId)}::uuid THEN 'id'`);
  if (SHORT_ID.test(q)) cases.push(`WHEN right(${alias}.id::text, 8) = ${param(q.toLowerCase())}::text THEN 'short_id'`);
  const paths = terms.field ? [fieldPath(alias, terms.field, param)] : [];
  paths.push(`conveyor_value_path(${alias}.payload, ${param(q)}::text)`);
  if (terms.prefix) paths.push(`conveyor_value_path(${alias}.payload, ${param(terms.prefix)}::text, NULL, true)`);
  const inPayload = `'payload.' || coalesce(${paths.join(", ")})`;
  return cases.length ? `CASE ${cases.join(" ")} ELSE ${inPayload} END` : inPayload;
}

/** Characters of a job's error a list item carries with `include=error`. */
export const LIST_ERROR_MAX = 300;

/** The SQL that lists the org's matching jobs newest (or oldest) first, as JSON texts; `past` is the keyset cursor. */
export function jobListSql(query: { orgId: string; filter?: JobSelection; past?: string; oldestFirst?: boolean; withError?: boolean }): {
  sql: string;
  params: unknown[];
} {
  const params: unknown[] = [];
  let where = jobsMatching("j", query.orgId, query.filter, params);
  if (query.past) {
    params.push(query.past);
    where += ` AND j.id ${query.oldestFirst ? ">" : "<"} $${params.length}::uuid`;
  }
  // Added fields join the item's JSON text at its end (conveyor_job_item's object always ends with "}").
  const added: string[] = [];
  if (query.withError) added.push(`',"error":' || coalesce(to_json(left(j.error, ${LIST_ERROR_MAX}))::text, 'null')`);
  // "payload" alone when the value's path cannot be told (a number Postgres writes otherwise than JavaScript: 1e+21).
  if (query.filter?.q !== undefined) added.push(`',"matched":' || to_json(coalesce(${matchedField("j", query.filter.q, params)}, 'payload'))::text`);
  const item = added.length ? `left(conveyor_job_item(j)::text, -1) || ${added.join(" || ")} || '}'` : "conveyor_job_item(j)::text";
  return { sql: `SELECT ${item} AS item FROM jobs j WHERE ${where} ORDER BY j.id ${query.oldestFirst ? "ASC" : "DESC"}`, params };
}

export type BulkAction = "cancel" | "replay";

/** The statuses a bulk action can change: cancel live jobs, replay final ones. */
export const BULK_ACTION_STATUSES: Record<BulkAction, readonly JobStatus[]> = {
  cancel: ["pending", "processing"],
  replay: FINAL_STATUSES,
};

/**
 * The org's jobs matching `filter` that `action` still applies to, oldest first, at most `limit`: for cancel,
 * pending jobs and processing ones without a cancellation request; for replay, final jobs that have no replay
 * yet. So calling again after acting on them finds the next ones, and never the same ones twice.
 */
export async function selectBulkTargets(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; filter: JobFilter; action: BulkAction; limit: number },
): Promise<string[]> {
  const applicable = BULK_ACTION_STATUSES[options.action];
  const statuses = options.filter.statuses ? options.filter.statuses.filter((s) => applicable.includes(s)) : [...applicable];
  if (statuses.length === 0) return [];
  const params: unknown[] = [];
  const selection = await withSearchHits(db, options.orgId, { ...options.filter, statuses });
  const where = jobsMatching("j", options.orgId, selection, params);
  const still =
    options.action === "cancel" ? "(j.status = 'pending' OR j.cancel_requested_at IS NULL)" : "NOT EXISTS (SELECT 1 FROM jobs r WHERE r.replay_of = j.id)";
  params.push(options.limit);
  const { rows } = await db.query<{ id: string }>(`SELECT j.id FROM jobs j WHERE ${where} AND ${still} ORDER BY j.id LIMIT $${params.length}`, params);
  return rows.map((r) => r.id);
}

/** Which of `ids` are the org's (visible) jobs, with their status; the others are not in the answer. */
export async function findOrgJobs(db: pg.Pool | pg.PoolClient, orgId: string, ids: readonly string[]): Promise<{ id: string; status: JobStatus }[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; status: JobStatus }>(
    `SELECT j.id, j.status FROM jobs j WHERE j.id = ANY($1::uuid[]) AND j.org_id = $2 AND ${TENANT_JOB("j")} ORDER BY j.id`,
    [ids, orgId],
  );
  return rows;
}
