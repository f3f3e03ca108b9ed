-- data._clamp_unreadable_times: the repair of migration 0026 (which created it and ran it
-- once); a DBA may run it again (e.g. after restoring rows saved before that release).
-- Every time outside the readable range, in every time column of the data schema (times
-- and dates: the usage roll-ups keep days, migration 0029) and in the metadata windows
-- of document versions, is clamped to its nearest bound, and each time column gets
-- (again) its check constraint. Returns the values clamped.
create or replace function data._clamp_unreadable_times()
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
        select cl.relname as tbl, a.attname as col, format_type(a.atttypid, null) as typ
        from pg_attribute a
        join pg_class cl on cl.oid = a.attrelid
        join pg_namespace n on n.oid = cl.relnamespace
        where n.nspname = 'data' and cl.relkind in ('r', 'p') and not cl.relispartition
          and a.attnum > 0 and not a.attisdropped and a.atttypid in ('timestamptz'::regtype, 'date'::regtype)
        order by cl.relname, a.attnum
    loop
        execute format('alter table data.%I drop constraint if exists %I', c.tbl, c.tbl || '_' || c.col || '_readable');
        execute format(
            'update data.%1$I set %2$I = least(greatest(%2$I, %3$L::%6$s), %4$L::%6$s)'
            ' where not (%2$I >= %3$L::%6$s and %2$I < %5$L::%6$s)',
            c.tbl, c.col, lowest, highest, beyond, c.typ);
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
