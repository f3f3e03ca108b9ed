-- Administration: orgs and their partitions, scopes, sessions, principals and grants
-- (API keys: 11_auth.sql). The owner/migrator calls these (the CLI's org, principal,
-- grant and sessions commands); of them, a caller role may call only service.open_session (see
-- sql/grants/10_roles.sql). data._grant_target comes before service.revoke_scope, plain SQL
-- whose body is checked when it is created.

-- service.create_org: idempotent; creates the org's partitions. Returns the org id.
create or replace function service.create_org(
    p_org_id text, p_display_name text default '', p_session_ttl interval default null)
returns text
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
begin
    insert into data.orgs (org_id, display_name, session_ttl)
    values (p_org_id, coalesce(p_display_name, ''), coalesce(p_session_ttl, interval '24 hours'))
    on conflict (org_id) do update
        set display_name = coalesce(nullif(excluded.display_name, ''), orgs.display_name),
            session_ttl = coalesce(p_session_ttl, orgs.session_ttl);
    perform data._create_tenant_partitions(p_org_id);
    return p_org_id;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid org', sqlerrm, broken_constraint);
end
$$;
comment on function service.create_org(text, text, interval) is 'Create (or rename) a tenant org and its partitions.';

-- data._create_tenant_partitions: the org's partition of each tenant table, named by
-- the org's number (never by user text). Each partition gets every index of its parent
-- (GIN, simhash bands, one HNSW per model), so a query plans against its tenant's
-- indexes only. A table with a DEFAULT partition keeps every org there instead: the
-- layout for a distributed PostgreSQL, where shards, not partitions, separate tenants
-- (docker/citus/distribute.sql, docs/scale.md).
create or replace function data._create_tenant_partitions(p_org_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    no int := (select o.org_no from data.orgs o where o.org_id = p_org_id);
    t text;
    stale name;
begin
    if no is null then
        raise exception 'unknown org: %', p_org_id using errcode = 'P0002';
    end if;
    foreach t in array array['fragments', 'embeddings', 'bm25_blocks'] loop
        if exists (select 1 from pg_partitioned_table pt
                   where pt.partrelid = format('data.%I', t)::regclass and pt.partdefid <> 0) then
            continue;
        end if;
        -- A deleted org leaves its (emptied) partitions; an org created again under the
        -- same id takes them over under its new number.
        select c.relname into stale
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = format('data.%I', t)::regclass
          and pg_get_expr(c.relpartbound, c.oid) = format('FOR VALUES IN (%L)', p_org_id)
          and c.relname <> t || '_' || no;
        if stale is not null then
            execute format('alter table data.%I rename to %I', stale, t || '_' || no);
        end if;
        if to_regclass(format('data.%I', t || '_' || no)) is null then
            execute format('create table data.%I partition of data.%I for values in (%L)', t || '_' || no, t, p_org_id);
            execute format('comment on table data.%I is %L', t || '_' || no,
                           format('Partition of data.%s for one org (data.orgs.org_no = %s).', t, no));
            -- Reached only through the parent (whose policies apply); direct access is denied.
            execute format('alter table data.%I enable row level security', t || '_' || no);
            execute format('alter table data.%I force row level security', t || '_' || no);
            execute format('create policy direct_access_denied on data.%I using (false)', t || '_' || no);
        end if;
    end loop;
end
$$;

-- service.ensure_scope: create the repo and persona rows a write names, inside an org that
-- must already exist. Sessions are opened by service.open_session (with their expiry).
create or replace function service.ensure_scope(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
begin
    perform data._require_org(p_org_id);
    if p_repo_id is not null then
        insert into data.repos (org_id, repo_id) values (p_org_id, p_repo_id) on conflict do nothing;
    end if;
    if p_persona_id is not null then
        insert into data.personas (org_id, persona_id) values (p_org_id, p_persona_id) on conflict do nothing;
    end if;
    if p_session_id is not null then
        -- on conflict: concurrent first writes into one new session all succeed.
        insert into data.sessions (org_id, session_id, expires_at)
        select p_org_id, p_session_id, now() + o.session_ttl from data.orgs o where o.org_id = p_org_id
        on conflict (org_id, session_id) do nothing;
    end if;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid scope identifier', sqlerrm, broken_constraint);
end
$$;
comment on function service.ensure_scope(text, text, text, text) is 'Create missing repo/persona/session rows of an existing org.';

-- service.open_session: the bound principal opens a session of its org and gets read and
-- write on it; it expires after the org's session_ttl.
create or replace function service.open_session(p_session_id text)
returns timestamptz
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
    me record;
    opened int;
    expires timestamptz;
begin
    select * into me from data._principal_or_raise();
    if not data._acl_writes() then  -- within its key's restriction (a read-only key: none)
        -- Opening a session is writing: read-only principals cannot.
        raise exception 'principal % may not open sessions (it holds no write grant)', me.principal_id
            using errcode = '42501';
    end if;
    perform data._require_org(me.org_id);
    -- Insert first, then decide: a concurrent opener of the same new session waits here
    -- for the first one's commit, and then joins only if it holds a write grant on it.
    insert into data.sessions (org_id, session_id, expires_at)
    select me.org_id, p_session_id, now() + o.session_ttl from data.orgs o where o.org_id = me.org_id
    on conflict (org_id, session_id) do nothing;
    get diagnostics opened = row_count;
    if opened = 0 and not exists (
            select 1 from data.grants g
            where g.org_id = me.org_id and g.principal_id = me.principal_id
              and g.scope_kind = 'session' and g.scope_id = p_session_id and g.can_write) then
        -- Joining needs a write grant on it already; a read grant is never upgraded.
        raise exception 'principal % may not write to session %', me.principal_id, p_session_id
            using errcode = '42501';
    end if;
    insert into data.grants (org_id, principal_id, scope_kind, scope_id, can_write)
    values (me.org_id, me.principal_id, 'session', p_session_id, true)
    on conflict (org_id, principal_id, scope_kind, scope_id) do nothing;
    select s.expires_at into expires from data.sessions s where s.org_id = me.org_id and s.session_id = p_session_id;
    return expires;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid session identifier', sqlerrm, broken_constraint);
end
$$;
comment on function service.open_session(text) is 'Open a new session of the bound principal''s org (it needs some write grant), or confirm one it may write to.';

-- service.purge_expired_sessions: delete expired sessions and everything written in them.
create or replace function service.purge_expired_sessions()
returns table (org_id text, session_id text, documents bigint, fragments bigint)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    return query
    with expired as (
        select s.org_id, s.session_id from data.sessions s where s.expires_at <= now()
    ), counted as (
        select e.org_id, e.session_id,
               (select count(*) from data.documents d where d.org_id = e.org_id and d.session_id = e.session_id) as documents,
               (select count(*) from data.fragments f where f.org_id = e.org_id and f.session_id = e.session_id) as fragments
        from expired e
    ), dropped_fragments as (
        -- Sources go with their documents (cascade); fragments are labelled, not sourced, by session.
        delete from data.fragments f using expired e where f.org_id = e.org_id and f.session_id = e.session_id
    ), dropped_grants as (
        delete from data.grants g using expired e
        where g.org_id = e.org_id and g.scope_kind = 'session' and g.scope_id = e.session_id
    ), dropped_sessions as (
        delete from data.sessions s using expired e where s.org_id = e.org_id and s.session_id = e.session_id
    )
    select c.org_id, c.session_id, c.documents, c.fragments from counted c order by c.org_id, c.session_id;
end
$$;
comment on function service.purge_expired_sessions() is 'Delete expired sessions with their documents, fragments and grants.';

-- data._grant_target: the scope id a grant names; org and audit grants name the org.
create or replace function data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text)
returns text
language sql immutable
as $$ select case when p_scope_kind in ('org', 'audit') then coalesce(p_scope_id, p_org_id) else p_scope_id end $$;

-- service.create_principal: create or update a principal; p_db_role maps an existing login
-- to it (sql/functions/13_logins.sql creates logins and checks them).
create or replace function service.create_principal(
    p_org_id text, p_principal_id text, p_kind text default 'agent', p_display_name text default '',
    p_db_role name default null)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
begin
    perform data._require_org(p_org_id);
    if p_db_role is not null and not exists (select 1 from pg_roles r where r.rolname = p_db_role) then
        raise exception 'no such login role: %', p_db_role using errcode = '22023',
            hint = '`contexts principal create ORG NAME --db-role LOGIN` creates it.';
    end if;
    -- A role row-level security does not bind would read every org whatever it maps to.
    perform data._require_rls_login(p_db_role) where p_db_role is not null;
    if exists (select 1 from data.principals p
               where p.db_role = p_db_role and (p.org_id, p.principal_id) <> (p_org_id, p_principal_id)) then
        raise exception 'login % is already mapped to principal %', p_db_role,
            (select p.org_id || '/' || p.principal_id from data.principals p where p.db_role = p_db_role)
            using errcode = '23505';
    end if;
    insert into data.principals (org_id, principal_id, kind, display_name, db_role)
    values (p_org_id, p_principal_id, coalesce(p_kind, 'agent'), coalesce(p_display_name, ''), p_db_role)
    on conflict (org_id, principal_id) do update
        set kind = excluded.kind, display_name = coalesce(nullif(excluded.display_name, ''), principals.display_name),
            db_role = coalesce(excluded.db_role, principals.db_role), disabled_at = null;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid principal', sqlerrm, broken_constraint);
end
$$;
comment on function service.create_principal(text, text, text, text, name) is 'Create or update a principal (agent, human or service), optionally mapped to a login role.';

create or replace function service.grant_scope(
    p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text default null, p_can_write boolean default false)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
    target text := data._grant_target(p_org_id, p_scope_kind, p_scope_id);
begin
    perform data._require_principal(p_org_id, p_principal_id);
    if target is null then
        raise exception 'a % grant names the %', p_scope_kind, p_scope_kind using errcode = '22023';
    end if;
    perform service.ensure_scope(p_org_id,
        case when p_scope_kind = 'repo' then target end,
        case when p_scope_kind = 'persona' then target end,
        case when p_scope_kind = 'session' then target end);
    insert into data.grants (org_id, principal_id, scope_kind, scope_id, can_write)
    values (p_org_id, p_principal_id, p_scope_kind, target, coalesce(p_can_write, false))
    on conflict (org_id, principal_id, scope_kind, scope_id) do update set can_write = excluded.can_write;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid grant', sqlerrm, broken_constraint);
end
$$;
comment on function service.grant_scope(text, text, text, text, boolean) is 'Grant a principal read (and optionally write) on an org, repo, persona or session, or audit on the org.';

create or replace function service.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text default null)
returns boolean
language sql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    with gone as (
        delete from data.grants g
        where g.org_id = p_org_id and g.principal_id = p_principal_id and g.scope_kind = p_scope_kind
          and g.scope_id = data._grant_target(p_org_id, p_scope_kind, p_scope_id)
        returning 1
    )
    select exists (select 1 from gone)
$$;
comment on function service.revoke_scope(text, text, text, text) is 'Revoke one grant; false when there was none.';

create or replace function service.list_grants(p_org_id text)
returns table (principal_id text, kind text, scope_kind text, scope_id text, can_write boolean, created_at timestamptz)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select p.principal_id, p.kind, g.scope_kind, g.scope_id, g.can_write, g.created_at
    from data.principals p left join data.grants g on g.org_id = p.org_id and g.principal_id = p.principal_id
    where p.org_id = p_org_id
    order by p.principal_id, g.scope_kind, g.scope_id
$$;
comment on function service.list_grants(text) is 'Every principal of an org with its grants.';
