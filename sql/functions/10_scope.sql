-- Scope helpers shared by every search and read function.

-- data._in_scope: bottom-up visibility of a fragment's labels for a requested scope.
-- Org-wide fragments (no labels) are always in scope; a repo label must match the
-- requested repo when one is given (no repo asked: all of the org's repos); persona
-- and session fragments are visible only when that persona or session is asked for.
-- Plain SQL, immutable and without a SET clause so the planner inlines it into the
-- calling query (a SET clause forbids inlining and costs a call per row); it names no
-- table or function, and inlined code resolves in the caller's pinned search_path.
create or replace function data._in_scope(
    fragment_repo text, fragment_persona text, fragment_session text,
    want_repo text, want_persona text, want_session text)
returns boolean
language sql immutable parallel safe
as $$
    select (fragment_repo is null or want_repo is null or fragment_repo = want_repo)
       and (fragment_persona is null or fragment_persona = want_persona)
       and (fragment_session is null or fragment_session = want_session)
$$;

-- data._require_org: raise no_data_found (P0002) for an org that does not exist.
create or replace function data._require_org(p_org_id text)
returns void
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    if p_org_id is null or not exists (select 1 from data.orgs o where o.org_id = p_org_id) then
        raise exception 'unknown org: %', coalesce(p_org_id, '(null)')
            using errcode = 'P0002', hint = 'Create it with `contexts org create ORG`.';
    end if;
end
$$;

-- api.create_org: idempotent; returns the org id.
create or replace function api.create_org(p_org_id text, p_display_name text default '')
returns text
language sql
set search_path = pg_catalog, extensions, pg_temp
as $$
    insert into data.orgs (org_id, display_name) values (p_org_id, coalesce(p_display_name, ''))
    on conflict (org_id) do update set display_name = coalesce(nullif(excluded.display_name, ''), orgs.display_name)
    returning org_id
$$;
comment on function api.create_org(text, text) is 'Create (or rename) a tenant org.';

-- api.ensure_scope: create the repo, persona and session rows a write names, inside
-- an org that must already exist.
create or replace function api.ensure_scope(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_org(p_org_id);
    if p_repo_id is not null then
        insert into data.repos (org_id, repo_id) values (p_org_id, p_repo_id) on conflict do nothing;
    end if;
    if p_persona_id is not null then
        insert into data.personas (org_id, persona_id) values (p_org_id, p_persona_id) on conflict do nothing;
    end if;
    if p_session_id is not null then
        insert into data.sessions (org_id, session_id) values (p_org_id, p_session_id) on conflict do nothing;
    end if;
exception when check_violation then
    raise exception 'invalid scope identifier: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.ensure_scope(text, text, text, text) is 'Create missing repo/persona/session rows of an existing org.';
