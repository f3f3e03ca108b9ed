-- Access checks: who the current transaction acts for, and what it may read and write.
-- Row-level policies (sql/policies) call the data.acl_* functions in scalar subqueries,
-- so each is one InitPlan per statement, not a call per row. Binding a principal is in
-- 11_auth.sql, administration in 12_admin.sql.

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

-- data._require_scope: P0002 for a repo or persona the org does not have: a misspelled
-- scope in a read is an error, not an empty answer. (Repos and personas are created by
-- writes and grants; sessions are checked by the grants, data._require_read.)
create or replace function data._require_scope(p_org_id text, p_repo_id text, p_persona_id text)
returns void
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    if p_repo_id is not null
       and not exists (select 1 from data.repos r where r.org_id = p_org_id and r.repo_id = p_repo_id) then
        raise exception 'unknown repo % in org %', p_repo_id, p_org_id using errcode = 'P0002';
    end if;
    if p_persona_id is not null
       and not exists (select 1 from data.personas p where p.org_id = p_org_id and p.persona_id = p_persona_id) then
        raise exception 'unknown persona % in org %', p_persona_id, p_org_id using errcode = 'P0002';
    end if;
end
$$;

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

-- The current principal ----------------------------------------------------------

-- data._transaction_identity: what names this transaction on every node that works
-- for it. On one server (a primary or a hot standby): the backend pid and the
-- transaction's start time. Where Citus is installed, its distributed transaction id
-- (initiator node, transaction number, stamp: get_current_transaction_id()), which the
-- coordinator hands to every worker backend that runs a shard query of the transaction;
-- until the coordinator has one (transaction number 0) the local form. Dynamic SQL, so
-- that a server without Citus never resolves its function.
create or replace function data._transaction_identity()
returns text
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    citus record;
begin
    if to_regprocedure('pg_catalog.get_current_transaction_id()') is not null then
        execute 'select t.initiator_node_identifier as node, t.transaction_number as number,'
                ' t.transaction_stamp as stamp from pg_catalog.get_current_transaction_id() t' into citus;
        if citus.number is not null and citus.number <> 0 then
            return concat_ws(':', 'citus', citus.node, citus.number, extract(epoch from citus.stamp));
        end if;
    end if;
    return concat_ws(':', 'local', pg_backend_pid(), extract(epoch from transaction_timestamp()));
end
$$;
comment on function data._transaction_identity()
    is 'This transaction''s identity on every node working for it (Citus''s distributed transaction id, else backend and start).';

-- data._binding_mac: the signature of a binding's ids (hex-encoded org, principal and
-- key id, dot-separated: an unambiguous message) for this transaction
-- (data._transaction_identity: a signature made in one transaction is worth nothing in
-- the next). A keyed hash in HMAC's two passes, sha256(k_out || sha256(k_in || message)),
-- with two keys derived from data.binding_keys (no caller role may read it; a reference
-- table on Citus, so every node signs alike); the outer pass has a fixed-length input, so
-- the inner hash cannot be extended.
create or replace function data._binding_mac(p_ids text)
returns text
language plpgsql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    secret bytea;
begin
    select k.secret into secret from data.binding_keys k where k.key_id = 1;
    return encode(sha256(sha256(secret || '\x6f75746572'::bytea)
                         || sha256(sha256(secret || '\x696e6e6572'::bytea)
                                   || convert_to(concat_ws('.', p_ids, data._transaction_identity()), 'UTF8'))),
                  'hex');
end
$$;
comment on function data._binding_mac(text) is 'Signature of a binding''s hex-encoded ids for this transaction, the same on every node working for it.';

-- data._binding_ids: the message data._binding_mac signs for (org, principal, key): each
-- id hex-encoded (a binding without a key names an empty key id).
create or replace function data._binding_ids(p_org_id text, p_principal_id text, p_key_id text)
returns text
language sql immutable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select concat_ws('.', encode(convert_to(p_org_id, 'UTF8'), 'hex'),
                     encode(convert_to(p_principal_id, 'UTF8'), 'hex'),
                     encode(convert_to(coalesce(p_key_id, ''), 'UTF8'), 'hex'))
$$;

-- data._binding: who this transaction acts for, and with which API key. First a binding
-- made in this transaction (service.authenticate, service.bind_principal): the setting
-- contexts.binding, 'signed.<signature>.<org hex>.<principal hex>.<key id hex>' (the last
-- empty for a binding without a key), when its signature (data._binding_mac) is valid
-- for this transaction, which any node working for it verifies alike (a primary, a hot
-- standby, a Citus worker); a forged, tampered or replayed setting binds nobody. The
-- signature is checked on the hex as given, before anything is decoded, so a forged
-- setting naming bytes that are no text binds nobody instead of raising. Else the
-- principal mapped to the login (session_user cannot be changed without superuser),
-- without a key. Disabled principals bind nobody. Security definer: it reads principals
-- past their own policies. One PL/pgSQL function (its plans cached), as it runs in
-- every statement's policies.
create or replace function data._binding(out org_id text, out principal_id text, out key_id text)
language plpgsql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    binding constant text := nullif(current_setting('contexts.binding', true), '');
    part text[];
begin
    if binding ~ '^signed\.[0-9a-f]{64}\.[0-9a-f]+\.[0-9a-f]+\.[0-9a-f]*$' then
        part := string_to_array(binding, '.');
        if part[2] = data._binding_mac(concat_ws('.', part[3], part[4], part[5])) then
            select p.org_id, p.principal_id, nullif(convert_from(decode(part[5], 'hex'), 'UTF8'), '')
              into org_id, principal_id, key_id
            from data.principals p
            where p.org_id = convert_from(decode(part[3], 'hex'), 'UTF8')
              and p.principal_id = convert_from(decode(part[4], 'hex'), 'UTF8')
              and p.disabled_at is null;
            if org_id is not null then
                return;
            end if;
        end if;
    end if;
    select p.org_id, p.principal_id, null into org_id, principal_id, key_id
    from data.principals p
    where p.db_role = session_user and p.disabled_at is null
    limit 1;
end
$$;
comment on function data._binding() is 'Org, principal and API key (null: none) the current transaction acts for.';

-- data.current_principal: the principal this transaction acts for (data._binding
-- without the key).
create or replace function data.current_principal(out org_id text, out principal_id text)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select b.org_id, b.principal_id from data._binding() b $$;
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

-- data._acl: the current principal's effective grants of one kind (read or write): its
-- grants intersected with the restriction of the API key it was bound with
-- (data.api_keys; a binding without a key is not restricted):
--   * a read-only key holds no write grant at all;
--   * a key restricted to repos holds a repo grant on each of them its principal's grants
--     cover (a repo grant, or the org grant, which covers every repo; with write where
--     that grant has it), its principal's session grants, and nothing else: no org,
--     persona or audit grant. Org-wide knowledge (no label) stays visible, as to every
--     principal of the org.
-- A session grant lasts as long as the session.
create or replace function data._acl(p_kind text, p_write boolean default false)
returns text[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    -- One pass over the principal's grants: each grant gives the scope ids it stands
    -- for under the key's restriction (k.repos null: itself), read-only keys none to write.
    select coalesce(array_agg(distinct e.scope_id order by e.scope_id), '{}')
    from data._binding() me
    left join data.api_keys k on k.key_id = me.key_id
    join data.grants g on g.org_id = me.org_id and g.principal_id = me.principal_id
    cross join lateral unnest(case
        when k.repos is null or g.scope_kind = 'session' or (g.scope_kind = 'repo' and g.scope_id = any(k.repos))
            then array[g.scope_id]
        when g.scope_kind = 'org' and p_kind = 'repo' then k.repos  -- the org grant covers every repo
        else '{}'::text[] end) e(scope_id)
    where (g.scope_kind = p_kind or (p_kind = 'repo' and g.scope_kind = 'org' and k.repos is not null))
      and (g.can_write or not p_write)
      and not (p_write and coalesce(k.read_only, false))
      and (g.scope_kind <> 'session' or exists (
              select 1 from data.sessions s
              where s.org_id = g.org_id and s.session_id = g.scope_id
                and (s.expires_at is null or s.expires_at > statement_timestamp())))
$$;

-- data._acl_writes: whether the current principal holds any effective write grant (what
-- opening a session asks for).
create or replace function data._acl_writes()
returns boolean
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select exists (select 1 from unnest(array['org', 'repo', 'persona', 'session']) k
                   where cardinality(data._acl(k, true)) > 0)
$$;
comment on function data._acl_writes() is 'True when the current principal (through its key''s restriction) may write somewhere.';

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
            perform service.open_session(p_session_id);  -- refused unless the principal may write somewhere
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
