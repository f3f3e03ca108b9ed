-- Authentication and binding: a bearer token (service.authenticate) or an administrator
-- (service.bind_principal) binds a principal to the transaction, which
-- data.current_principal (10_access.sql) reads back; api.whoami shows it, and
-- service.authorize_write checks a write before it is made. After 10_access.sql: api.whoami
-- is plain SQL, whose body is checked when it is created.

-- data._bind: bind a principal (and the key it authenticated with) to this transaction:
-- a signed setting (data._binding reads it back), set with a SET LOCAL statement, which Citus
-- propagates to the workers running the transaction's shard queries
-- (citus.propagate_set_commands = 'local'; a set_config() call is never propagated). It
-- writes nothing, so it works the same on a primary, a hot standby and a Citus node,
-- and a rolled-back savepoint undoes it.
create or replace function data._bind(p_org_id text, p_principal_id text, p_key_id text default null)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    execute format('set local contexts.binding = %L',
                   concat_ws('.', 'signed', data._binding_mac(data._binding_ids(p_org_id, p_principal_id, p_key_id)),
                             data._binding_ids(p_org_id, p_principal_id, p_key_id)));
end
$$;

-- service.authenticate: bind the principal of a bearer token to this transaction, limited by
-- the key's restriction (data._acl). Unknown or revoked tokens raise 28000 (HTTP 401), and
-- so do expired ones, saying when the key expired. The service's role alone may call it:
-- an analyst holding someone's key must not act as its principal in SQL (nor try keys
-- there, where no HTTP throttle counts the failures).
create or replace function service.authenticate(p_token text)
returns table (org_id text, principal_id text, key_id text)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    k record;
begin
    select a.key_id, a.org_id, a.principal_id, a.expires_at into k
    from data.api_keys a
    join data.principals p on p.org_id = a.org_id and p.principal_id = a.principal_id
    where a.key_hash = sha256(convert_to(coalesce(p_token, ''), 'UTF8'))
      and a.revoked_at is null and p.disabled_at is null;
    if k.key_id is null then
        raise exception 'invalid or revoked API key' using errcode = '28000';
    end if;
    if k.expires_at <= now() then
        raise exception 'API key % expired at % UTC; ask for a new one',
            k.key_id, to_char(k.expires_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') using errcode = '28000',
            hint = 'An administrator makes one with `contexts key create ORG PRINCIPAL --expires ...`.';
    end if;
    -- At most once a minute, and never waiting: a concurrent request holding the row
    -- (until its transaction ends) just skips the refresh.
    -- A hot standby (a read replica) writes nothing: the primary stamps the key when the
    -- service checks it there (docs/adr/0020-read-replicas.md).
    if not pg_is_in_recovery() then
        update data.api_keys a set last_used_at = now()
        where a.key_id = (select b.key_id from data.api_keys b
                          where b.key_id = k.key_id and (b.last_used_at is null or b.last_used_at < now() - interval '1 minute')
                          for update skip locked);
    end if;
    perform data._bind(k.org_id, k.principal_id, k.key_id);
    return query select k.org_id, k.principal_id, k.key_id;
end
$$;
comment on function service.authenticate(text) is 'Bind the principal of an API key (within the key''s restriction) to the current transaction.';

-- service.bind_principal: act as a principal without a key. Administrators only (the CLI
-- connects as the migrator); no role is granted it.
create or replace function service.bind_principal(p_org_id text, p_principal_id text)
returns void
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_principal(p_org_id, p_principal_id, p_enabled => true);
    perform data._bind(p_org_id, p_principal_id);
end
$$;
comment on function service.bind_principal(text, text) is 'Administrators: act as a principal for the rest of this transaction.';

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

-- service.authorize_write: raise as a write into this scope would (42501, P0002), and
-- otherwise do nothing; lets the service refuse a request before reading its body.
create or replace function service.authorize_write(
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
comment on function service.authorize_write(text, text, text, text) is 'Raise unless the bound principal may write into this scope; changes nothing.';

-- API keys ---------------------------------------------------------------------------
-- Administered by the owner/migrator (`contexts key ...`); no caller role is granted them.

-- service.create_api_key: store a key's SHA-256 (the token itself is made and shown once
-- by the caller, never stored), with its limits: when it expires (null: never), whether
-- it only reads, and the only repos it reaches (null: all its principal's grants cover).
-- Repos must exist in the org (P0002); an expiry must lie ahead (22023).
create or replace function service.create_api_key(
    p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text default '',
    p_expires_at timestamptz default null, p_read_only boolean default false, p_repos text[] default null)
returns timestamptz
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    broken_constraint text;
    created timestamptz;
    r text;
begin
    perform data._require_principal(p_org_id, p_principal_id);
    if p_expires_at is not null and p_expires_at <= now() then
        raise exception 'a key''s expiry must lie ahead (% is past)', p_expires_at using errcode = '22023';
    end if;
    if p_repos is not null and (cardinality(p_repos) = 0 or array_position(p_repos, null) is not null) then
        raise exception 'a key restricted to repos names at least one (and no null)' using errcode = '22023';
    end if;
    foreach r in array coalesce(p_repos, '{}') loop
        perform data._require_scope(p_org_id, r, null);
    end loop;
    insert into data.api_keys (key_id, org_id, principal_id, key_hash, label, expires_at, read_only, repos)
    values (p_key_id, p_org_id, p_principal_id, p_key_hash, coalesce(p_label, ''), p_expires_at,
            coalesce(p_read_only, false), (select array_agg(distinct x order by x) from unnest(p_repos) x))
    returning api_keys.created_at into created;
    return created;
exception when check_violation then
    get stacked diagnostics broken_constraint = constraint_name;
    perform data._raise_invalid('invalid API key', sqlerrm, broken_constraint);
end
$$;
comment on function service.create_api_key(text, text, text, bytea, text, timestamptz, boolean, text[]) is 'Store a new key (its SHA-256) for a principal, with its expiry and restriction.';

create or replace function service.list_api_keys(p_org_id text)
returns table (key_id text, principal_id text, label text, created_at timestamptz, last_used_at timestamptz,
               revoked_at timestamptz, expires_at timestamptz, read_only boolean, repos text[])
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select k.key_id, k.principal_id, k.label, k.created_at, k.last_used_at, k.revoked_at,
           k.expires_at, k.read_only, k.repos
    from data.api_keys k where k.org_id = p_org_id order by k.created_at, k.key_id
$$;
comment on function service.list_api_keys(text) is 'Keys of an org with their limits (never their hashes).';

create or replace function service.revoke_api_key(p_key_id text)
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
comment on function service.revoke_api_key(text) is 'Revoke a key for good; false when unknown or already revoked.';
