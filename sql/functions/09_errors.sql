-- Errors the service functions raise for a value a table refuses.

-- data._raise_invalid: re-raise a check violation (or a not-null, unique or
-- representation error) caught by a service function as `p_what` (SQLSTATE 22023). The
-- function's own words (sqlerrm of a RAISE it made) are kept; PostgreSQL's words name
-- the table and the constraint, so they are left out and the constraint's name is passed
-- on instead, for the caller's mapping (app.scope.constraint_rule puts an id's rule in
-- words). Called from an exception handler, with its sqlerrm and constraint_name.
create or replace function data._raise_invalid(p_what text, p_message text, p_constraint text)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_message !~ '^(new row |null value in column |duplicate key value )' then
        raise exception '%: %', p_what, p_message using errcode = '22023';
    end if;
    raise exception '%', p_what using errcode = '22023', constraint = coalesce(p_constraint, '');
end
$$;
comment on function data._raise_invalid(text, text, text) is 'Re-raise a refused value as 22023: the function''s own words kept, PostgreSQL''s (naming tables and constraints) replaced by the constraint''s name.';
