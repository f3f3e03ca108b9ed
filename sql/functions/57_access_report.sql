-- Who can read what, for a DBA or an auditor (docs/dba.md, docs/analysts.md).

-- api.fragment_readers: every principal of the org that may read fragment p_fragment_id
-- now, and why: the grants that satisfy each part of the read rule of data.fragments
-- (sql/policies: a repo needs an org or that repo's grant, a persona an org or that
-- persona's grant, a session a grant on that session while it is live; a fragment in
-- none of them is the whole org's), the login mapped to it, and the API keys through
-- which it may (a key restricted to repos reaches a repo fragment only when it names
-- that repo, a persona fragment never; revoked and expired keys are left out). A
-- disabled principal is listed, with `disabled`, but reads nothing. For the migrator
-- (DBA) and for principals holding an audit grant on the org (contexts_auditor).
-- data._fragment_readers_core answers (owner only); data._fragment_readers checks the
-- audit grant of the bound principal first (auditors); api.fragment_readers, an invoker,
-- lets a DBA (superuser or BYPASSRLS, judged as the invoker) ask without one.
create or replace function data._fragment_readers_core(p_org_id text, p_fragment_id bigint)
returns table (principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    f record;
begin
    select x.repo_id, x.persona_id, x.session_id into f
    from data.fragments x where x.org_id = p_org_id and x.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment % in org %', p_fragment_id, p_org_id using errcode = 'P0002';
    end if;
    return query
    with held as (
        select p.principal_id, p.kind, p.disabled_at is not null as disabled, p.db_role,
               bool_or(g.scope_kind = 'org') as org_wide,
               bool_or(g.scope_kind = 'repo' and g.scope_id = f.repo_id) as repo_grant,
               bool_or(g.scope_kind = 'persona' and g.scope_id = f.persona_id) as persona_grant,
               bool_or(g.scope_kind = 'session' and g.scope_id = f.session_id
                       and exists (select 1 from data.sessions s
                                   where s.org_id = g.org_id and s.session_id = g.scope_id
                                     and (s.expires_at is null or s.expires_at > statement_timestamp())))
                   as session_grant
        from data.principals p
        left join data.grants g on g.org_id = p.org_id and g.principal_id = p.principal_id
        where p.org_id = p_org_id
        group by p.principal_id, p.kind, p.disabled_at, p.db_role
    ), readers as (
        select h.*,
               array_remove(array[
                   case when f.repo_id is not null then
                       case when coalesce(h.repo_grant, false) then 'repo:' || f.repo_id
                            when coalesce(h.org_wide, false) then 'org' end end,
                   case when f.persona_id is not null then
                       case when coalesce(h.persona_grant, false) then 'persona:' || f.persona_id
                            when coalesce(h.org_wide, false) then 'org' end end,
                   case when f.session_id is not null and coalesce(h.session_grant, false)
                        then 'session:' || f.session_id end], null) as used
        from held h
        where (f.repo_id is null or coalesce(h.org_wide, false) or coalesce(h.repo_grant, false))
          and (f.persona_id is null or coalesce(h.org_wide, false) or coalesce(h.persona_grant, false))
          and (f.session_id is null or coalesce(h.session_grant, false))
    )
    select r.principal_id, r.kind, r.disabled, r.db_role, array(select distinct u from unnest(r.used) u order by u),
           array(select k.key_id from data.api_keys k
                 where k.org_id = p_org_id and k.principal_id = r.principal_id and k.revoked_at is null
                   and (k.expires_at is null or k.expires_at > statement_timestamp())
                   and (k.repos is null
                        or (f.persona_id is null
                            and (f.repo_id is null or (f.repo_id = any (k.repos)
                                                       and (coalesce(r.org_wide, false)
                                                            or coalesce(r.repo_grant, false))))))
                 order by k.key_id),
           case when cardinality(r.used) = 0 then 'the fragment is the whole org''s (no repo, persona or session)'
                else 'holds ' || array_to_string(array(select distinct u from unnest(r.used) u order by u), ' and ')
                     || case when f.session_id is not null then ' (the session is live)' else '' end
           end
           || case when r.disabled then '; disabled: reads nothing now' else '' end
    from readers r
    order by r.principal_id;
end
$$;

create or replace function data._fragment_readers(p_org_id text, p_fragment_id bigint)
returns table (principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    if (select data.acl_org()) is distinct from p_org_id or not (select data.acl_audit()) then
        raise exception 'who may read a fragment is told to the DBA and to auditors of its org (an audit grant)'
            using errcode = '42501';
    end if;
    return query select * from data._fragment_readers_core(p_org_id, p_fragment_id);
end
$$;

create or replace function api.fragment_readers(p_org_id text, p_fragment_id bigint)
returns table (principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    if data._bypasses_rls() then
        return query select * from data._fragment_readers_core(p_org_id, p_fragment_id);
    else
        return query select * from data._fragment_readers(p_org_id, p_fragment_id);
    end if;
end
$$;
comment on function api.fragment_readers(text, bigint) is 'Who may read a fragment now, and why: each principal, the grants that let it, its login and its API keys (DBA and auditors of the org).';
