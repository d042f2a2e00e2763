-- Search finds value prefixes (issue 23): `q=INV-20*` finds jobs holding a payload value that starts with INV-20.
-- A GIN index on text[] answers whole elements only, so the index is now on the same values as a tsvector: each value
-- one lexeme, verbatim (no parsing, no stemming, case kept, duplicates dropped), which a tsquery reads whole ('INV-2024-001')
-- or by prefix ('INV-20':*, a GIN partial match). The same entries per job as before, so writers pay about the same.
-- Prisma cannot describe an index on an expression; schema.prisma names it in a comment and the drift check
-- (packages/db/src/drift.ts, MIGRATION_ONLY_INDEXES) expects it in the migrations' database only.

-- The values of a job_search row as the index holds them. array_to_tsvector refuses NULL and empty elements, which no
-- search can find anyway. Not STRICT, so Postgres inlines it (in the index and in queries alike).
CREATE FUNCTION conveyor_search_vector(search_values text[]) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_tsvector(array_remove(array_remove(search_values, NULL), ''))
$$;

-- DropIndex
DROP INDEX "job_search_values_idx";

-- CreateIndex
CREATE INDEX "job_search_vector_idx" ON "job_search" USING GIN (conveyor_search_vector("search_values"));

-- Where in a payload a searched value is (see 20261126050000_failure_groups), now also for a prefix: with `is_prefix`,
-- the first string or number whose text starts with `needle`.
DROP FUNCTION conveyor_value_path(jsonb, text, text);
CREATE FUNCTION conveyor_value_path(doc jsonb, needle text, field text DEFAULT NULL, is_prefix boolean DEFAULT false) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
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
   WHERE jsonb_typeof(value) IN ('string', 'number')
     AND CASE WHEN is_prefix THEN starts_with(value #>> '{}', needle) ELSE value #>> '{}' = needle END
     AND (field IS NULL OR key = field OR substr(path, 2) = field)
   LIMIT 1
$$;
