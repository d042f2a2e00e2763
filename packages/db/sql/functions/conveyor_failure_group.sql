-- Failure groups: a failed job's type and its error with ids, quoted values, e-mail addresses and numbers taken out.
-- jobs.failure_group is a generated column of these, so both are IMMUTABLE.

-- The one normaliser. IMMUTABLE: a generated column may only call immutable functions.
CREATE OR REPLACE FUNCTION conveyor_normalise_error(message text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
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

-- A failure group: the job's type and its normalised error, as 16 hex digits. PL/pgSQL, not SQL: a SQL function in
-- the generated column's expression was inlined, its body and the normaliser's parsed again, at the start of every
-- statement that writes jobs; this one is not inlined, and (STRICT) not called for a row without an error
-- (migration 20261207160000_event_data_in_key_order, docs/decisions/2026-12-07-event-data-in-key-order.md).
CREATE OR REPLACE FUNCTION conveyor_failure_group(type text, error text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN left(md5($1 || E'\n' || conveyor_normalise_error($2)), 16);
END
$$;
