-- The path (a.b.0.c) of the first string or number in `doc` equal to `needle` (or starting with it, `is_prefix`),
-- under the key or path `field` when one is given; NULL when none is. Search shows where a job matched.
CREATE OR REPLACE FUNCTION conveyor_value_path(doc jsonb, needle text, field text DEFAULT NULL, is_prefix boolean DEFAULT false) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
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
