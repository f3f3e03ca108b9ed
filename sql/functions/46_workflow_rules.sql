-- Workflow rules (docs/adr/0022): in an org or one repo of it, path globs and symbol
-- globs that bring a Context version into a retrieval or session pack naming the files
-- (`path`, or `path#Symbol`) its step touches.
--
-- Who reads what. A rule is seen by the principals whose grants cover its scope (the
-- policy of data.context_rules). It may only name a Context that every reader of its
-- scope may read: a Context of the same org whose labels lie within the rule's scope,
-- or one a live subscription gives the rule's org (or its repo). At match time the
-- Context must still be readable by the caller in the request's scope
-- (data._context_versions): a revoked subscription, or one of another repo, makes the
-- rule bring nothing, and it does not say it matched.

-- data._rule_rows: rules as callers see them, with the reference they name.
create or replace function data._rule_rows(p_ids bigint[])
returns table (rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[],
               context_ref text, created_by text, created_at timestamptz, expires_at timestamptz,
               enabled boolean, expired boolean)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select r.rule_id, r.org_id, r.repo_id, r.name, r.path_globs, r.symbol_globs,
           'ctx_' || r.context_id || '@' || coalesce(r.version::text, 'latest'), r.created_by, r.created_at,
           r.expires_at, r.enabled, coalesce(r.expires_at <= clock_timestamp(), false)
    from data.context_rules r
    where r.rule_id = any (p_ids)
    order by r.rule_id
$$;

-- data._check_rule_globs: 22023 unless 1 to 32 globs in all, each 1 to 1024
-- characters without control characters.
create or replace function data._check_rule_globs(p_path_globs text[], p_symbol_globs text[])
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
    if cardinality(coalesce(p_path_globs, '{}')) + cardinality(coalesce(p_symbol_globs, '{}')) not between 1 and 32
       or exists (select 1 from unnest(coalesce(p_path_globs, '{}') || coalesce(p_symbol_globs, '{}')) g
                  where g is null or length(g) not between 1 and 1024 or g ~ '[\x01-\x1f\x7f]') then
        raise exception 'a rule has 1 to 32 path or symbol globs, each 1 to 1024 characters without control characters'
            using errcode = '22023';
    end if;
end
$$;

-- service.rule_create: a rule in a scope (org, or one repo: a write grant there, 42501),
-- naming a Context version the caller may read (P0002 otherwise; retired: 55000) that
-- every reader of the scope may read too (22023 otherwise). Names are unique per scope
-- (23505).
create or replace function service.rule_create(
    p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[] default '{}',
    p_symbol_globs text[] default '{}', p_expires_at timestamptz default null, p_enabled boolean default true)
returns table (rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[],
               context_ref text, created_by text, created_at timestamptz, expires_at timestamptz,
               enabled boolean, expired boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    parts text[];
    ctx_id bigint;
    pinned int;
    resolved record;
    ctx data.contexts;
    in_scope boolean;
    id bigint;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, null, null);
    perform data._require_scope(p_org_id, p_repo_id, null);
    if p_name is null or p_name !~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$' then
        raise exception 'a rule name is 1 to 128 letters, digits, spaces and _.:/- (starting with a letter or digit)'
            using errcode = '22023';
    end if;
    if p_expires_at is not null and p_expires_at <= statement_timestamp() then
        -- As for a pin: a rule that has expired already would match nothing, silently.
        raise exception 'expires_at % is not in the future', p_expires_at using errcode = '22023';
    end if;
    perform data._check_rule_globs(p_path_globs, p_symbol_globs);
    -- The caller may read it (P0002 otherwise, 22023 malformed).
    select * into resolved from data._resolve_context_refs(array[p_context_ref]);
    if resolved.retired then
        raise exception 'context % is retired', p_context_ref using errcode = '55000';
    end if;
    parts := regexp_match(p_context_ref, '@([0-9]+|latest)$');
    pinned := case when parts[1] = 'latest' then null else parts[1]::int end;
    ctx_id := resolved.context_id;
    select c.* into ctx from data.contexts c where c.context_id = ctx_id;
    -- ... and so does every reader of the rule's scope.
    in_scope := (ctx.org_id = p_org_id and ctx.persona_id is null and ctx.session_id is null
                 and (ctx.repo_id is null or ctx.repo_id is not distinct from p_repo_id))
        or exists (
            select 1 from data.context_subscriptions s
            where s.context_id = ctx_id and s.revoked_at is null and s.accepted_at is not null
              and s.subscriber_org_id = p_org_id
              and (s.subscriber_repo_id is null or s.subscriber_repo_id is not distinct from p_repo_id)
              and (pinned is null or s.version = pinned
                   or (s.version is null and pinned = (select max(v.version) from data.context_versions v
                                                       where v.context_id = ctx_id))));
    if not in_scope then
        raise exception 'context % is not readable by everyone who reads the rule''s scope', p_context_ref
            using errcode = '22023',
            hint = 'A rule names a Context of its own scope (or one above it), or one its org or repo subscribes to.';
    end if;
    insert into data.context_rules (org_id, repo_id, name, path_globs, symbol_globs, context_id, context_org_id,
                                    version, created_by, expires_at, enabled)
    values (p_org_id, p_repo_id, p_name, coalesce(p_path_globs, '{}'), coalesce(p_symbol_globs, '{}'), ctx_id,
            ctx.org_id, pinned, me.principal_id, p_expires_at, coalesce(p_enabled, true))
    returning data.context_rules.rule_id into id;
    return query select * from data._rule_rows(array[id]);
end
$$;
comment on function service.rule_create(text, text, text, text, text[], text[], timestamptz, boolean)
    is 'Create a workflow rule: path or symbol globs that bring a Context version into retrievals naming touched files (write grant on the rule''s scope).';

-- service.rule_delete: delete a rule the caller sees (P0002 otherwise), with a write grant
-- on its scope (42501).
create or replace function service.rule_delete(p_rule_id bigint)
returns table (rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[],
               context_ref text, created_by text, created_at timestamptz, expires_at timestamptz,
               enabled boolean, expired boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    rule data.context_rules;
begin
    select * into me from data._principal_or_raise();
    select r.* into rule from data.context_rules r
    where r.rule_id = p_rule_id and r.org_id = me.org_id
      and (r.repo_id is null or data.acl_org_wide() or r.repo_id = any (data.acl_repos()));
    if rule.rule_id is null then
        raise exception 'unknown rule: %', p_rule_id using errcode = 'P0002';
    end if;
    perform data._require_write(rule.org_id, rule.repo_id, null, null);
    return query select * from data._rule_rows(array[rule.rule_id]);
    delete from data.context_rules r where r.rule_id = rule.rule_id;
end
$$;
comment on function service.rule_delete(bigint) is 'Delete a workflow rule (write grant on its scope).';

-- api.rules_list: the rules a retrieval in this scope would consult (the org's, and the
-- repo's when one is named), row-level security bounding them; expired and disabled
-- ones too, flagged.
create or replace function api.rules_list(p_org_id text, p_repo_id text default null)
returns table (rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[],
               context_ref text, created_by text, created_at timestamptz, expires_at timestamptz,
               enabled boolean, expired boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, null, null);
    perform data._require_scope(p_org_id, p_repo_id, null);
    return query select * from data._rule_rows(array(
        select r.rule_id from data.context_rules r
        where r.org_id = p_org_id and (r.repo_id is null or r.repo_id is not distinct from p_repo_id)));
end
$$;
comment on function api.rules_list(text, text)
    is 'Workflow rules a retrieval in this scope consults (the org''s and the repo''s), as row-level security shows them.';

-- api.rule_matches: the live rules of the request's scope whose globs match one of the
-- touched entries (`path` or `path#Symbol`), each with the Context version it brings
-- for this caller; a rule whose Context the caller may not read (or which is retired)
-- is left out, as if it had not matched. Invoker: row-level security bounds the rules,
-- data._context_versions the Contexts (within the request's repo). In rule order.
create or replace function api.rule_matches(p_org_id text, p_repo_id text, p_touching text[])
returns table (rule_id bigint, name text, ref text)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    with touched as (
        select split_part(t, '#', 1) as path,
               case when strpos(t, '#') > 0 then substr(t, strpos(t, '#') + 1) end as symbol
        from unnest(p_touching) t
        where t is not null
    ), matched as (
        select r.* from data.context_rules r
        where r.org_id = p_org_id and (r.repo_id is null or r.repo_id is not distinct from p_repo_id)
          and r.enabled and (r.expires_at is null or r.expires_at > clock_timestamp())
          and exists (
              select 1 from touched t
              where exists (select 1 from unnest(r.path_globs) g where t.path ~ data._glob_regex(g))
                 or (t.symbol is not null
                     and exists (select 1 from unnest(r.symbol_globs) g where t.symbol ~ data._glob_regex(g))))
    )
    select m.rule_id, m.name, 'ctx_' || m.context_id || '@' || v.version
    from matched m
    join data.contexts c on c.context_id = m.context_id and c.retired_at is null
    cross join lateral (select max(rv.version) as version from data._context_versions(true, p_repo_id) rv
                        where rv.context_id = m.context_id and (m.version is null or rv.version = m.version)) v
    where v.version is not null
    order by m.rule_id
$$;
comment on function api.rule_matches(text, text, text[])
    is 'Workflow rules of a scope matching touched paths or symbols, with the Context version each brings that the caller may read (others left out, unsaid).';
