-- Failures grouped by error (issue 23): a job's last error, normalised (numbers, ids, quoted values, e-mail addresses
-- replaced by placeholders), fingerprinted with its type, so failures of one kind group together cheaply.
-- Written by Postgres itself (a generated column): every transition that writes an error (a worker's outcome, a
-- take-over giving up, a dependency's failure) is covered without one of them having to remember, and the rows that
-- exist already are filled in by this migration.

-- The one normaliser. IMMUTABLE: a generated column may only call immutable functions.
CREATE FUNCTION conveyor_normalise_error(message text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT left(btrim(
    regexp_replace(
    regexp_replace(
    regexp_replace(
    regexp_replace(
    regexp_replace(
    regexp_replace(
    regexp_replace(
    regexp_replace(left(message, 2000),
      -- UUIDs
      '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}', '<id>', 'g'),
      -- Quoted values: "…", `…`, and '…' when the quote opens a word (not the apostrophe of "can't")
      '"[^"]*"', '"<value>"', 'g'),
      '`[^`]*`', '`<value>`', 'g'),
      '(^|[^[:alnum:]_])''[^'']*''', '\1''<value>''', 'g'),
      -- E-mail addresses
      '[[:alnum:]._%+-]+@[[:alnum:]-]+(\.[[:alnum:]-]+)+', '<email>', 'g'),
      -- Ids: words of 8 or more letters, digits, _ and - with at least one digit (re_8Gh2kLm0, 3f9a0c1d77)
      '(^|[^[:alnum:]_-])(?=[[:alpha:]_-]*[0-9])[[:alnum:]_-]{8,}', '\1<id>', 'g'),
      -- Numbers (1, 19.90, 10.0.0.1)
      '[0-9]+(\.[0-9]+)*', '<n>', 'g'),
      '[[:space:]]+', ' ', 'g')), 500)
$$;

-- A failure group: the job's type and its normalised error, as 16 hex digits.
CREATE FUNCTION conveyor_failure_group(type text, error text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT left(md5(type || E'\n' || conveyor_normalise_error(error)), 16)
$$;

-- AlterTable (rewrites the table once, computing the group of every job with an error). Internal jobs are never grouped.
ALTER TABLE "jobs" ADD COLUMN "failure_group" TEXT
  GENERATED ALWAYS AS (CASE WHEN "error" IS NOT NULL AND left("type", 1) <> '_' THEN conveyor_failure_group("type", "error") END) STORED;

-- CreateIndex: GET /jobs/failures reads it alone (an index-only scan, grouped in index order); GET /jobs?failure_group=
-- and bulk actions by group find their jobs through it. Only jobs with an error have an entry.
CREATE INDEX "jobs_failure_group_idx" ON "jobs"("org_id", "failure_group", "status", "finished_at", "created_at", "type", "id") WHERE failure_group IS NOT NULL;

-- CreateIndex: GET /jobs/failures narrowed to a type and a time range reads only that type's failed jobs in range.
CREATE INDEX "jobs_failed_type_created_idx" ON "jobs"("org_id", "type", "created_at", "failure_group", "finished_at") WHERE status = 'failed' AND failure_group IS NOT NULL;

-- CreateTable: the failed jobs of each failure group, counted by the transitions that fail a job (job-machine/sql.ts,
-- countFailures) and by retention as it deletes them, so GET /jobs/failures without a time filter reads one row per
-- group instead of every failed job.
CREATE TABLE "failure_counts" (
    "org_id" UUID NOT NULL,
    "failure_group" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "failed" INTEGER NOT NULL,
    "first_seen" TIMESTAMPTZ(3) NOT NULL,
    "last_seen" TIMESTAMPTZ(3) NOT NULL,
    "sample_job_id" UUID NOT NULL,

    CONSTRAINT "failure_counts_pkey" PRIMARY KEY ("org_id","failure_group")
);

-- AddForeignKey
ALTER TABLE "failure_counts" ADD CONSTRAINT "failure_counts_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The jobs that failed before this migration.
INSERT INTO "failure_counts" ("org_id", "failure_group", "type", "failed", "first_seen", "last_seen", "sample_job_id")
SELECT "org_id", "failure_group", min("type"), count(*), min(coalesce("finished_at", "updated_at")), max(coalesce("finished_at", "updated_at")),
       (array_agg("id" ORDER BY coalesce("finished_at", "updated_at") DESC, "id" DESC))[1]
  FROM "jobs" WHERE "status" = 'failed' AND "failure_group" IS NOT NULL
 GROUP BY "org_id", "failure_group";

-- Search that finds (issue 23). Where in a payload a searched value is: the dotted path (items.0.sku) of the first string
-- or number whose text is `needle` — under a key named `field`, or at that dotted path, when one is given — or null.
CREATE FUNCTION conveyor_value_path(doc jsonb, needle text, field text DEFAULT NULL) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  WITH RECURSIVE walk(path, key, value) AS (
    SELECT ''::text, NULL::text, doc
    UNION ALL
    SELECT w.path || '.' || e.key, e.key, e.value
      FROM walk w CROSS JOIN LATERAL (
        SELECT o.key, o.value FROM jsonb_each(CASE WHEN jsonb_typeof(w.value) = 'object' THEN w.value END) o
        UNION ALL
        SELECT (a.n - 1)::text, a.value FROM jsonb_array_elements(CASE WHEN jsonb_typeof(w.value) = 'array' THEN w.value END) WITH ORDINALITY AS a(value, n)
      ) e
  )
  SELECT substr(path, 2) FROM walk
   WHERE jsonb_typeof(value) IN ('string', 'number') AND value #>> '{}' = needle
     AND (field IS NULL OR key = field OR substr(path, 2) = field)
   LIMIT 1
$$;

-- The 8 characters the console shows for a job (the end of its id) are searched like a payload value: every job gets
-- them among its search values (jobs without any searchable value get a row for them).
UPDATE "job_search" s SET "search_values" = s."search_values" || right(s."job_id"::text, 8);
INSERT INTO "job_search" ("job_id", "org_id", "search_values")
SELECT "id", "org_id", ARRAY[right("id"::text, 8)] FROM "jobs" j
 WHERE left("type", 1) <> '_' AND NOT EXISTS (SELECT 1 FROM "job_search" s WHERE s."job_id" = j."id");
