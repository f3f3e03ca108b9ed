-- Scopes, principals and their ACL: who the current transaction acts for, what it may
-- read and write. Row-level policies (sql/policies) call the data.acl_* functions in
-- scalar subqueries, so each is one InitPlan per statement, not a call per row.

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

-- The current principal ----------------------------------------------------------

-- data.current_principal: the principal this transaction acts for. First a binding
-- made in this very transaction and backend (api.authenticate, api.bind_principal),
-- named by the nonce in contexts.binding; else the principal mapped to the login
-- (session_user cannot be changed without superuser). Disabled principals bind nobody.
-- Security definer: it reads bindings and principals past their own policies.
create or replace function data.current_principal(out org_id text, out principal_id text)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select p.org_id, p.principal_id
    from (
        select b.org_id, b.principal_id, 1 as preference
        from data.principal_bindings b
        where b.nonce = nullif(current_setting('contexts.binding', true), '')
          and b.backend_pid = pg_backend_pid()
          and b.xact_id = pg_current_xact_id_if_assigned()
        union all
        select p.org_id, p.principal_id, 2
        from data.principals p
        where p.db_role = session_user
    ) c
    join data.principals p on p.org_id = c.org_id and p.principal_id = c.principal_id
    where p.disabled_at is null
    order by c.preference
    limit 1
$$;
comment on function data.current_principal() is 'Org and principal the current transaction acts for (null: nobody).';

create or replace function data.acl_org()
returns text
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select (data.current_principal()).org_id $$;
comment on function data.acl_org() is 'The current principal''s org (null: none bound, nothing visible).';

create or replace function data.acl_principal()
returns text
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select (data.current_principal()).principal_id $$;

-- data._acl: the current principal's grants of one kind (read or write).
create or replace function data._acl(p_kind text, p_write boolean default false)
returns text[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select coalesce(array_agg(g.scope_id order by g.scope_id), '{}')
    from data.current_principal() me
    join data.grants g on g.org_id = me.org_id and g.principal_id = me.principal_id
    where g.scope_kind = p_kind
      and (g.can_write or not p_write)
      -- A session grant lasts as long as the session.
      and (p_kind <> 'session' or exists (
              select 1 from data.sessions s
              where s.org_id = g.org_id and s.session_id = g.scope_id
                and (s.expires_at is null or s.expires_at > statement_timestamp())))
$$;

create or replace function data.acl_org_wide()
returns boolean
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select cardinality(data._acl('org')) > 0 $$;
comment on function data.acl_org_wide() is 'True when the current principal holds an org grant (every repo and persona).';

create or replace function data.acl_repos()
returns text[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select data._acl('repo') $$;

create or replace function data.acl_personas()
returns text[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select data._acl('persona') $$;

create or replace function data.acl_sessions()
returns text[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select data._acl('session') $$;
comment on function data.acl_sessions() is 'Live (unexpired) sessions the current principal holds a grant on.';

create or replace function data.acl_audit()
returns boolean
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select cardinality(data._acl('audit')) > 0 $$;

-- data._bypasses_rls: the invoker is a superuser or has BYPASSRLS (a DBA at psql).
create or replace function data._bypasses_rls()
returns boolean
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$ select coalesce((select r.rolsuper or r.rolbypassrls from pg_roles r where r.rolname = current_user), false) $$;

-- data._principal_or_raise: the bound principal, or 42501 when none is bound.
create or replace function data._principal_or_raise(out org_id text, out principal_id text)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    select c.org_id, c.principal_id into org_id, principal_id from data.current_principal() c;
    if org_id is null then
        raise exception 'no principal is bound to this transaction' using errcode = '42501',
            hint = 'Authenticate with an API key (HTTP), pass --principal (CLI), or log in as a mapped role (SQL).';
    end if;
end
$$;

-- data._require_read: the requested scope must lie within the principal's grants:
-- asking for a scope you hold no grant on is an error (42501), not an empty answer.
-- Called by invoker functions; a DBA who bypasses row-level security and binds
-- nobody reads as a DBA.
create or replace function data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text)
returns void
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
begin
    select * into me from data.current_principal();
    if me.org_id is null then
        if data._bypasses_rls() then
            perform data._require_org(p_org_id);
            return;
        end if;
        perform data._principal_or_raise();
    end if;
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not read org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    if p_repo_id is not null and not (data.acl_org_wide() or p_repo_id = any(data.acl_repos())) then
        raise exception 'principal % holds no grant on repo %', me.principal_id, p_repo_id using errcode = '42501';
    end if;
    if p_persona_id is not null and not (data.acl_org_wide() or p_persona_id = any(data.acl_personas())) then
        raise exception 'principal % holds no grant on persona %', me.principal_id, p_persona_id using errcode = '42501';
    end if;
    if p_session_id is not null and not (p_session_id = any(data.acl_sessions())) then
        raise exception 'principal % holds no grant on a live session %', me.principal_id, p_session_id
            using errcode = '42501';
    end if;
end
$$;

-- data._require_write: the bound principal must hold write grants covering every
-- label of what it writes (org-level knowledge needs an org write grant). Writing
-- into a session that does not exist yet opens it for the writer.
create or replace function data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    org_write boolean;
begin
    select * into me from data._principal_or_raise();
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not write to org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    org_write := cardinality(data._acl('org', true)) > 0;
    if p_session_id is not null then
        if not exists (select 1 from data.sessions s where s.org_id = p_org_id and s.session_id = p_session_id) then
            perform api.open_session(p_session_id);  -- refused unless the principal may write somewhere
        end if;
        if not p_session_id = any(data._acl('session', true)) then
            raise exception 'principal % may not write to session %', me.principal_id, p_session_id
                using errcode = '42501';
        end if;
    end if;
    if p_repo_id is not null and not (org_write or p_repo_id = any(data._acl('repo', true))) then
        raise exception 'principal % may not write to repo %', me.principal_id, p_repo_id using errcode = '42501';
    end if;
    if p_persona_id is not null and not (org_write or p_persona_id = any(data._acl('persona', true))) then
        raise exception 'principal % may not write to persona %', me.principal_id, p_persona_id using errcode = '42501';
    end if;
    if p_repo_id is null and p_persona_id is null and p_session_id is null and not org_write then
        raise exception 'principal % may not write org-wide knowledge in %', me.principal_id, p_org_id
            using errcode = '42501';
    end if;
end
$$;

-- api.authorize_write: raise as a write into this scope would (42501, P0002), and
-- otherwise do nothing; lets the service refuse a request before reading its body.
create or replace function api.authorize_write(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    -- The very check a write makes; the block's own error undoes what it did (opening
    -- a new session), while a refusal (42501) passes through to the caller.
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    raise exception 'authorized' using errcode = 'CTXOK';
exception when sqlstate 'CTXOK' then
    null;
end
$$;
comment on function api.authorize_write(text, text, text, text) is 'Raise unless the bound principal may write into this scope; changes nothing.';

-- Binding a principal to the transaction -----------------------------------------

create or replace function data._bind(p_org_id text, p_principal_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    nonce text := gen_random_uuid()::text || gen_random_uuid()::text;
begin
    -- Earlier transactions' bindings of this backend are dead; so are old ones of others.
    delete from data.principal_bindings b
    where b.backend_pid = pg_backend_pid() or b.created_at < now() - interval '1 day';
    insert into data.principal_bindings (nonce, backend_pid, xact_id, org_id, principal_id)
    values (nonce, pg_backend_pid(), pg_current_xact_id(), p_org_id, p_principal_id);
    perform set_config('contexts.binding', nonce, true);
end
$$;

-- api.authenticate: bind the principal of a bearer token to this transaction.
-- Unknown or revoked tokens raise 28000 (HTTP 401).
create or replace function api.authenticate(p_token text)
returns table (org_id text, principal_id text, key_id text)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    k record;
begin
    select a.key_id, a.org_id, a.principal_id into k
    from data.api_keys a
    join data.principals p on p.org_id = a.org_id and p.principal_id = a.principal_id
    where a.key_hash = sha256(convert_to(coalesce(p_token, ''), 'UTF8'))
      and a.revoked_at is null and p.disabled_at is null;
    if k.key_id is null then
        raise exception 'invalid or revoked API key' using errcode = '28000';
    end if;
    -- At most once a minute, and never waiting: a concurrent request holding the row
    -- (until its transaction ends) just skips the refresh.
    update data.api_keys a set last_used_at = now()
    where a.key_id = (select b.key_id from data.api_keys b
                      where b.key_id = k.key_id and (b.last_used_at is null or b.last_used_at < now() - interval '1 minute')
                      for update skip locked);
    perform data._bind(k.org_id, k.principal_id);
    return query select k.org_id, k.principal_id, k.key_id;
end
$$;
comment on function api.authenticate(text) is 'Bind the principal of an API key to the current transaction.';

-- data._require_principal: P0002 for a principal that is not in the org (or, with
-- p_enabled, that is disabled).
create or replace function data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean default false)
returns void
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_org(p_org_id);
    if not exists (select 1 from data.principals p
                   where p.org_id = p_org_id and p.principal_id = p_principal_id
                     and (p.disabled_at is null or not p_enabled)) then
        raise exception 'unknown principal % in org %', p_principal_id, p_org_id using errcode = 'P0002',
            hint = 'Create it with `contexts principal create ORG PRINCIPAL`.';
    end if;
end
$$;

-- data._grant_target: the scope id a grant names; org and audit grants name the org.
create or replace function data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text)
returns text
language sql immutable
as $$ select case when p_scope_kind in ('org', 'audit') then coalesce(p_scope_id, p_org_id) else p_scope_id end $$;

-- api.bind_principal: act as a principal without a key. Administrators only (the CLI
-- connects as the migrator); no role is granted it.
create or replace function api.bind_principal(p_org_id text, p_principal_id text)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_principal(p_org_id, p_principal_id, p_enabled => true);
    perform data._bind(p_org_id, p_principal_id);
end
$$;
comment on function api.bind_principal(text, text) is 'Administrators: act as a principal for the rest of this transaction.';

create or replace function api.whoami()
returns table (org_id text, principal_id text, org_wide boolean, repos text[], personas text[],
               sessions text[], audit boolean)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select data.acl_org(), data.acl_principal(), data.acl_org_wide(), data.acl_repos(),
           data.acl_personas(), data.acl_sessions(), data.acl_audit()
$$;
comment on function api.whoami() is 'The principal this transaction acts for, and its read ACL.';

-- Orgs, scopes, principals, grants, keys (administration) ------------------------

-- api.create_org: idempotent; creates the org's partitions. Returns the org id.
create or replace function api.create_org(
    p_org_id text, p_display_name text default '', p_session_ttl interval default null)
returns text
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    insert into data.orgs (org_id, display_name, session_ttl)
    values (p_org_id, coalesce(p_display_name, ''), coalesce(p_session_ttl, interval '24 hours'))
    on conflict (org_id) do update
        set display_name = coalesce(nullif(excluded.display_name, ''), orgs.display_name),
            session_ttl = coalesce(p_session_ttl, orgs.session_ttl);
    perform data._create_tenant_partitions(p_org_id);
    return p_org_id;
exception when check_violation then
    raise exception 'invalid org: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.create_org(text, text, interval) is 'Create (or rename) a tenant org and its partitions.';

-- data._create_tenant_partitions: the org's partition of each tenant table, named by
-- the org's number (never by user text). Each partition gets every index of its parent
-- (GIN, simhash bands, one HNSW per model), so a query plans against its tenant's
-- indexes only.
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
    foreach t in array array['fragments', 'embeddings', 'bm25_postings'] loop
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


-- api.ensure_scope: create the repo and persona rows a write names, inside an org that
-- must already exist. Sessions are opened by api.open_session (with their expiry).
create or replace function api.ensure_scope(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null)
returns void
language plpgsql security definer
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
        -- on conflict: concurrent first writes into one new session all succeed.
        insert into data.sessions (org_id, session_id, expires_at)
        select p_org_id, p_session_id, now() + o.session_ttl from data.orgs o where o.org_id = p_org_id
        on conflict (org_id, session_id) do nothing;
    end if;
exception when check_violation then
    raise exception 'invalid scope identifier: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.ensure_scope(text, text, text, text) is 'Create missing repo/persona/session rows of an existing org.';

-- api.open_session: the bound principal opens a session of its org and gets read and
-- write on it; it expires after the org's session_ttl.
create or replace function api.open_session(p_session_id text)
returns timestamptz
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    opened int;
    expires timestamptz;
begin
    select * into me from data._principal_or_raise();
    if not exists (select 1 from data.grants g
                   where g.org_id = me.org_id and g.principal_id = me.principal_id and g.can_write) then
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
    raise exception 'invalid session identifier: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.open_session(text) is 'Open a new session of the bound principal''s org (it needs some write grant), or confirm one it may write to.';

-- api.purge_expired_sessions: delete expired sessions and everything written in them.
create or replace function api.purge_expired_sessions()
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
comment on function api.purge_expired_sessions() is 'Delete expired sessions with their documents, fragments and grants.';

create or replace function api.create_principal(
    p_org_id text, p_principal_id text, p_kind text default 'agent', p_display_name text default '',
    p_db_role name default null)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_org(p_org_id);
    if p_db_role is not null and not exists (select 1 from pg_roles r where r.rolname = p_db_role) then
        raise exception 'no such login role: %', p_db_role using errcode = '22023';
    end if;
    insert into data.principals (org_id, principal_id, kind, display_name, db_role)
    values (p_org_id, p_principal_id, coalesce(p_kind, 'agent'), coalesce(p_display_name, ''), p_db_role)
    on conflict (org_id, principal_id) do update
        set kind = excluded.kind, display_name = coalesce(nullif(excluded.display_name, ''), principals.display_name),
            db_role = coalesce(excluded.db_role, principals.db_role), disabled_at = null;
exception when check_violation then
    raise exception 'invalid principal: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.create_principal(text, text, text, text, name) is 'Create or update a principal (agent, human or service), optionally mapped to a login role.';

create or replace function api.grant_scope(
    p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text default null, p_can_write boolean default false)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    target text := data._grant_target(p_org_id, p_scope_kind, p_scope_id);
begin
    perform data._require_principal(p_org_id, p_principal_id);
    if target is null then
        raise exception 'a % grant names the %', p_scope_kind, p_scope_kind using errcode = '22023';
    end if;
    perform api.ensure_scope(p_org_id,
        case when p_scope_kind = 'repo' then target end,
        case when p_scope_kind = 'persona' then target end,
        case when p_scope_kind = 'session' then target end);
    insert into data.grants (org_id, principal_id, scope_kind, scope_id, can_write)
    values (p_org_id, p_principal_id, p_scope_kind, target, coalesce(p_can_write, false))
    on conflict (org_id, principal_id, scope_kind, scope_id) do update set can_write = excluded.can_write;
exception when check_violation then
    raise exception 'invalid grant: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.grant_scope(text, text, text, text, boolean) is 'Grant a principal read (and optionally write) on an org, repo, persona or session, or audit on the org.';

create or replace function api.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text default null)
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
comment on function api.revoke_scope(text, text, text, text) is 'Revoke one grant; false when there was none.';

create or replace function api.list_grants(p_org_id text)
returns table (principal_id text, kind text, scope_kind text, scope_id text, can_write boolean, created_at timestamptz)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select p.principal_id, p.kind, g.scope_kind, g.scope_id, g.can_write, g.created_at
    from data.principals p left join data.grants g on g.org_id = p.org_id and g.principal_id = p.principal_id
    where p.org_id = p_org_id
    order by p.principal_id, g.scope_kind, g.scope_id
$$;
comment on function api.list_grants(text) is 'Every principal of an org with its grants.';

-- api.create_api_key: store a key's SHA-256 (the token itself is made and shown once
-- by the caller, never stored).
create or replace function api.create_api_key(
    p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text default '')
returns timestamptz
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    created timestamptz;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    insert into data.api_keys (key_id, org_id, principal_id, key_hash, label)
    values (p_key_id, p_org_id, p_principal_id, p_key_hash, coalesce(p_label, ''))
    returning api_keys.created_at into created;
    return created;
exception when check_violation then
    raise exception 'invalid API key: %', sqlerrm using errcode = '22023';
end
$$;
comment on function api.create_api_key(text, text, text, bytea, text) is 'Store a new key (its SHA-256) for a principal.';

create or replace function api.list_api_keys(p_org_id text)
returns table (key_id text, principal_id text, label text, created_at timestamptz, last_used_at timestamptz,
               revoked_at timestamptz)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select k.key_id, k.principal_id, k.label, k.created_at, k.last_used_at, k.revoked_at
    from data.api_keys k where k.org_id = p_org_id order by k.created_at, k.key_id
$$;
comment on function api.list_api_keys(text) is 'Keys of an org (never their hashes).';

create or replace function api.revoke_api_key(p_key_id text)
returns boolean
language sql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    with revoked as (
        update data.api_keys k set revoked_at = now() where k.key_id = p_key_id and k.revoked_at is null
        returning 1
    )
    select exists (select 1 from revoked)
$$;
comment on function api.revoke_api_key(text) is 'Revoke a key for good; false when unknown or already revoked.';
