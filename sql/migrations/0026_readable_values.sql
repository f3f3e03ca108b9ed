-- 0026_readable_values: every stored time is one every reader can decode.
--
-- A time is read back by the service and the CLI (psycopg, into Python's datetime, which
-- holds years 1 to 9999 in the reader's time zone) and by analysts' clients. A document
-- posted with "timestamp": "9999-12-31T23:59:59-14:00" was stored as 10000-01-01
-- 13:59:59 UTC, and from then on every listing of its org failed ("timestamp too large
-- (after year 10K)"); +/-infinity fails the same way.
--
--   * data._readable_time: true for null and for times from 0001-01-02 to 9999-12-30
--     (UTC), which every zone (UTC-12 to UTC+14) reads within years 1 to 9999; any other
--     value raises 22023 (a 400) naming the column and the range.
--   * Repair (data._clamp_unreadable_times, run here once; a DBA may run it again): a
--     database that already holds such values is fixed, not worked around at every
--     read. Each time outside the range is clamped to its nearest bound (a time past
--     year 9999 meant "never", one before year 1 "always": the bounds mean the same),
--     and so are the `valid_from` / `valid_until` values of document metadata (which
--     windows are computed from, sql/functions/48_validity.sql). Each column repaired
--     is reported with a notice.
--   * Then every time column of the data schema gets a check constraint calling
--     data._readable_time, so no door (the API, the CLI, a security definer function, a
--     DBA's insert) stores one again. A table created later needs its own: a catalog
--     test (tests/sql/test_readable_values.py) asks for one on every time column.
--   * data.idempotent_writes (the other half of this release's write safety): the
--     response of each write made with an `Idempotency-Key`, per org, principal and key,
--     for 24 hours, so a retried request is answered what the first one did and writes
--     nothing (sql/functions/37_idempotency.sql). No caller role reads it directly.

create function data._readable_time(p_value timestamptz, p_what text)
returns boolean
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_value is null
       or (p_value >= '0001-01-02 00:00:00+00'::timestamptz and p_value < '9999-12-31 00:00:00+00'::timestamptz) then
        return true;
    end if;
    raise exception '% % is outside the times every reader can decode: from 0001-01-02 to 9999-12-30 (UTC)',
        p_what, p_value using errcode = '22023';
end
$$;
comment on function data._readable_time(timestamptz, text)
    is 'True for null or a time from 0001-01-02 to 9999-12-30 UTC (what every reader, in any time zone, decodes); raises 22023 naming p_what otherwise. Checked on every time column of the data schema.';

create table data.idempotent_writes (
    org_id          text not null references data.orgs on delete cascade,
    principal_id    text not null,
    idempotency_key text not null constraint idempotency_key_format check (idempotency_key ~ '^[!-~]{1,255}$'),
    request_hash    text not null constraint request_hash_format check (request_hash ~ '^[0-9a-f]{64}$'),
    status          int not null check (status between 200 and 299),
    response        jsonb not null,
    created_at      timestamptz not null default now(),
    primary key (org_id, principal_id, idempotency_key)
);
create index idempotent_writes_age on data.idempotent_writes (org_id, created_at);
comment on table data.idempotent_writes
    is 'The response of each write made with an Idempotency-Key (per org, principal and key, kept 24 hours): a retry is answered it and writes nothing.';
alter table data.idempotent_writes enable row level security;
alter table data.idempotent_writes force row level security;
-- Read and written only by the owner's security definer functions.
create policy no_direct_access on data.idempotent_writes using (false);

-- data._clamp_unreadable_times: the repair, which this migration runs once; a DBA may
-- run it again (e.g. after restoring rows saved before this release). Every time outside
-- the readable range, in every time column of the data schema and in the metadata
-- windows of document versions, is clamped to its nearest bound, and each time column
-- gets (again) its check constraint. Returns the values clamped.
create function data._clamp_unreadable_times()
returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    c record;
    k text;
    fixed bigint;
    total bigint := 0;
    lowest constant timestamptz := '0001-01-02 00:00:00+00';
    highest constant timestamptz := '9999-12-30 00:00:00+00';
    beyond constant timestamptz := '9999-12-31 00:00:00+00';
begin
    -- Metadata windows, as ISO 8601 in UTC (as ingestion writes them).
    foreach k in array array['valid_from', 'valid_until'] loop
        update data.document_versions v
        set metadata = v.metadata || jsonb_build_object(k, to_char(
            least(greatest((v.metadata ->> k)::timestamptz, lowest), highest) at time zone 'UTC',
            'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'))
        where jsonb_typeof(v.metadata -> k) = 'string'
          and pg_input_is_valid(v.metadata ->> k, 'timestamptz')
          and not ((v.metadata ->> k)::timestamptz >= lowest and (v.metadata ->> k)::timestamptz < beyond);
        get diagnostics fixed = row_count;
        if fixed > 0 then
            raise notice 'data.document_versions.metadata %: % unreadable times clamped', k, fixed;
        end if;
        total := total + fixed;
    end loop;
    for c in
        select cl.relname as tbl, a.attname as col
        from pg_attribute a
        join pg_class cl on cl.oid = a.attrelid
        join pg_namespace n on n.oid = cl.relnamespace
        where n.nspname = 'data' and cl.relkind in ('r', 'p') and not cl.relispartition
          and a.attnum > 0 and not a.attisdropped and a.atttypid = 'timestamptz'::regtype
        order by cl.relname, a.attnum
    loop
        execute format('alter table data.%I drop constraint if exists %I', c.tbl, c.tbl || '_' || c.col || '_readable');
        execute format(
            'update data.%1$I set %2$I = least(greatest(%2$I, %3$L::timestamptz), %4$L::timestamptz)'
            ' where not (%2$I >= %3$L::timestamptz and %2$I < %5$L::timestamptz)',
            c.tbl, c.col, lowest, highest, beyond);
        get diagnostics fixed = row_count;
        if fixed > 0 then
            raise notice 'data.%.%: % unreadable times clamped', c.tbl, c.col, fixed;
        end if;
        total := total + fixed;
        execute format('alter table data.%I add constraint %I check (data._readable_time(%I, %L))',
                       c.tbl, c.tbl || '_' || c.col || '_readable', c.col, c.tbl || '.' || c.col);
    end loop;
    return total;
end
$$;
comment on function data._clamp_unreadable_times()
    is 'Clamp every stored time no reader can decode (time columns of the data schema, metadata windows) to the readable range, and check each time column from then on; returns the values clamped. Migration 0026 runs it.';

select data._clamp_unreadable_times();
