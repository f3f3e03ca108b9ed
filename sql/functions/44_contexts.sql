-- Contexts: named, versioned bundles of fragments (SPEC "Context"), and subscriptions
-- that let another repo of the org, or another org, read a bundle without a copy.
-- docs/adr/0018.
--
-- Who reads what. A Context has scope labels like a fragment's; its own org's
-- principals whose grants cover those labels read every version of it. A live
-- subscription lets the principals of the subscriber org (of one repo of it, or all)
-- read exactly the members of the subscribed version (pinned, or the newest). One
-- definition says both, data._readable_context_versions; the row-level policies of the
-- four context tables (sql/policies) and the one door to the members' text past the
-- fragments' policy (service.context_candidates) both use it.
--
-- Membership rule: a version holds only fragments whose scope labels lie within the
-- Context's (a repo context holds org-wide and that repo's fragments, an org context
-- only org-wide ones), so whoever may read the Context by its scope may read each of
-- its fragments directly too: the bundle adds nothing for them. Only subscribers read
-- through it what their grants alone would not show.

-- data._context_versions: the (context, version) pairs the current principal may read,
-- and whether through a subscription. With p_scoped, only those a request in scope
-- (p_repo_id, p_persona_id, p_session_id) may name: its org's Contexts whose labels lie
-- within that scope (data._in_scope, the rule of fragments and pins: a persona or
-- session Context only when that persona or session is asked for), and subscriptions of
-- its org, or of the requested repo (none asked: every repo it may read). A subscription
-- gives a Context of an org or repo scope only: persona and session material never
-- leaves its scope (service.context_subscribe refuses the others; this is the read side of
-- the same rule, so a row written past it gives nothing). Security definer: it reads
-- contexts and subscriptions past their policies (which call it) and answers only for
-- the caller.
create or replace function data._context_versions(
    p_scoped boolean, p_repo_id text default null, p_persona_id text default null, p_session_id text default null)
returns table (context_id bigint, version int, via_subscription boolean)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select v.context_id, v.version, false
    from data.contexts c
    join data.context_versions v on v.context_id = c.context_id
    where c.org_id = (select data.acl_org())
      and (c.repo_id is null or (select data.acl_org_wide()) or c.repo_id = any ((select data.acl_repos())::text[]))
      and (c.persona_id is null or (select data.acl_org_wide())
           or c.persona_id = any ((select data.acl_personas())::text[]))
      and (c.session_id is null or c.session_id = any ((select data.acl_sessions())::text[]))
      and (not p_scoped or data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id))
    union
    select s.context_id, s.resolved, true
    from (select s.context_id,
                 coalesce(s.version, (select max(v.version) from data.context_versions v
                                      where v.context_id = s.context_id)) as resolved
          from data.context_subscriptions s
          join data.contexts c on c.context_id = s.context_id and c.org_id = s.org_id
          where s.revoked_at is null and s.accepted_at is not null
            and c.persona_id is null and c.session_id is null
            and s.subscriber_org_id = (select data.acl_org())
            and (s.subscriber_repo_id is null or (select data.acl_org_wide())
                 or s.subscriber_repo_id = any ((select data.acl_repos())::text[]))
            and (not p_scoped or s.subscriber_repo_id is null or p_repo_id is null
                 or s.subscriber_repo_id = p_repo_id)) s
    where s.resolved is not null
$$;
comment on function data._context_versions(boolean, text, text, text) is 'Context versions the current principal may read (with p_scoped: that a request in that scope may name): every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it, of org and repo Contexts only.';

-- data._readable_context_versions: every version the current principal may read, in
-- any scope: the predicate of the four context tables' policies (sql/policies).
create or replace function data._readable_context_versions()
returns table (context_id bigint, version int, via_subscription boolean)
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$ select * from data._context_versions(false) $$;
comment on function data._readable_context_versions() is 'Context versions the current principal may read: every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it.';

-- data._check_subscription: the write side of the rule above, on the table itself (the
-- API refuses first, with the same words; a DBA's insert meets this).
create or replace function data._check_subscription()
returns trigger
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    ctx data.contexts;
begin
    select c.* into ctx from data.contexts c where c.context_id = new.context_id;
    if new.revoked_at is null and (ctx.persona_id is not null or ctx.session_id is not null) then
        raise exception 'ctx_% is a % Context: it is read only inside its %, never subscribed', new.context_id,
            case when ctx.session_id is not null then 'session' else 'persona' end,
            case when ctx.session_id is not null then 'session' else 'persona' end
            using errcode = '42501',
            hint = 'Publish a Context of an org or repo scope; bundle the notes worth sharing into it once promoted.';
    end if;
    return new;
end
$$;

create or replace trigger context_subscriptions_shareable
    before insert or update of context_id, revoked_at on data.context_subscriptions
    for each row
    execute function data._check_subscription();

-- data._glob_regex: a path glob as an anchored regular expression: `**` any run of
-- characters (slashes too; `**/` also none), `*` any run within one path segment, `?`
-- one character but a slash; everything else literal. Adjacent wildcards become the one
-- they amount to (`****` is `.*`, `***/` `.*`): a run of `.*.*.*...` makes the regex
-- engine try every split of a path between them, and 500 of them took 1.9 ms a path
-- (a rule or bundle of such globs held a request for 30 s and more).
create or replace function data._glob_regex(p_glob text)
returns text
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
    out text := '^';
    i int := 1;
    ch text;
    token text;
    last text;  -- the wildcard `out` ends with (null after a literal)
begin
    while i <= length(p_glob) loop
        ch := substr(p_glob, i, 1);
        token := null;
        if substr(p_glob, i, 3) = '**/' then
            token := '(.*/)?';
            i := i + 3;
        elsif substr(p_glob, i, 2) = '**' then
            token := '.*';
            i := i + 2;
        elsif ch = '*' then
            token := '[^/]*';
            i := i + 1;
        else
            if ch = '?' then
                out := out || '[^/]';
            elsif strpos('[].^$+(){}|\', ch) > 0 then
                out := out || '\' || ch;
            else
                out := out || ch;
            end if;
            last := null;
            i := i + 1;
            continue;
        end if;
        if last = '.*' or (last = token and token <> '.*') then
            continue;  -- absorbed: `.*` then any wildcard, or the same one twice
        elsif token = '.*' and last is not null then
            out := left(out, length(out) - length(last));  -- `[^/]*.*` and `(.*/)?.*` are `.*`
        end if;
        out := out || token;
        last := token;
    end loop;
    return out || '$';
end
$$;
comment on function data._glob_regex(text) is 'A path glob (**, *, ?) as an anchored regular expression.';

-- data._context_rows: Contexts as callers see them: the newest version the reader may
-- read, its size, and whether it reads them through a subscription (then without its
-- creator's name). Invoker: within an api function of the service, row-level security
-- bounds every count.
create or replace function data._context_rows(p_ids bigint[])
returns table (context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text,
               name text, description text, created_by text, created_at timestamptz, retired_at timestamptz,
               latest_version int, fragment_count int, subscribed boolean)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    -- A subscriber reads the Context's name and description, not who in the publisher's
    -- org made it (docs/dba.md, what row-level security does not hide).
    select c.context_id, 'ctx_' || c.context_id, c.org_id, c.repo_id, c.persona_id, c.session_id, c.name,
           c.description, case when r.via_subscription then null else c.created_by end, c.created_at,
           c.retired_at, lv.version, lv.fragment_count, coalesce(r.via_subscription, false)
    from data.contexts c
    left join lateral (select v.version, v.fragment_count from data.context_versions v
                       join data._readable_context_versions() rv
                         on rv.context_id = v.context_id and rv.version = v.version
                       where v.context_id = c.context_id
                       order by v.version desc limit 1) lv on true
    left join lateral (select bool_and(rv.via_subscription) as via_subscription
                       from data._readable_context_versions() rv where rv.context_id = c.context_id) r on true
    where c.context_id = any (p_ids)
    order by c.context_id
$$;

-- data._writable_context: the Context p_context_id for a principal that may write it
-- (a write grant on its scope): P0002 when it may not read it, 42501 when it may read it
-- but not write it, 55000 when retired (unless p_retired_ok).
create or replace function data._writable_context(p_context_id bigint, p_retired_ok boolean default false)
returns data.contexts
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    ctx data.contexts;
begin
    select * into me from data._principal_or_raise();
    select c.* into ctx from data.contexts c
    where c.context_id = p_context_id and c.org_id = me.org_id
      and (c.repo_id is null or data.acl_org_wide() or c.repo_id = any (data.acl_repos()))
      and (c.persona_id is null or data.acl_org_wide() or c.persona_id = any (data.acl_personas()))
      and (c.session_id is null or c.session_id = any (data.acl_sessions()));
    if ctx.context_id is null and exists (select 1 from data._context_versions(false) rv
                                          where rv.context_id = p_context_id and rv.via_subscription) then
        -- Read through a subscription: the subscriber knows it exists, so "unknown" would
        -- mislead; it is its publisher's to change.
        raise exception 'ctx_% is read through a subscription: only its publisher (org %) changes it', p_context_id,
            (select c.org_id from data.contexts c where c.context_id = p_context_id)
            using errcode = '42501',
            hint = 'To stop reading it, revoke the subscription: GET /subscriptions lists it, '
                   'DELETE /contexts/ctx_' || p_context_id || '/subscriptions/{id} (contexts ctx unsubscribe ID) ends it.';
    elsif ctx.context_id is null then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002';
    end if;
    perform data._require_write(ctx.org_id, ctx.repo_id, ctx.persona_id, ctx.session_id);
    if ctx.retired_at is not null and not p_retired_ok then
        raise exception 'context ctx_% is retired', p_context_id using errcode = '55000';
    end if;
    return ctx;
end
$$;

-- service.context_create: a new, empty Context in a scope (write grant there: 42501). Its
-- name is unique among the live Contexts of that scope (23505).
create or replace function service.context_create(
    p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text default '')
returns table (context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text,
               name text, description text, created_by text, created_at timestamptz, retired_at timestamptz,
               latest_version int, fragment_count int, subscribed boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    id bigint;
begin
    select * into me from data._principal_or_raise();
    perform data._require_write(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_name is null or p_name !~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$' then
        raise exception 'a context name is 1 to 128 letters, digits, spaces and _.:/- (starting with a letter or digit)'
            using errcode = '22023';
    end if;
    if length(coalesce(p_description, '')) > 2000 then
        raise exception 'a context description is at most 2000 characters' using errcode = '22023';
    end if;
    insert into data.contexts (org_id, repo_id, persona_id, session_id, name, description, created_by)
    values (p_org_id, p_repo_id, p_persona_id, p_session_id, p_name, coalesce(p_description, ''), me.principal_id)
    returning data.contexts.context_id into id;
    return query select * from data._context_rows(array[id]);
end
$$;
comment on function service.context_create(text, text, text, text, text, text)
    is 'Create a Context (a named bundle of fragments) in a scope; needs a write grant there.';

-- data._scope_words: a scope's labels in words for a message ("repo payments", "persona
-- sre, session s1"; "the org" for none).
create or replace function data._scope_words(p_repo_id text, p_persona_id text, p_session_id text)
returns text
language sql immutable parallel safe
set search_path = pg_catalog, extensions, pg_temp
as $$
    select coalesce(nullif(concat_ws(', ', 'repo ' || p_repo_id, 'persona ' || p_persona_id, 'session ' || p_session_id), ''),
                    'the org')
$$;

-- service.context_add_version: freeze a new version of a Context (write grant on its scope)
-- from fragment ids, whole documents (their live fragments) and path globs (the live
-- fragments of the documents whose path matches, among those the caller may read in the
-- Context's scope), in that order, each fragment once. An id or document the caller may
-- not read is unknown (P0002); one outside the Context's scope (a repo-B fragment in a
-- repo-A context) a 22023, as is an empty or oversized (over 2000) result. p_built_from
-- records anything else the caller built it from (a frozen query, by the service), and
-- p_query_fragment_ids what that query found: those the caller may read and that lie
-- within the Context's scope follow the named ids, the others are left out and counted
-- (a query in an org Context's scope finds the org's repo fragments too).
-- records anything else the caller built it from (a frozen query, by the service).
create or replace function service.context_add_version(
    p_context_id bigint, p_fragment_ids bigint[] default '{}', p_doc_ids bigint[] default '{}',
    p_path_globs text[] default '{}', p_note text default '', p_built_from jsonb default '{}',
    p_query_fragment_ids bigint[] default '{}')
returns table (context_id bigint, ref text, version int, fragment_count int, built_from jsonb, note text,
               created_by text, created_at timestamptz)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    ctx data.contexts;
    wanted bigint[];
    readable bigint[];
    missing bigint;
    outside bigint;
    outside_scope text;
    glob_ids bigint[] := '{}';
    doc_ids bigint[] := '{}';
    g text;
    next_version int;
    members bigint[];
    row_count int;
    query_kept bigint[] := '{}';
    query_left_out int := 0;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    if cardinality(coalesce(p_fragment_ids, '{}')) + cardinality(coalesce(p_doc_ids, '{}'))
       + cardinality(coalesce(p_path_globs, '{}')) + cardinality(coalesce(p_query_fragment_ids, '{}')) = 0 then
        raise exception 'a version is built from fragment ids, documents, path globs or a query' using errcode = '22023';
    end if;
    if cardinality(coalesce(p_path_globs, '{}')) > 32
       or exists (select 1 from unnest(p_path_globs) x where x is null or length(x) not between 1 and 1024) then
        raise exception 'path globs: at most 32, each 1 to 1024 characters' using errcode = '22023';
    end if;
    if length(coalesce(p_note, '')) > 2000 or jsonb_typeof(coalesce(p_built_from, '{}')) <> 'object' then
        raise exception 'a version note is at most 2000 characters, built_from an object' using errcode = '22023';
    end if;
    -- Fragment ids: each one readable by the caller (else unknown), within the scope.
    wanted := array(select distinct x from unnest(coalesce(p_fragment_ids, '{}')) x);
    readable := data._readable_fragments(ctx.org_id, wanted);
    select x into missing from unnest(wanted) x where not x = any (readable) or x is null limit 1;
    if missing is not null or array_position(wanted, null) is not null then
        raise exception 'unknown fragment: %', coalesce(missing::text, 'null') using errcode = 'P0002';
    end if;
    select f.fragment_id, data._scope_words(f.repo_id, f.persona_id, f.session_id)
      into outside, outside_scope
    from data.fragments f
    where f.fragment_id = any (wanted)
      and not ((f.repo_id is null or f.repo_id is not distinct from ctx.repo_id) and (f.persona_id is null or f.persona_id is not distinct from ctx.persona_id)
               and (f.session_id is null or f.session_id is not distinct from ctx.session_id))
    limit 1;
    if outside is not null then
        raise exception 'fragment % (of %) lies outside the scope of ctx_% (%)', outside, outside_scope, ctx.context_id,
            data._scope_words(ctx.repo_id, ctx.persona_id, ctx.session_id)
            using errcode = '22023',
            hint = 'A context holds fragments of its own scope and of the scopes above it: an org context, org-wide ones only.';
    end if;
    select f.fragment_id into outside from data.fragments f where f.fragment_id = any (wanted) and not f.active limit 1;
    if outside is not null then
        raise exception 'fragment % is no longer live (its documents were deleted or changed)', outside
            using errcode = '22023';
    end if;
    -- What a saved query found: the live fragments the caller may read within the scope,
    -- after the named ones, in the query's order; the rest counted.
    if cardinality(coalesce(p_query_fragment_ids, '{}')) > 0 then
        query_kept := array(
            select q.x from (select distinct on (u.x) u.x, u.n
                             from unnest(p_query_fragment_ids) with ordinality as u(x, n)
                             where u.x is not null order by u.x, u.n) q
            join data.fragments f on f.fragment_id = q.x and f.org_id = ctx.org_id and f.active
            where q.x = any (data._readable_fragments(ctx.org_id, p_query_fragment_ids))
              and not q.x = any (wanted)
              and (f.repo_id is null or f.repo_id is not distinct from ctx.repo_id)
              and (f.persona_id is null or f.persona_id is not distinct from ctx.persona_id)
              and (f.session_id is null or f.session_id is not distinct from ctx.session_id)
            order by q.n);
        query_left_out := (select count(distinct x) from unnest(p_query_fragment_ids) x
                           where x is not null and not x = any (wanted))::int - cardinality(query_kept);
    end if;
    -- Documents: readable (else unknown) and within the scope; their live fragments.
    doc_ids := array(select distinct x from unnest(coalesce(p_doc_ids, '{}')) x);
    select x into missing from unnest(doc_ids) x
    where not exists (
        select 1 from data.documents d
        where d.doc_id = x and d.org_id = ctx.org_id
          and (d.repo_id is null or data.acl_org_wide() or d.repo_id = any (data.acl_repos()))
          and (d.persona_id is null or data.acl_org_wide() or d.persona_id = any (data.acl_personas()))
          and (d.session_id is null or d.session_id = any (data.acl_sessions())))
    limit 1;
    if missing is not null or array_position(doc_ids, null) is not null then
        raise exception 'unknown document: %', coalesce(missing::text, 'null') using errcode = 'P0002';
    end if;
    select d.doc_id, data._scope_words(d.repo_id, d.persona_id, d.session_id)
      into outside, outside_scope
    from data.documents d
    where d.doc_id = any (doc_ids)
      and not ((d.repo_id is null or d.repo_id is not distinct from ctx.repo_id) and (d.persona_id is null or d.persona_id is not distinct from ctx.persona_id)
               and (d.session_id is null or d.session_id is not distinct from ctx.session_id))
    limit 1;
    if outside is not null then
        raise exception 'document % (of %) lies outside the scope of ctx_% (%)', outside, outside_scope, ctx.context_id,
            data._scope_words(ctx.repo_id, ctx.persona_id, ctx.session_id)
            using errcode = '22023',
            hint = 'A context holds documents of its own scope and of the scopes above it: an org context, org-wide ones only.';
    end if;
    -- Globs: documents of the Context's scope (and those above it) the caller may read.
    foreach g in array coalesce(p_path_globs, '{}') loop
        glob_ids := glob_ids || array(
            select d.doc_id from data.documents d
            where d.org_id = ctx.org_id and d.path ~ data._glob_regex(g)
              and (d.repo_id is null or d.repo_id is not distinct from ctx.repo_id) and (d.persona_id is null or d.persona_id is not distinct from ctx.persona_id)
              and (d.session_id is null or d.session_id is not distinct from ctx.session_id)
              and (d.repo_id is null or data.acl_org_wide() or d.repo_id = any (data.acl_repos()))
              and (d.persona_id is null or data.acl_org_wide() or d.persona_id = any (data.acl_personas()))
              and (d.session_id is null or d.session_id = any (data.acl_sessions()))
            order by d.path, d.doc_id);
    end loop;
    -- In order: the ids as given, then each document's live fragments in source order.
    select array_agg(m.fragment_id order by m.first) into members
    from (select x.fragment_id, min(x.ord) as first
          from (select w.x as fragment_id, w.n::float8 as ord
                from unnest(coalesce(p_fragment_ids, '{}') || query_kept) with ordinality as w(x, n)
                union all
                select s.fragment_id, 1e6 + dd.n * 1e5 + s.ordinal
                from unnest(doc_ids || glob_ids) with ordinality as dd(doc_id, n)
                join data.documents d on d.doc_id = dd.doc_id
                join data.fragment_sources s on s.org_id = d.org_id and s.doc_id = d.doc_id and s.doc_version = d.current_version
                join data.fragments f on f.org_id = s.org_id and f.fragment_id = s.fragment_id
                where s.retired_at is null and f.active and s.content_hash = f.content_hash) x
          group by x.fragment_id) m;
    row_count := coalesce(cardinality(members), 0);
    if row_count = 0 and query_left_out > 0 then
        raise exception 'nothing to bundle: the query found % fragments, none within the scope of ctx_% (%)',
            query_left_out, ctx.context_id,
            data._scope_words(ctx.repo_id, ctx.persona_id, ctx.session_id)
            using errcode = '22023',
            hint = 'A context holds fragments of its own scope and of the scopes above it: an org context, org-wide ones only.';
    end if;
    if row_count = 0 then
        raise exception 'nothing to bundle: no readable fragment matches' using errcode = '22023';
    end if;
    if row_count > 2000 then
        raise exception 'a version holds at most 2000 fragments (% matched)', row_count using errcode = '22023';
    end if;
    -- One version number at a time per Context.
    perform 1 from data.contexts c where c.context_id = ctx.context_id for update;
    select coalesce(max(v.version), 0) + 1 into next_version from data.context_versions v
    where v.context_id = ctx.context_id;
    insert into data.context_versions (context_id, org_id, version, built_from, note, fragment_count, created_by)
    values (ctx.context_id, ctx.org_id, next_version,
            coalesce(p_built_from, '{}') || jsonb_strip_nulls(jsonb_build_object(
                'fragment_ids', nullif(to_jsonb(coalesce(p_fragment_ids, '{}')), '[]'),
                'doc_ids', nullif(to_jsonb(doc_ids), '[]'),
                'path_globs', nullif(to_jsonb(coalesce(p_path_globs, '{}')), '[]'),
                'query_fragment_ids', nullif(to_jsonb(query_kept), '[]'),
                'query_outside_scope', nullif(query_left_out, 0))),
            coalesce(p_note, ''), row_count, me.principal_id);
    -- Each member cited from the document version it is read from now: a live exact
    -- source (near-duplicates point at the canonical text too), the newest first.
    insert into data.context_members (context_id, version, org_id, ordinal, fragment_id, doc_id, doc_version)
    select ctx.context_id, next_version, ctx.org_id, m.n, m.fragment_id, src.doc_id, src.doc_version
    from unnest(members) with ordinality as m(fragment_id, n)
    left join lateral (
        select s.doc_id, s.doc_version from data.fragment_sources s
        join data.fragments f on f.org_id = s.org_id and f.fragment_id = s.fragment_id
        where s.fragment_id = m.fragment_id
        order by s.retired_at is null desc, s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id
        limit 1) src on true;
    return query
    select v.context_id, 'ctx_' || v.context_id || '@' || v.version, v.version, v.fragment_count, v.built_from,
           v.note, v.created_by, v.created_at
    from data.context_versions v where v.context_id = ctx.context_id and v.version = next_version;
end
$$;
comment on function service.context_add_version(bigint, bigint[], bigint[], text[], text, jsonb, bigint[])
    is 'Freeze a new, immutable version of a Context from fragment ids, documents, path globs and what a saved query found (write grant on its scope).';

-- service.context_retire: take a Context out of listings and retrieval (write grant on its
-- scope); it stays readable by reference, versions and subscriptions included (audit).
create or replace function service.context_retire(p_context_id bigint)
returns table (context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text,
               name text, description text, created_by text, created_at timestamptz, retired_at timestamptz,
               latest_version int, fragment_count int, subscribed boolean)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    ctx data.contexts;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    update data.contexts c set retired_at = clock_timestamp(), retired_by = me.principal_id
    where c.context_id = ctx.context_id;
    return query select * from data._context_rows(array[ctx.context_id]);
end
$$;
comment on function service.context_retire(bigint) is 'Retire a Context: out of listings and retrieval, still readable by reference (write grant on its scope).';

-- api.contexts_list: the Contexts a request in this scope may name (data._context_versions):
-- its org's whose scope lies within the requested one (as pins: an org-wide Context
-- shows in every repo), and those its subscriptions give it (from any org; a repo's
-- subscription in that repo's requests); retired ones only with p_include_retired.
create or replace function api.contexts_list(
    p_org_id text, p_repo_id text default null, p_persona_id text default null, p_session_id text default null,
    p_include_retired boolean default false)
returns table (context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text,
               name text, description text, created_by text, created_at timestamptz, retired_at timestamptz,
               latest_version int, fragment_count int, subscribed boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    return query
    select r.* from data._context_rows(array(
        select c.context_id from data.contexts c
        where (p_include_retired or c.retired_at is null)
          and ((c.org_id = p_org_id
                and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
                and (c.repo_id is null or data.acl_org_wide() or c.repo_id = any (data.acl_repos()))
                and (c.persona_id is null or data.acl_org_wide() or c.persona_id = any (data.acl_personas()))
                and (c.session_id is null or c.session_id = any (data.acl_sessions())))
               or c.context_id in (select rv.context_id
                                   from data._context_versions(true, p_repo_id, p_persona_id, p_session_id) rv
                                   where rv.via_subscription)))) r
    order by r.org_id = p_org_id desc, r.name, r.context_id;
end
$$;
comment on function api.contexts_list(text, text, text, text, boolean)
    is 'Contexts a request in this scope may name: its org''s within the scope, and those subscribed to; retired ones on request.';

-- data._resolve_context_refs: `ctx_<id>@<version>` or `ctx_<id>@latest` references, in
-- order, as (ref, context id, version): 22023 for a malformed one, P0002 for one the
-- caller may not read (unknown, another org's without a subscription, a version it is
-- not subscribed to). `@latest` is the newest version the caller may read: for a
-- subscriber pinned to version 3, version 3. Retired Contexts resolve too. With
-- p_scoped, within what a request in that scope may name (data._context_versions): a
-- Context the caller may read but not in that scope (a persona's in a request naming no
-- persona, a repo subscription in another repo's request) is a 22023 that says so.
create or replace function data._resolve_context_refs(
    p_refs text[], p_scoped boolean default false, p_repo_id text default null, p_persona_id text default null,
    p_session_id text default null)
returns table (ordinal int, ref text, context_id bigint, version int, retired boolean, name text,
               via_subscription boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    r record;
    parts text[];
    id bigint;
    v int;
    shared boolean;
begin
    if p_refs is null or cardinality(p_refs) = 0 or cardinality(p_refs) > 16 then
        raise exception 'name 1 to 16 contexts' using errcode = '22023';
    end if;
    for r in select x.ref, x.n from unnest(p_refs) with ordinality as x(ref, n) loop
        parts := regexp_match(coalesce(r.ref, ''), '^ctx_([1-9][0-9]{0,17})@([1-9][0-9]{0,8}|latest)$');
        if parts is null then
            raise exception 'malformed context reference: % (expected ctx_<id>@<version> or ctx_<id>@latest)',
                coalesce(left(r.ref, 64), 'null') using errcode = '22023';
        end if;
        id := parts[1]::bigint;
        -- The newest matching version; read through its own scope when both give it.
        select rv.version, bool_and(rv.via_subscription) into v, shared
        from data._context_versions(p_scoped, p_repo_id, p_persona_id, p_session_id) rv
        where rv.context_id = id and (parts[2] = 'latest' or rv.version = parts[2]::int)
        group by rv.version order by rv.version desc limit 1;
        if v is null and p_scoped and exists (
                select 1 from data._context_versions(false) rv
                where rv.context_id = id and (parts[2] = 'latest' or rv.version = parts[2]::int)) then
            raise exception 'context % lies outside the requested scope', r.ref using errcode = '22023',
                hint = 'Name its scope in the request (its repo, persona or session; a subscription''s repo), or read it by reference.';
        end if;
        -- A Context of the caller's own org and grants with no version yet. The grants are
        -- named here, not left to row-level security: this runs inside security definer
        -- callers too (service.context_candidates), where the policy does not apply.
        if v is null and parts[2] = 'latest' and exists (
                select 1 from data.contexts c
                where c.context_id = id and c.org_id = data.acl_org()
                  and (c.repo_id is null or data.acl_org_wide() or c.repo_id = any (data.acl_repos()))
                  and (c.persona_id is null or data.acl_org_wide() or c.persona_id = any (data.acl_personas()))
                  and (c.session_id is null or c.session_id = any (data.acl_sessions()))) then
            raise exception 'context ctx_% has no version yet', id using errcode = 'P0002',
                hint = 'Build one: `contexts ctx version ctx_' || id || '`, or POST /contexts/ctx_' || id || '/versions.';
        end if;
        if v is null then
            raise exception 'unknown context: %', r.ref using errcode = 'P0002',
                hint = 'One offered to your org or repo reads once a writer there accepts it, and no more once revoked: offers waiting are listed by GET /subscriptions?state=pending (CLI: contexts ctx subscriptions --pending).';
        end if;
        return query select r.n::int, 'ctx_' || id || '@' || v, id, v, c.retired_at is not null, c.name, shared
                     from data.contexts c where c.context_id = id;
    end loop;
end
$$;

-- api.context_resolve: what each reference names now (the version `@latest` is).
create or replace function api.context_resolve(p_refs text[])
returns table (ordinal int, ref text, context_id bigint, version int, retired boolean, name text)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$ select r.ordinal, r.ref, r.context_id, r.version, r.retired, r.name from data._resolve_context_refs(p_refs) r $$;
comment on function api.context_resolve(text[])
    is 'Resolve ctx_<id>@<version> / ctx_<id>@latest references the caller may read (22023 malformed, P0002 unknown).';

-- api.context_versions: every version of a Context the caller may read, newest first.
-- A version read through a subscription only shows its note, size and time: what it was
-- built from (a saved query's text, its trace, document ids) and who built it stay in
-- the publisher's org.
create or replace function api.context_versions(p_context_id bigint)
returns table (context_id bigint, ref text, version int, fragment_count int, built_from jsonb, note text,
               created_by text, created_at timestamptz)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    return query
    select v.context_id, 'ctx_' || v.context_id || '@' || v.version, v.version, v.fragment_count,
           case when rv.shared then '{}'::jsonb else v.built_from end, v.note,
           case when rv.shared then null else v.created_by end, v.created_at
    from data.context_versions v
    join (select x.version, bool_and(x.via_subscription) as shared from data._readable_context_versions() x
          where x.context_id = p_context_id group by x.version) rv on rv.version = v.version
    where v.context_id = p_context_id
    order by v.version desc;
    if not found and not exists (select 1 from data.contexts c where c.context_id = p_context_id) then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002',
            hint = 'One offered to your org or repo reads once a writer there accepts it, and no more once revoked: offers waiting are listed by GET /subscriptions?state=pending (CLI: contexts ctx subscriptions --pending).';
    end if;
end
$$;
comment on function api.context_versions(bigint) is 'The versions of a Context the caller may read, newest first.';

-- service.context_candidates: the members of the named Context versions as retrieval
-- candidates (the columns of api.retrieve_candidates, and the reference that brought
-- each one), scored against p_query from the bundles alone: BM25 whose N, document
-- frequencies and average length count only these members, cosine with each member's
-- active model, fused like a retrieval (data._fuse). No statistic, score or path of a
-- fragment outside the bundles enters, so a subscriber in another org learns nothing
-- else of the publisher's org. Without a query: bundle order, no scores.
-- Security definer: the one door to subscribed fragments past the fragments' policy.
-- It serves a member only when the reader may read it now: read through the Context's
-- own scope, the member must pass the fragments' policy (grants, live session) and lie
-- within the request's scope; read through a subscription, the member must be of the
-- Context's org and within its org or repo scope. Either way the fragment is active (a
-- deleted or replaced document's fragments leave every version that held them) and is
-- cited from a live document. A request's scope (p_repo_id, p_persona_id, p_session_id;
-- p_scoped) bounds which Contexts it may name (data._resolve_context_refs); reading a
-- Context by reference (p_scoped false) needs only that the caller may read it.
-- Retired Contexts are refused (55000) unless p_include_retired (reading one for audit).
create or replace function service.context_candidates(
    p_org_id text, p_refs text[], p_query text default null, p_query_embeddings jsonb default '{}',
    p_fusion jsonb default '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}',
    p_rrf_k int default 60, p_include_retired boolean default false, p_repo_id text default null,
    p_persona_id text default null, p_session_id text default null, p_scoped boolean default true)
returns table (
    fragment_id bigint, lexical_rank int, lexical_score float8, dense_rank int, dense_similarity float8,
    fused_score float8, doc_id bigint, doc_version int, path text, anchor text, repo_id text,
    namespace text, kind text, owner text, heading_path text[], symbol text, text text,
    token_count int, chunker_version text, embedding_model text, updated_at timestamptz,
    lexical_norm float8, dense_norm float8, lexical_weight float8, dense_weight float8,
    negative boolean, pin_id bigint, pin_rank int, persona_similarity float8, authority float8,
    authority_refreshed_at timestamptz, valid_from timestamptz, valid_until timestamptz, reading bytea,
    profile jsonb, context text, context_ordinal int)
language plpgsql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    retired text;
    refs text[];
    ref_contexts bigint[];
    ref_versions int[];
    ref_retired boolean[];
    ref_shared boolean[];
    org_wide boolean;
    my_repos text[];
    my_personas text[];
    my_sessions text[];
    ids bigint[];
    picked_refs int[];
    picked_ordinals int[];
    picked_docs bigint[];
    picked_versions int[];
    member_orgs text[];
    has_query boolean := p_query is not null and btrim(p_query) <> '';
    lexical_on boolean;
    dense_on boolean;
    lex_ids bigint[] := '{}';
    lex_scores float8[] := '{}';
    dense_ids bigint[] := '{}';
    dense_sims float8[] := '{}';
    m record;
begin
    select * into me from data._principal_or_raise();
    if p_org_id is distinct from me.org_id then
        raise exception 'principal % may not read org %', me.principal_id, p_org_id using errcode = '42501';
    end if;
    if p_rrf_k is null or p_rrf_k < 1 then
        raise exception 'rrf_k must be positive' using errcode = '22023';
    end if;
    perform data._check_fusion(p_fusion);
    if p_scoped is null then
        raise exception 'p_scoped must be true or false' using errcode = '22023';
    end if;
    if p_scoped then
        perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
        perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    end if;
    select array_agg(r.ref order by r.ordinal), array_agg(r.context_id order by r.ordinal),
           array_agg(r.version order by r.ordinal), array_agg(r.retired order by r.ordinal),
           array_agg(r.via_subscription order by r.ordinal)
      into refs, ref_contexts, ref_versions, ref_retired, ref_shared
    from data._resolve_context_refs(p_refs, p_scoped, p_repo_id, p_persona_id, p_session_id) r;
    org_wide := data.acl_org_wide();
    my_repos := data.acl_repos();
    my_personas := data.acl_personas();
    my_sessions := data.acl_sessions();
    retired := refs[array_position(ref_retired, true)];
    if retired is not null and not p_include_retired then
        raise exception 'context % is retired', retired using errcode = '55000',
            hint = 'Read it by reference (GET /contexts/{ref}) for audit; retrieval skips retired contexts.';
    end if;
    -- Each fragment once, from the first reference naming it, in bundle order: the
    -- members the reader may read now (see above), cited from the document version they
    -- were bundled from while that document lives, else from a live source.
    select coalesce(array_agg(k.fragment_id order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.ref_n order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.ordinal order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.doc_id order by k.ref_n, k.ordinal), '{}'),
           coalesce(array_agg(k.doc_version order by k.ref_n, k.ordinal), '{}')
      into ids, picked_refs, picked_ordinals, picked_docs, picked_versions
    from (select distinct on (mb.fragment_id) mb.fragment_id, r.n as ref_n, mb.ordinal,
                 case when md.deleted_at is null then mb.doc_id else ls.doc_id end as doc_id,
                 case when md.deleted_at is null then mb.doc_version else ls.doc_version end as doc_version
          from unnest(ref_contexts, ref_versions, ref_shared) with ordinality as r(context_id, version, shared, n)
          join data.contexts c on c.context_id = r.context_id
          join data.context_members mb on mb.context_id = r.context_id and mb.version = r.version
          join data.fragments f on f.fragment_id = mb.fragment_id and f.org_id = mb.org_id and f.active
          left join data.documents md on md.doc_id = mb.doc_id
          left join lateral (
              select s.doc_id, s.doc_version from data.fragment_sources s
              join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id and d.deleted_at is null
              where s.org_id = f.org_id and s.fragment_id = f.fragment_id and s.retired_at is null
              order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id
              limit 1) ls on md.deleted_at is not null or md.doc_id is null
          where f.org_id = c.org_id
            and case when r.shared
                     -- Shared by a subscription: org and repo material of its Context only.
                     then c.persona_id is null and c.session_id is null
                          and f.persona_id is null and f.session_id is null
                          and (f.repo_id is null or f.repo_id = c.repo_id)
                     -- Its own scope: the fragments' policy, and the request's scope.
                     else f.org_id = me.org_id
                          and (f.repo_id is null or org_wide or f.repo_id = any (my_repos))
                          and (f.persona_id is null or org_wide or f.persona_id = any (my_personas))
                          and (f.session_id is null or f.session_id = any (my_sessions))
                          and (not p_scoped or data._in_scope(f.repo_id, f.persona_id, f.session_id,
                                                                 p_repo_id, p_persona_id, p_session_id))
                end
            and (md.deleted_at is null or ls.doc_id is not null)
          order by mb.fragment_id, r.n, mb.ordinal) k;
    member_orgs := array(select distinct f.org_id from data.fragments f where f.fragment_id = any (ids));
    lexical_on := has_query;
    dense_on := has_query and jsonb_typeof(p_query_embeddings) = 'object' and p_query_embeddings <> '{}';
    if lexical_on then
        -- BM25 over the bundles alone (the formula of data._bm25_scores, k1 1.2, b 0.75,
        -- each term weighted by its idf times how often the query says it).
        with terms_of as (
            -- The postings the BM25 triggers derive from each active member's tsvector (an
            -- inactive member matches nothing), read from the fragments themselves.
            select f.fragment_id, t.lexeme as term, coalesce(array_length(t.positions, 1), 1) as tf
            from data.fragments f, unnest(f.tsv) as t
            where f.fragment_id = any (ids) and f.org_id = any (member_orgs) and f.active
        ), postings as (
            select p.fragment_id, p.term, p.tf, (sum(p.tf) over (partition by p.fragment_id))::int as dl
            from terms_of p
        ), corpus as (
            select cardinality(ids)::float8 as n,
                   coalesce((select avg(x.dl) from (select distinct on (p.fragment_id) p.dl from postings p
                                                    order by p.fragment_id) x), 1)::float8 as avgdl
        ), terms as (
            select * from api.lexical_query_terms(p_query)
        ), weighted as (
            select p.term,
                   t.times * ln(1.0::float8 + (c.n - count(*)::float8 + 0.5) / (count(*)::float8 + 0.5)) as weight
            from postings p join terms t on t.term = p.term cross join corpus c
            group by p.term, t.times, c.n
        ), scored as (
            select p.fragment_id,
                   sum(w.weight * (p.tf::float8 * 2.2) / (p.tf::float8 + 1.2 * (0.25 + 0.75 * p.dl::float8 / c.avgdl))) as score
            from postings p join weighted w on w.term = p.term cross join corpus c
            group by p.fragment_id
        )
        select coalesce(array_agg(s.fragment_id order by s.score desc, s.fragment_id), '{}'),
               coalesce(array_agg(s.score order by s.score desc, s.fragment_id), '{}')
          into lex_ids, lex_scores
        from scored s;
    end if;
    if dense_on then
        for m in select * from data._query_vectors(p_query_embeddings) loop
            select dense_ids || coalesce(array_agg(e.fragment_id), '{}'),
                   dense_sims || coalesce(array_agg(1.0::float8 - (e.embedding <=> m.query_vector)), '{}')
              into dense_ids, dense_sims
            from data.embeddings e
            where e.model_id = m.model_id and e.fragment_id = any (ids);
        end loop;
    end if;
    return query
    with lexical as (
        select l.id, l.score, l.n::int as rank
        from unnest(lex_ids, lex_scores) with ordinality as l(id, score, n)
    ), dense as (
        select d.id, d.sim, (row_number() over (order by d.sim desc, d.id))::int as rank
        from unnest(dense_ids, dense_sims) as d(id, sim)
    ), rows as materialized (
        select k.fragment_id, refs[k.ref_n] as ref, k.ref_n, k.ordinal, k.doc_id, k.doc_version, f.namespace, f.repo_id, f.kind, f.owner,
               f.heading_path, f.symbol, f.text, f.token_count, f.chunker_version, f.updated_at, f.negative,
               f.valid_from, f.valid_until, f.reading, em.name as model, em.name || '@' || em.generation as model_label,
               l.rank as lexical_rank, case when lexical_on then coalesce(l.score, 0.0) end as lexical_score,
               d.rank as dense_rank, d.sim as dense_similarity
        from unnest(ids, picked_refs, picked_ordinals, picked_docs, picked_versions)
             as k(fragment_id, ref_n, ordinal, doc_id, doc_version)
        join data.fragments f on f.fragment_id = k.fragment_id
        left join data.embedding_models em on em.namespace = f.namespace and em.status = 'active'
        left join lexical l on l.id = k.fragment_id
        left join dense d on d.id = k.fragment_id
    ), fused as (
        select fx.* from data._fuse(
            array(select r.fragment_id from rows r), array(select r.lexical_rank from rows r),
            array(select r.lexical_score from rows r), array(select r.dense_rank from rows r),
            array(select r.dense_similarity from rows r), array(select r.namespace from rows r),
            array(select r.model from rows r), lexical_on, dense_on, p_fusion, p_rrf_k) fx
        where has_query
    )
    select r.fragment_id, r.lexical_rank, r.lexical_score, r.dense_rank, r.dense_similarity,
           coalesce(fu.fused_score, 0.0), r.doc_id, r.doc_version, coalesce(d.path, ''),
           coalesce((select s.anchor from data.fragment_sources s
                     where s.fragment_id = r.fragment_id and s.doc_id = r.doc_id and s.doc_version = r.doc_version
                     order by s.ordinal limit 1), ''),
           r.repo_id, r.namespace, r.kind, r.owner, r.heading_path, r.symbol, r.text, r.token_count,
           r.chunker_version, r.model_label, r.updated_at, fu.lexical_norm, fu.dense_norm, fu.lexical_weight,
           fu.dense_weight, r.negative, null::bigint, null::int, null::float8, null::float8, null::timestamptz,
           r.valid_from, r.valid_until, r.reading, null::jsonb, r.ref, r.ordinal
    from rows r
    left join fused fu on fu.fragment_id = r.fragment_id
    left join data.documents d on d.doc_id = r.doc_id
    order by coalesce(fu.fused_score, 0.0) desc, r.lexical_rank nulls last, r.dense_rank nulls last,
             r.ref_n, r.ordinal;
end
$$;
comment on function service.context_candidates(text, text[], text, jsonb, jsonb, int, boolean, text, text, text, boolean)
    is 'Members of the named Context versions the caller may read, as retrieval candidates scored from the bundles alone (no statistic of anything else), each with the reference that brought it.';

-- data._subscription_state: pending (made, not yet accepted by the subscriber scope),
-- live (accepted, giving its version) or revoked (by either side, accepted or not).
create or replace function data._subscription_state(s data.context_subscriptions)
returns text
language sql immutable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select case when s.revoked_at is not null then 'revoked' when s.accepted_at is null then 'pending' else 'live' end
$$;

-- data._principal_of_org: `org/principal` as the caller may see it: whole for a principal
-- of its own org, the org alone for another's (which principals of another org write
-- which of its scopes is that org's business).
create or replace function data._principal_of_org(p_who text)
returns text
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select case when p_who is null or strpos(p_who, '/') = 0 or starts_with(p_who, (select data.acl_org()) || '/')
                then p_who else split_part(p_who, '/', 1) end
$$;

-- data._writes_subscriber_scope: whether the bound principal may write a subscriber scope
-- (the org, or one repo of it): who accepts a subscription, and whose own offer is
-- accepted as it is made.
create or replace function data._writes_subscriber_scope(p_org_id text, p_repo_id text)
returns boolean
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select p_org_id = (select data.acl_org())
       and (cardinality(data._acl('org', true)) > 0 or (p_repo_id is not null and p_repo_id = any (data._acl('repo', true))))
$$;

-- data._subscription_out: one subscription as its doors answer it; who in the publisher's
-- org made it only to the publisher side (p_publisher), as api.context_subscriptions does.
create or replace function data._subscription_out(p_subscription_id bigint, p_publisher boolean)
returns table (subscription_id bigint, context_id bigint, ref text, org_id text, version int,
               subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamptz,
               accepted_at timestamptz, accepted_by text, revoked_at timestamptz, revoked_by text)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select s.subscription_id, s.context_id, 'ctx_' || s.context_id || '@' || coalesce(s.version::text, 'latest'),
           s.org_id, s.version, s.subscriber_org_id, s.subscriber_repo_id, data._subscription_state(s),
           case when p_publisher then s.created_by end, s.created_at, s.accepted_at,
           data._principal_of_org(s.accepted_by), s.revoked_at, data._principal_of_org(s.revoked_by)
    from data.context_subscriptions s where s.subscription_id = p_subscription_id
$$;

-- service.context_subscribe: a grant on a Context, made by its publisher (a write grant on
-- its scope): once a writer of the subscriber scope accepts it (ADR 0018, amendment of
-- 2026-12-06), the principals of p_subscriber_org (those who may read p_subscriber_repo
-- there, or all of them) read the members of p_version, or of the newest version when
-- it is null, until it is revoked. Another org or another repo of the same org; never a
-- copy. Only a Context of an org or repo scope: a persona's or a session's is refused
-- (42501), as subscribing would carry it out of its scope.
create or replace function service.context_subscribe(
    p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text default null, p_version int default null)
returns table (subscription_id bigint, context_id bigint, ref text, org_id text, version int,
               subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamptz,
               accepted_at timestamptz, accepted_by text, revoked_at timestamptz, revoked_by text)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    ctx data.contexts;
    id bigint;
    consents boolean;
begin
    select * into me from data._principal_or_raise();
    ctx := data._writable_context(p_context_id);
    -- Persona and session material stays in its scope (data._check_subscription says so
    -- on the table too): refused before anything about the subscriber is looked up.
    if ctx.persona_id is not null or ctx.session_id is not null then
        raise exception 'ctx_% is a % Context: it is read only inside its %, never subscribed', ctx.context_id,
            case when ctx.session_id is not null then 'session' else 'persona' end,
            case when ctx.session_id is not null then 'session' else 'persona' end
            using errcode = '42501',
            hint = 'Publish a Context of an org or repo scope; bundle the notes worth sharing into it once promoted.';
    end if;
    perform data._require_org(p_subscriber_org_id);
    if p_subscriber_repo_id is not null and p_subscriber_repo_id !~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$' then
        raise exception 'malformed repo id: %', left(p_subscriber_repo_id, 64) using errcode = '22023';
    end if;
    -- A repo of the publisher's own org must exist (a misspelt one would wait unseen for
    -- ever) when the publisher may see every repo of it; the repos of another org, or of
    -- its own beyond a narrower grant, are not the publisher's to learn, so an offer to
    -- one waits, pending, for a writer of that scope, however it is spelt.
    if p_subscriber_org_id = me.org_id and data.acl_org_wide() then
        perform data._require_scope(me.org_id, p_subscriber_repo_id, null);
    end if;
    if p_version is not null and not exists (select 1 from data.context_versions v
                                             where v.context_id = ctx.context_id and v.version = p_version) then
        raise exception 'unknown version: ctx_%@%', ctx.context_id, p_version using errcode = 'P0002';
    end if;
    -- Accepted as it is made only when its maker may write the subscriber scope itself
    -- (an org writer sharing with a repo of its org): anyone else's waits for a writer of
    -- that scope (service.context_accept), and gives nothing until then.
    consents := data._writes_subscriber_scope(p_subscriber_org_id, p_subscriber_repo_id);
    insert into data.context_subscriptions (context_id, org_id, version, subscriber_org_id, subscriber_repo_id, created_by,
                                            accepted_at, accepted_by)
    values (ctx.context_id, ctx.org_id, p_version, p_subscriber_org_id, p_subscriber_repo_id, me.principal_id,
            case when consents then clock_timestamp() end, case when consents then me.org_id || '/' || me.principal_id end)
    returning data.context_subscriptions.subscription_id into id;
    return query select * from data._subscription_out(id, true);
end
$$;
comment on function service.context_subscribe(bigint, text, text, int)
    is 'Offer a Context to another org or repo: a revocable grant on the bundle (pinned version, or the newest), never a copy, given once a writer of the subscriber scope accepts it. Needs a write grant on the Context''s scope.';

-- service.context_accept: a writer of the subscriber scope (its repo, or the org for an
-- org-wide subscription) accepts a pending subscription; from then on its principals read
-- what it gives. Its publisher, whose consent is the offer, is told who may accept it
-- (42501); anyone else does not know it (P0002). Accepting one that is live or revoked is
-- a 55000.
create or replace function service.context_accept(p_subscription_id bigint)
returns table (subscription_id bigint, context_id bigint, ref text, org_id text, version int,
               subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamptz,
               accepted_at timestamptz, accepted_by text, revoked_at timestamptz, revoked_by text)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    sub data.context_subscriptions;
    publisher boolean;
begin
    select * into me from data._principal_or_raise();
    -- Locked: of concurrent accepts (or an accept and a revoke), the later reads the
    -- earlier's outcome once it commits, so exactly one accepts.
    select s.* into sub from data.context_subscriptions s where s.subscription_id = p_subscription_id for update;
    -- Its publisher sees it (api.context_subscriptions): told who may accept it instead.
    publisher := sub.subscription_id is not null
        and exists (select 1 from data._readable_context_versions() rv
                    where rv.context_id = sub.context_id and not rv.via_subscription);
    if sub.subscription_id is null
       or not (sub.subscriber_org_id = me.org_id
               and (sub.subscriber_repo_id is null or data.acl_org_wide()
                    or sub.subscriber_repo_id = any (data.acl_repos()))) then
        if publisher then
            raise exception 'subscription % is accepted by a writer of its subscriber scope (%), not by its publisher',
                p_subscription_id, sub.subscriber_org_id || coalesce('/' || sub.subscriber_repo_id, '')
                using errcode = '42501';
        end if;
        raise exception 'unknown subscription: %', p_subscription_id using errcode = 'P0002';
    end if;
    if not data._writes_subscriber_scope(sub.subscriber_org_id, sub.subscriber_repo_id) then
        raise exception 'accepting subscription % needs a write grant on %', p_subscription_id,
            case when sub.subscriber_repo_id is null then 'the org ' || sub.subscriber_org_id
                 else 'repo ' || sub.subscriber_repo_id end
            using errcode = '42501',
            hint = 'Ask a writer of that scope to accept it; until then it gives nothing.';
    end if;
    if sub.revoked_at is not null then
        raise exception 'subscription % was revoked: it cannot be accepted', p_subscription_id using errcode = '55000',
            hint = 'Ask its publisher for a new one.';
    end if;
    if sub.accepted_at is not null then
        raise exception 'subscription % was accepted already (by %)', p_subscription_id, sub.accepted_by
            using errcode = '55000';
    end if;
    update data.context_subscriptions s
    set accepted_at = greatest(clock_timestamp(), s.created_at), accepted_by = me.org_id || '/' || me.principal_id
    where s.subscription_id = sub.subscription_id;
    return query select * from data._subscription_out(sub.subscription_id, publisher);
end
$$;
comment on function service.context_accept(bigint)
    is 'Accept a pending subscription, as a writer of its subscriber scope: from then on that scope reads the bundle it gives.';

-- service.context_unsubscribe: revoke a live subscription, as its publisher (a write grant
-- on the Context's scope) or as the subscriber (a write grant on the subscriber scope:
-- its repo, or the org for an org-wide subscription). Kept, with who revoked it when.
create or replace function service.context_unsubscribe(p_subscription_id bigint)
returns table (subscription_id bigint, context_id bigint, ref text, org_id text, version int,
               subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamptz,
               accepted_at timestamptz, accepted_by text, revoked_at timestamptz, revoked_by text)
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    sub data.context_subscriptions;
    ctx data.contexts;
    publisher boolean;
begin
    select * into me from data._principal_or_raise();
    -- Locked, as for an accept: of concurrent revokes exactly one revokes.
    select s.* into sub from data.context_subscriptions s where s.subscription_id = p_subscription_id for update;
    select c.* into ctx from data.contexts c where c.context_id = sub.context_id;
    publisher := sub.org_id = me.org_id
        and (ctx.repo_id is null or data.acl_org_wide() or ctx.repo_id = any (data.acl_repos()))
        and (ctx.persona_id is null or data.acl_org_wide() or ctx.persona_id = any (data.acl_personas()))
        and (ctx.session_id is null or ctx.session_id = any (data.acl_sessions()));
    if sub.subscription_id is null
       or not (publisher or (sub.subscriber_org_id = me.org_id
                             and (sub.subscriber_repo_id is null or data.acl_org_wide()
                                  or sub.subscriber_repo_id = any (data.acl_repos())))) then
        raise exception 'unknown subscription: %', p_subscription_id using errcode = 'P0002';
    end if;
    if publisher then
        perform data._require_write(ctx.org_id, ctx.repo_id, ctx.persona_id, ctx.session_id);
    else
        perform data._require_write(sub.subscriber_org_id, sub.subscriber_repo_id, null, null);
    end if;
    if sub.revoked_at is not null then
        raise exception 'subscription % was revoked already', p_subscription_id using errcode = '55000';
    end if;
    update data.context_subscriptions s set revoked_at = clock_timestamp(), revoked_by = me.org_id || '/' || me.principal_id
    where s.subscription_id = sub.subscription_id;
    return query select * from data._subscription_out(sub.subscription_id, publisher);
end
$$;
comment on function service.context_unsubscribe(bigint)
    is 'Revoke a subscription (its publisher, or a writer of the subscriber scope); the row stays for audit.';

-- api.context_subscriptions: the subscriptions the caller may see (row-level security:
-- those of Contexts it may read in their own scope, and those of its org's subscriber
-- scopes it may read), of one Context or all; revoked ones with p_include_revoked.
create or replace function api.context_subscriptions(p_context_id bigint default null, p_include_revoked boolean default false)
returns table (subscription_id bigint, context_id bigint, ref text, org_id text, version int,
               subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamptz,
               accepted_at timestamptz, accepted_by text, revoked_at timestamptz, revoked_by text)
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    -- Neither side learns which principal of the other org made, accepted or ended it.
    select s.subscription_id, s.context_id, 'ctx_' || s.context_id || '@' || coalesce(s.version::text, 'latest'),
           s.org_id, s.version, s.subscriber_org_id, s.subscriber_repo_id, data._subscription_state(s),
           case when p.publisher then s.created_by end, s.created_at, s.accepted_at,
           data._principal_of_org(s.accepted_by),
           s.revoked_at, data._principal_of_org(s.revoked_by)
    from data.context_subscriptions s
    cross join lateral (select exists (select 1 from data._readable_context_versions() rv
                                       where rv.context_id = s.context_id and not rv.via_subscription)
                               as publisher) p
    where (p_context_id is null or s.context_id = p_context_id)
      and (p_include_revoked or s.revoked_at is null)
    order by s.subscription_id
$$;
comment on function api.context_subscriptions(bigint, boolean)
    is 'Subscriptions the caller may see: of Contexts it publishes, and of its own subscriber scopes.';

-- api.context_get: one Context the caller may read (by its scope or a subscription),
-- retired or not; any other id is unknown.
create or replace function api.context_get(p_context_id bigint)
returns table (context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text,
               name text, description text, created_by text, created_at timestamptz, retired_at timestamptz,
               latest_version int, fragment_count int, subscribed boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    return query select * from data._context_rows(array[p_context_id]);
    if not found then
        raise exception 'unknown context: ctx_%', p_context_id using errcode = 'P0002',
            hint = 'One offered to your org or repo reads once a writer there accepts it, and no more once revoked: offers waiting are listed by GET /subscriptions?state=pending (CLI: contexts ctx subscriptions --pending).';
    end if;
end
$$;
comment on function api.context_get(bigint) is 'A Context the caller may read (its newest readable version and size), retired or not.';
