-- Authentication and binding: a bearer token (api.authenticate) or an administrator
-- (api.bind_principal) binds a principal to the transaction, which
-- data.current_principal (10_access.sql) reads back; api.whoami shows it, and
-- api.authorize_write checks a write before it is made. After 10_access.sql: api.whoami
-- is plain SQL, whose body is checked when it is created.

create or replace function data._bind(p_org_id text, p_principal_id text)
returns void
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    nonce text := gen_random_uuid()::text || gen_random_uuid()::text;
begin
    if pg_is_in_recovery() then
        -- A hot standby writes nothing: the binding is a setting signed for this backend
        -- and transaction (data._standby_binding reads it back).
        perform set_config('contexts.binding',
            concat_ws('.', 'standby', data._standby_signature(p_org_id, p_principal_id),
                      encode(convert_to(p_org_id, 'UTF8'), 'hex'), encode(convert_to(p_principal_id, 'UTF8'), 'hex')),
            true);
        return;
    end if;
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
    -- A hot standby (a read replica) writes nothing: the primary stamps the key when the
    -- service checks it there (docs/adr/0020-read-replicas.md).
    if not pg_is_in_recovery() then
        update data.api_keys a set last_used_at = now()
        where a.key_id = (select b.key_id from data.api_keys b
                          where b.key_id = k.key_id and (b.last_used_at is null or b.last_used_at < now() - interval '1 minute')
                          for update skip locked);
    end if;
    perform data._bind(k.org_id, k.principal_id);
    return query select k.org_id, k.principal_id, k.key_id;
end
$$;
comment on function api.authenticate(text) is 'Bind the principal of an API key to the current transaction.';

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
