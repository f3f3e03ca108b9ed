-- Manual pins (R-RANK-1 "manual pins always win", R-DOC-2): a principal with a write
-- grant on a scope pins a fragment there; every retrieval that sees the pin's scope
-- composes the fragment first, whatever its relevance (api.retrieve_candidates returns
-- the visible pins, app/retrieve/compose.py puts them first). docs/adr/0012.

-- service.pin_add: pin a fragment to a scope. The caller needs a write grant on that scope
-- (42501); the fragment must be one it may read, active (P0002 otherwise, as for an
-- unknown id) and visible in that scope (22023: a repo-B fragment pinned to repo A
-- would never be shown). The same fragment pinned twice to one scope is a 23505.
create or replace function service.pin_add(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_id bigint, p_reason text, p_expires_at timestamptz default null)
returns table (pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint,
               pinned_by text, reason text, created_at timestamptz, expires_at timestamptz,
               kind text, negative boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    frag record;
    pin data.pins;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_reason is null or btrim(p_reason) = '' or length(p_reason) > 1000 then
        raise exception 'a pin needs a reason (1 to 1000 characters)' using errcode = '22023';
    end if;
    if p_expires_at is not null and p_expires_at <= statement_timestamp() then
        raise exception 'expires_at % is not in the future', p_expires_at using errcode = '22023';
    end if;
    -- Security definer reads past row-level security: the policy's read rule is applied
    -- by data._readable_fragments, the one statement of it that definer code shares.
    select f.fragment_id, f.repo_id, f.persona_id, f.session_id into frag
    from data.fragments f
    where f.org_id = p_org_id and f.fragment_id = p_fragment_id and f.active
      and f.fragment_id = any (data._readable_fragments(p_org_id, array[p_fragment_id]));
    if frag.fragment_id is null then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
    if data._in_scope(frag.repo_id, frag.persona_id, frag.session_id, p_repo_id, p_persona_id, p_session_id)
           is not true
       or (p_repo_id is null and frag.repo_id is not null) then
        raise exception 'fragment % is not visible in that scope', p_fragment_id using errcode = '22023',
            hint = 'Pin it to its own scope or a narrower one (its repo, persona or session).';
    end if;
    insert into data.pins (org_id, repo_id, persona_id, session_id, fragment_id, pinned_by, reason, expires_at)
    values (p_org_id, p_repo_id, p_persona_id, p_session_id, p_fragment_id, me.principal_id, p_reason, p_expires_at)
    returning * into pin;
    return query
    select pin.pin_id, pin.org_id, pin.repo_id, pin.persona_id, pin.session_id, pin.fragment_id, pin.pinned_by,
           pin.reason, pin.created_at, pin.expires_at, f.kind, f.negative
    from data.fragments f where f.org_id = pin.org_id and f.fragment_id = pin.fragment_id;
end
$$;
comment on function service.pin_add(text, text, text, text, bigint, text, timestamptz)
    is 'Pin a fragment to a scope (write grant there): composed first in every retrieval that sees that scope.';

-- service.pin_remove: unpin. A pin the caller may not read is unknown (P0002); one it may
-- read but not write (no write grant on its scope) is a 42501.
create or replace function service.pin_remove(p_pin_id bigint)
returns table (pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint,
               pinned_by text, reason text, created_at timestamptz, expires_at timestamptz,
               kind text, negative boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    pin data.pins;
begin
    select * into me from data._principal_or_raise();
    select p.* into pin from data.pins p
    where p.pin_id = p_pin_id and p.org_id = me.org_id
      and (p.repo_id is null or data.acl_org_wide() or p.repo_id = any (data.acl_repos()))
      and (p.persona_id is null or data.acl_org_wide() or p.persona_id = any (data.acl_personas()))
      and (p.session_id is null or p.session_id = any (data.acl_sessions()));
    if pin.pin_id is null then
        raise exception 'unknown pin: %', p_pin_id using errcode = 'P0002';
    end if;
    perform data._require_write(pin.org_id, pin.repo_id, pin.persona_id, pin.session_id);
    delete from data.pins p where p.pin_id = pin.pin_id;
    return query
    select pin.pin_id, pin.org_id, pin.repo_id, pin.persona_id, pin.session_id, pin.fragment_id, pin.pinned_by,
           pin.reason, pin.created_at, pin.expires_at, f.kind, f.negative
    from data.fragments f where f.org_id = pin.org_id and f.fragment_id = pin.fragment_id;
end
$$;
comment on function service.pin_remove(bigint) is 'Remove a pin (write grant on its scope).';

-- api.pins_list: the pins a retrieval in this scope would see (the pin's scope and its
-- fragment's both within it, row-level security bounding both), earliest first, which
-- is the order they are composed in; expired ones only with p_include_expired. A pin
-- whose fragment is outside its validity window now (superseded, expired or not yet
-- valid: sql/functions/48_validity.sql) is listed with `superseded` true, and
-- `superseded_by` the documents superseding it: retrievals leave it out and say so in
-- `pins_left_out` (unless they ask for superseded fragments, or for a time it was current).
create or replace function api.pins_list(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null,
    p_include_expired boolean default false)
returns table (pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint,
               pinned_by text, reason text, created_at timestamptz, expires_at timestamptz,
               kind text, negative boolean, active boolean, expired boolean, superseded boolean,
               valid_until timestamptz, superseded_by jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    return query
    with listed as (
        select p.*, f.kind, f.negative, f.active, f.valid_from, f.valid_until,
               not ((f.valid_from is null or f.valid_from <= statement_timestamp())
                    and (f.valid_until is null or f.valid_until > statement_timestamp())) as outside
        from data.pins p
        join data.fragments f on f.fragment_id = p.fragment_id and f.org_id = p.org_id
        where p.org_id = p_org_id
          and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
          and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
          and (p_include_expired or p.expires_at is null or p.expires_at > statement_timestamp())
    ), superseders as materialized (
        select * from data._superseders(p_org_id, array(select l.fragment_id from listed l where l.outside))
    )
    select l.pin_id, l.org_id, l.repo_id, l.persona_id, l.session_id, l.fragment_id, l.pinned_by, l.reason,
           l.created_at, l.expires_at, l.kind, l.negative, l.active,
           coalesce(l.expires_at <= statement_timestamp(), false), l.outside, l.valid_until,
           coalesce(sp.superseded_by, '[]')
    from listed l
    left join superseders sp on sp.fragment_id = l.fragment_id
    order by l.created_at, l.pin_id;
end
$$;
comment on function api.pins_list(text, text, text, text, boolean)
    is 'Pins a retrieval in this scope sees, in the order they are composed (earliest first), each saying whether its fragment is superseded (outside its validity window now) and by what.';
