-- The values of a job_search row as the index holds them. array_to_tsvector refuses NULL and empty elements, which no
-- search can find anyway. Not STRICT, so Postgres inlines it (in the index and in queries alike).
CREATE OR REPLACE FUNCTION conveyor_search_vector(search_values text[]) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_tsvector(array_remove(array_remove(search_values, NULL), ''))
$$;
