-- Logins of analysts: database roles in contexts_analyst, each mapped to a principal
-- (data.principals.db_role) whose grants row-level security applies to its SQL. The
-- owner/migrator calls these (`contexts analyst ...`, `contexts principal create
-- --db-role`); no caller role is granted them (sql/grants/10_roles.sql). Those that
-- create or alter roles are security invoker: they need the caller's own CREATEROLE
-- (and ADMIN OPTION on contexts_analyst), which a managed PostgreSQL may not give the
-- migrator; the CLI then prints the SQL a DBA runs instead. Passwords arrive as
-- SCRAM-SHA-256 verifiers (computed by the client, as psql's \password does), so no
-- clear-text password ever reaches the server, its logs or pg_stat_statements.

-- data._valid_login: a login name Contexts creates: lowercase, at most 63 bytes (a
-- longer name would be cut silently), never a reserved pg_ name.
create or replace function data._valid_login(p_login text)
returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_login is null or p_login !~ '^[a-z_][a-z0-9_.-]{0,62}$' or p_login like 'pg\_%' then
        raise exception 'invalid login name: % (lowercase letters, digits, _ . -, at most 63, not pg_...)',
            coalesce(p_login, '(null)') using errcode = '22023';
    end if;
    return p_login;
end
$$;

-- data._require_scram: refuse anything but a SCRAM-SHA-256 verifier.
create or replace function data._require_scram(p_verifier text)
returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_verifier is null or p_verifier !~ '^SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$' then
        raise exception 'a login''s password is given as its SCRAM-SHA-256 verifier, never in clear'
            using errcode = '22023';
    end if;
    return p_verifier;
end
$$;

-- service.create_login: a new login in contexts_analyst with this password verifier.
create or replace function service.create_login(p_login text, p_verifier text)
returns void
language plpgsql security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._valid_login(p_login);
    perform data._require_scram(p_verifier);
    if exists (select 1 from pg_roles r where r.rolname = p_login) then
        raise exception 'login % already exists', p_login using errcode = '42710';
    end if;
    begin
        -- Exactly an analyst: no attribute beyond LOGIN, one group role.
        execute format('create role %I login nosuperuser nocreatedb nocreaterole noreplication nobypassrls '
                       'password %L in role contexts_analyst', p_login, p_verifier);
    exception when insufficient_privilege then
        raise exception 'role % may not create logins', current_user using errcode = '42501',
            detail = 'Creating a login needs CREATEROLE and ADMIN OPTION on contexts_analyst (or a superuser).',
            hint = format('A DBA runs: create role %I login in role contexts_analyst; then sets its password '
                          '(psql: \password %I), and the same contexts command maps the existing login.',
                          p_login, p_login);
    end;
    execute format('comment on role %I is %L', p_login, 'Contexts analyst login (contexts analyst create).');
end
$$;
comment on function service.create_login(text, text) is 'Create an analyst login (member of contexts_analyst only) from a SCRAM-SHA-256 verifier.';

-- data._require_rls_login: refuse a role that row-level security does not bind (a
-- superuser, BYPASSRLS, or the owner of Contexts' objects): it cannot be an analyst,
-- and Contexts never alters it.
create or replace function data._require_rls_login(p_login text)
returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
    if exists (select 1 from pg_roles r
               where r.rolname = p_login
                 and (r.rolsuper or r.rolbypassrls or exists (
                        select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where c.relowner = r.oid and n.nspname in ('data', 'api', 'service')))) then
        raise exception 'login % bypasses row-level security (superuser, BYPASSRLS or owner): it cannot be an analyst',
            p_login using errcode = '22023';
    end if;
end
$$;

-- data._adopt_login: an existing login may be mapped to a principal only if row-level
-- security applies to it (not a superuser, no BYPASSRLS, owns no Contexts object) and
-- no principal maps it yet; it joins contexts_analyst unless it is an analyst or
-- auditor already. Returns whether it had to join.
create or replace function data._adopt_login(p_login text)
returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    r pg_roles;
    mapped text;
begin
    select * into r from pg_roles where rolname = p_login;
    if not found then
        raise exception 'no such login: %', p_login using errcode = 'P0002';
    end if;
    perform data._require_rls_login(p_login);
    select p.org_id || '/' || p.principal_id into mapped from data.principals p where p.db_role = p_login;
    if mapped is not null then
        raise exception 'login % is already mapped to principal %', p_login, mapped using errcode = '23505';
    end if;
    if pg_has_role(r.oid, 'contexts_analyst', 'member') or pg_has_role(r.oid, 'contexts_auditor', 'member') then
        return false;
    end if;
    execute format('grant contexts_analyst to %I', p_login);
    return true;
end
$$;

-- service.create_analyst: one step: the login (created from p_verifier when it does not
-- exist; an existing one is adopted, its password left alone), a human principal
-- mapped to it, and read grants given as 'org', 'audit', 'repo:ID', 'persona:ID' or
-- 'session:ID'. Returns whether it created the login.
create or replace function service.create_analyst(
    p_org_id text, p_principal_id text, p_login text, p_verifier text,
    p_grants text[] default '{}', p_display_name text default '')
returns boolean
language plpgsql security invoker
set search_path = pg_catalog, pg_temp
as $$
declare
    g text;
    kind text;
    created boolean := false;
begin
    perform data._require_org(p_org_id);
    if exists (select 1 from data.principals p where p.org_id = p_org_id and p.principal_id = p_principal_id) then
        raise exception 'principal % already exists in org %', p_principal_id, p_org_id using errcode = '23505',
            hint = 'Choose another name, or map a login to it with `contexts principal create ORG NAME --db-role LOGIN`.';
    end if;
    perform data._valid_login(p_login);
    if exists (select 1 from pg_roles r where r.rolname = p_login) then
        perform data._adopt_login(p_login);
    else
        perform service.create_login(p_login, p_verifier);
        created := true;
    end if;
    perform service.create_principal(p_org_id, p_principal_id, 'human', coalesce(p_display_name, ''), p_login::name);
    foreach g in array coalesce(p_grants, '{}') loop
        kind := split_part(g, ':', 1);
        if kind not in ('org', 'audit', 'repo', 'persona', 'session')
           or (kind in ('org', 'audit') and g <> kind)
           or (kind in ('repo', 'persona', 'session') and length(g) <= length(kind) + 1) then
            raise exception 'invalid grant: % (org, audit, repo:ID, persona:ID or session:ID)', g using errcode = '22023';
        end if;
        perform service.grant_scope(p_org_id, p_principal_id, kind, nullif(substr(g, length(kind) + 2), ''), false);
    end loop;
    return created;
end
$$;
comment on function service.create_analyst(text, text, text, text, text[], text) is 'Create (or adopt) a login, its human principal and its read grants in one step.';

-- service.set_login_password: rotate the password of a principal's login.
create or replace function service.set_login_password(p_org_id text, p_principal_id text, p_verifier text)
returns text
language plpgsql security invoker
set search_path = pg_catalog, pg_temp
as $$
declare
    login text;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    perform data._require_scram(p_verifier);
    select p.db_role into login from data.principals p where p.org_id = p_org_id and p.principal_id = p_principal_id;
    if exists (select 1 from data.principals p
               where p.org_id = p_org_id and p.principal_id = p_principal_id and p.disabled_at is not null) then
        raise exception 'principal % of org % is disabled (its access was revoked)', p_principal_id, p_org_id
            using errcode = '55000', hint = 'Give access again with a new analyst: `contexts analyst create`.';
    end if;
    if login is null then
        raise exception 'principal % of org % has no login', p_principal_id, p_org_id using errcode = 'P0002';
    end if;
    perform data._require_rls_login(login);
    execute format('alter role %I password %L', login, p_verifier);
    return login;
end
$$;
comment on function service.set_login_password(text, text, text) is 'Set a new password (as its SCRAM-SHA-256 verifier) on a principal''s login.';

-- service.disable_principal: the principal binds nobody from now on (its keys stop, its
-- login's SQL sees nothing); its rows, grants and traces stay for the audit trail.
-- Returns its login (null: none).
create or replace function service.disable_principal(p_org_id text, p_principal_id text)
returns text
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    login text;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    update data.principals p set disabled_at = coalesce(p.disabled_at, now())
    where p.org_id = p_org_id and p.principal_id = p_principal_id
    returning p.db_role into login;
    return login;
end
$$;
comment on function service.disable_principal(text, text) is 'Disable a principal for good (rows, grants and traces are kept).';

-- service.revoke_analyst: the login may no longer connect (NOLOGIN, no password, out of
-- the analyst and auditor roles, its open sessions ended) and its principal is
-- disabled; the role itself stays, so the audit trail keeps naming it. Returns the login.
create or replace function service.revoke_analyst(p_org_id text, p_principal_id text)
returns text
language plpgsql security invoker
set search_path = pg_catalog, pg_temp
as $$
declare
    login text := service.disable_principal(p_org_id, p_principal_id);
    grp text;
begin
    if login is null then
        raise exception 'principal % of org % has no login', p_principal_id, p_org_id using errcode = 'P0002';
    end if;
    perform data._require_rls_login(login);
    if exists (select 1 from pg_roles r where r.rolname = login) then
        execute format('alter role %I nologin password null', login);
        foreach grp in array array['contexts_analyst', 'contexts_auditor'] loop
            if exists (select 1 from pg_auth_members m
                       join pg_roles g on g.oid = m.roleid join pg_roles r on r.oid = m.member
                       where g.rolname = grp and r.rolname = login) then
                execute format('revoke %I from %I', grp, login);
            end if;
        end loop;
        begin
            perform pg_terminate_backend(a.pid) from pg_stat_activity a where a.usename = login;
        exception when insufficient_privilege then
            raise notice 'open sessions of % go on until they end (% may not end them)', login, current_user;
        end;
    end if;
    return login;
end
$$;
comment on function service.revoke_analyst(text, text) is 'End a login''s access (NOLOGIN, sessions ended) and disable its principal; history is kept.';

-- service.list_analysts: principals mapped to a login, with the login's state and grants.
create or replace function service.list_analysts(p_org_id text default null)
returns table (org_id text, principal_id text, login text, can_login boolean, member_of text[],
               disabled_at timestamptz, grants text[])
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select p.org_id, p.principal_id, p.db_role::text, coalesce(r.rolcanlogin, false),
           array(select grp.rolname::text from pg_auth_members m join pg_roles grp on grp.oid = m.roleid
                 where m.member = r.oid order by 1),
           p.disabled_at,
           array(select case when g.scope_kind in ('org', 'audit') then g.scope_kind
                             else g.scope_kind || ':' || g.scope_id end
                 from data.grants g
                 where g.org_id = p.org_id and g.principal_id = p.principal_id
                 order by g.scope_kind, g.scope_id)
    from data.principals p left join pg_roles r on r.rolname = p.db_role
    where p.db_role is not null and (p_org_id is null or p.org_id = p_org_id)
    order by p.org_id, p.principal_id
$$;
comment on function service.list_analysts(text) is 'Principals mapped to a login: the login''s state, groups and the principal''s grants.';
