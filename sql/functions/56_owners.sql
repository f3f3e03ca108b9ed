-- Owners and staleness nudges (R-DOC-3, docs/owners.md, docs/adr/0019).
--
-- Every fragment has a named owner, taken in this order: the document's own (front
-- matter, metadata, --owner, the request's field), the repo's CODEOWNERS (resolved by
-- the ingestion lane, app/owners.py), the org's default owner; "unowned" when none.
-- A fragment is stale when retrievals returned it often (data.fragment_returns, kept
-- from the traces by a trigger) while its text is old. Stale fragments are listed per
-- owner under the caller's row-level security, and queued per org for its webhook in
-- data.nudge_outbox, which a delivery worker (app/nudges.py) drains at least once.

-- data._owner_problem: what is wrong with an owner's name, or null when nothing is. A name
-- is shown in listings, nudges and the console: one with nothing visible, or with the
-- characters that make text display other than it reads (bidirectional embeddings,
-- overrides and isolates, as in "Trojan Source"), is refused. The invisible characters
-- are Unicode's separators (Z*) and format characters (Cf), listed because a regular
-- expression here has no categories; app.owners.owner_problem holds the same
-- rule (tests/owners/test_owner_names.py checks that both agree on every code point).
create or replace function data._owner_problem(p_owner text)
returns text
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
    select case
        when length(p_owner) not between 1 and 256 then '1 to 256 characters'
        when p_owner ~ '[[:cntrl:]]' then 'no control characters'
        when p_owner ~ '[\u202a-\u202e\u2066-\u2069]'
            then 'no bidirectional embedding, override or isolate characters (U+202A to U+202E, U+2066 to U+2069)'
        when p_owner !~ '[^[:space:]\u00a0\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]' then 'at least one visible character'
    end
$$;
comment on function data._owner_problem(text) is 'What is wrong with an owner''s name (length, control, bidirectional or only invisible characters), or null.';

-- data._resolve_owner: the owner a document version gets, and where it came from. An
-- owner an admin reassigned stays on a version of the same text (`p_same_text`: one
-- made for another kind or metadata, ADR 0007's amendment of 2026-12-07); else a named
-- owner (source 'document' unless the caller says 'codeowners') wins; else an owner
-- named before or reassigned stays; else the org's default; else "unowned".
drop function if exists data._resolve_owner(text, text, text, text, text);
create or replace function data._resolve_owner(
    p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text,
    p_same_text boolean default false, out owner text, out owner_source text)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_source is not null and p_source not in ('document', 'codeowners') then
        raise exception 'an ingested owner comes from the document or from CODEOWNERS, not %', p_source
            using errcode = '22023';
    end if;
    if p_owner is not null and data._owner_problem(p_owner) is not null then
        raise exception 'owner: %', data._owner_problem(p_owner) using errcode = '22023';
    end if;
    if p_same_text and p_current_source = 'reassigned' and p_current_owner is not null then
        owner := p_current_owner;
        owner_source := p_current_source;
    elsif p_owner is not null and coalesce(p_source, 'document') = 'document' then
        owner := p_owner;
        owner_source := 'document';
    elsif p_current_source in ('document', 'reassigned') and p_current_owner is not null then
        owner := p_current_owner;
        owner_source := p_current_source;
    elsif p_owner is not null then
        owner := p_owner;
        owner_source := 'codeowners';
    else
        select o.default_owner into owner from data.orgs o where o.org_id = p_org_id;
        owner_source := case when owner is null then 'none' else 'default' end;
        owner := coalesce(owner, 'unowned');
    end if;
end
$$;

-- api.codeowners_file: the repo's CODEOWNERS as ingested, where GitHub looks for it
-- (.github/CODEOWNERS, then CODEOWNERS, then docs/CODEOWNERS): the first live one.
-- Security invoker: a caller who may not read the repo gets nothing.
create or replace function api.codeowners_file(p_org_id text, p_repo_id text)
returns table (doc_id bigint, path text, content text)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    select d.doc_id, d.path, v.content
    from data.documents d
    join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null and d.path in ('.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS')
    order by array_position(array['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS'], d.path)
    limit 1
$$;
comment on function api.codeowners_file(text, text) is 'The repo''s ingested CODEOWNERS file (.github/, root, then docs/), if any: what ingestion resolves owners against.';

-- service.owners_unnamed: the repo's live documents whose owner no document named (source
-- codeowners, default or none): those a new CODEOWNERS may give another owner.
create or replace function service.owners_unnamed(p_org_id text, p_repo_id text)
returns table (doc_id bigint, path text, owner text, owner_source text)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    return query
    select d.doc_id, d.path, d.owner, d.owner_source from data.documents d
    where d.org_id = p_org_id and d.repo_id = p_repo_id and d.persona_id is null and d.session_id is null
      and d.deleted_at is null and d.owner_source in ('codeowners', 'default', 'none')
    order by d.doc_id;
end
$$;
comment on function service.owners_unnamed(text, text) is 'Live documents of a repo whose owner came from CODEOWNERS or the default (the caller needs a write grant on the repo).';

-- service.owners_resolve: give documents of a repo (and the fragments they brought in) the
-- owners CODEOWNERS now names (null: none, so the org's default). Only documents whose
-- owner no document named or reassigned are touched; no version is written.
create or replace function service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[])
returns int
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    fallback text;
    problem text;
    changed int;
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    if cardinality(p_doc_ids) is distinct from cardinality(p_owners) then
        raise exception 'one owner (or null) per document' using errcode = '22023';
    end if;
    select data._owner_problem(o) into problem from unnest(p_owners) o where data._owner_problem(o) is not null limit 1;
    if problem is not null then
        raise exception 'owner: %', problem using errcode = '22023';
    end if;
    select o.default_owner into fallback from data.orgs o where o.org_id = p_org_id;
    with wanted as (
        select w.doc_id, coalesce(w.owner, fallback, 'unowned') as owner,
               case when w.owner is not null then 'codeowners' when fallback is not null then 'default' else 'none' end
                   as owner_source
        from unnest(p_doc_ids, p_owners) w(doc_id, owner)
    ), moved as (
        update data.documents d set owner = w.owner, owner_source = w.owner_source
        from wanted w
        where d.doc_id = w.doc_id and d.org_id = p_org_id and d.repo_id = p_repo_id
          and d.owner_source in ('codeowners', 'default', 'none')
          and (d.owner, d.owner_source) is distinct from (w.owner, w.owner_source)
        returning d.doc_id, d.owner, d.owner_source
    ), fragments as (
        update data.fragments f set owner = m.owner, owner_source = m.owner_source
        from moved m
        where f.org_id = p_org_id and f.doc_id = m.doc_id
        returning 1
    )
    select count(*)::int into changed from moved;
    return changed;
end
$$;
comment on function service.owners_resolve(text, text, bigint[], text[]) is 'Set the CODEOWNERS owners of documents whose owner was not named (null: the org default); their fragments follow; no version is written.';

-- service.owners_reassign: move ownership in bulk, from one owner to another, optionally
-- within one repo and under a path prefix. Needs a write grant on the repo (an org
-- write grant without a repo). Ownership is not content: no version is written, the
-- move is recorded in data.owner_reassignments.
create or replace function service.owners_reassign(
    p_org_id text, p_from text, p_to text, p_repo_id text default null, p_path_prefix text default null)
returns table (reassignment_id bigint, documents int, fragments int)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    me record;
    docs bigint[];
    moved_fragments int;
    id bigint;
    -- Documents of a persona move only for a writer of that persona (or of the org): a
    -- repo writer's reassignment must neither change nor count what it may not read.
    org_write boolean;
    personas text[];
begin
    perform data._require_write(p_org_id, p_repo_id, null, null);
    org_write := cardinality(data._acl('org', true)) > 0;
    personas := data._acl('persona', true);
    perform data._require_scope(p_org_id, p_repo_id, null);
    select * into me from data._principal_or_raise();
    if p_from is null or p_to is null or length(p_from) not between 1 and 256 then
        raise exception 'reassign from one named owner to another (1 to 256 characters)' using errcode = '22023';
    elsif data._owner_problem(p_to) is not null then
        raise exception 'new owner: %', data._owner_problem(p_to) using errcode = '22023';
    end if;
    if p_path_prefix is not null and (length(p_path_prefix) not between 1 and 1024 or p_path_prefix ~ '[[:cntrl:]]') then
        raise exception 'a path prefix has 1 to 1024 characters' using errcode = '22023';
    end if;
    perform pg_advisory_xact_lock(hashtextextended('contexts.ingest:' || p_org_id, 0));
    with moved as (
        update data.documents d set owner = p_to, owner_source = 'reassigned'
        where d.org_id = p_org_id and d.owner = p_from and d.deleted_at is null and d.session_id is null
          and (p_repo_id is null or d.repo_id = p_repo_id)
          and (d.persona_id is null or org_write or d.persona_id = any (personas))
          and (p_path_prefix is null or starts_with(d.path, p_path_prefix))
          and (p_from <> p_to)
        returning d.doc_id
    )
    select coalesce(array_agg(m.doc_id), '{}') into docs from moved m;
    with moved as (
        update data.fragments f set owner = p_to, owner_source = 'reassigned'
        where f.org_id = p_org_id and f.owner = p_from and f.session_id is null
          and exists (select 1 from data.fragment_sources s
                      where s.org_id = p_org_id and s.fragment_id = f.fragment_id and s.doc_id = any (docs)
                        and s.retired_at is null)
        returning 1
    )
    select count(*)::int into moved_fragments from moved;
    insert into data.owner_reassignments (org_id, from_owner, to_owner, repo_id, path_prefix, documents, fragments,
                                          principal_id)
    values (p_org_id, p_from, p_to, p_repo_id, p_path_prefix, cardinality(docs), moved_fragments, me.principal_id)
    returning data.owner_reassignments.reassignment_id into id;
    return query select id, cardinality(docs), moved_fragments;
end
$$;
comment on function service.owners_reassign(text, text, text, text, text) is 'Reassign documents (and their fragments) from one owner to another, optionally within a repo and path prefix; needs a write grant there, and moves a persona''s documents only for a writer of that persona; audited in data.owner_reassignments, no version written.';

-- Org settings -------------------------------------------------------------------

-- api.owner_settings: the org's default owner and staleness knobs (members read them).
create or replace function api.owner_settings(p_org_id text)
returns table (org_id text, default_owner text, stale_after_days int, window_days int, min_retrievals int,
               nudge_period_hours int)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_read(p_org_id, null, null, null);
    return query
    select o.org_id, o.default_owner, (extract(epoch from o.stale_after) / 86400)::int,
           (extract(epoch from o.stale_window) / 86400)::int, o.stale_min_retrievals,
           (extract(epoch from o.nudge_period) / 3600)::int
    from data.orgs o where o.org_id = p_org_id;
end
$$;
comment on function api.owner_settings(text) is 'The org''s default owner and staleness thresholds: text older than stale_after_days, at least min_retrievals retrievals within window_days; one nudge per fragment per nudge_period_hours.';

-- service.owner_settings_set: change them (an org write grant: an administrator of the
-- org). A null argument leaves that setting; an empty default owner clears it.
create or replace function service.owner_settings_set(
    p_org_id text, p_default_owner text default null, p_stale_after_days int default null,
    p_window_days int default null, p_min_retrievals int default null, p_nudge_period_hours int default null)
returns table (org_id text, default_owner text, stale_after_days int, window_days int, min_retrievals int,
               nudge_period_hours int)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_write(p_org_id, null, null, null);
    -- One message per broken rule: the caller learns which value to change.
    if p_default_owner <> '' and data._owner_problem(p_default_owner) is not null then
        raise exception 'default owner: %', data._owner_problem(p_default_owner) using errcode = '22023';
    elsif p_stale_after_days not between 1 and 36500 or p_window_days not between 1 and 36500 then
        raise exception 'stale after and window: 1 to 36500 days' using errcode = '22023';
    elsif p_min_retrievals not between 1 and 1000000 then
        raise exception 'min retrievals: 1 to 1000000' using errcode = '22023';
    elsif p_nudge_period_hours not between 1 and 87600 then
        raise exception 'nudge period: 1 to 87600 hours' using errcode = '22023';
    end if;
    update data.orgs o
    set default_owner = case when p_default_owner is null then o.default_owner else nullif(p_default_owner, '') end,
        stale_after = coalesce(make_interval(days => p_stale_after_days), o.stale_after),
        stale_window = coalesce(make_interval(days => p_window_days), o.stale_window),
        stale_min_retrievals = coalesce(p_min_retrievals, o.stale_min_retrievals),
        nudge_period = coalesce(make_interval(hours => p_nudge_period_hours), o.nudge_period)
    where o.org_id = p_org_id;
    return query select * from api.owner_settings(p_org_id);
end
$$;
comment on function service.owner_settings_set(text, text, int, int, int, int) is 'Set the org''s default owner (empty: none) and staleness thresholds; needs an org write grant.';

-- Staleness ----------------------------------------------------------------------

-- data._record_returns: the fragments the new traces returned, one row each. A statement
-- trigger over the inserted rows as they were written, not a row trigger: that one read
-- each trace back from the table and decompressed its candidates again (a trace of 170
-- candidates is about 130 kB of jsonb), on every retrieval's path.
create or replace function data._record_returns()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    -- One jsonpath filter over the candidates (strict: an entry of another shape is
    -- skipped, never an error): 2.5x cheaper than expanding every entry in SQL.
    insert into data.fragment_returns (org_id, trace_id, fragment_id, returned_at)
    select distinct t.org_id, t.trace_id, (x #>> '{}')::bigint, t.created_at
    from added t
    cross join lateral jsonb_path_query(
             case when jsonb_typeof(t.candidates) = 'array' then t.candidates else '[]' end,
             'strict $[*] ? (@.type() == "object" && @.included == true
                             && @.fragment_id.type() == "number").fragment_id') x
    where x #>> '{}' ~ '^[0-9]{1,18}$'
    on conflict do nothing;
    return null;
end
$$;

create or replace trigger retrieval_traces_returns
    after insert on data.retrieval_traces
    referencing new table as added
    for each statement execute function data._record_returns();

-- data._stale_core: the org's stale fragments, past every read rule (owner-only: the
-- caller-facing data._stale_readable and the nudge queue call it). Retrievals are
-- counted over all the org's traces in the window, in one range scan of
-- fragment_returns; then only those often returned are looked up.
create or replace function data._stale_core(
    p_org_id text, p_as_of timestamptz, p_window interval, p_min int, p_after interval)
returns table (fragment_id bigint, retrievals int, last_retrieved_at timestamptz)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    with counted as (
        select r.fragment_id, count(*)::int as retrievals, max(r.returned_at) as last_retrieved_at
        from data.fragment_returns r
        where r.org_id = p_org_id and r.returned_at > p_as_of - p_window and r.returned_at <= p_as_of
        group by r.fragment_id
        having count(*) >= p_min
    )
    select c.fragment_id, c.retrievals, c.last_retrieved_at
    from counted c
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = c.fragment_id
    where f.active and f.updated_at <= p_as_of - p_after
$$;

-- data._stale_readable: data._stale_core with the org's thresholds (or the caller's),
-- kept to the fragments the current principal may read (the data.fragments rule,
-- restated: a definer reads past row-level security). Counts span every retrieval of
-- the org, not only the caller's own: how often a fragment is used is what makes it
-- worth an owner's time (docs/adr/0019).
create or replace function data._stale_readable(
    p_org_id text, p_as_of timestamptz, p_window_days int, p_min int, p_after_days int)
returns table (fragment_id bigint, retrievals int, last_retrieved_at timestamptz, window_days int,
               min_retrievals int, stale_after_days int)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    with knobs as (
        select coalesce(make_interval(days => p_window_days), o.stale_window) as win,
               coalesce(p_min, o.stale_min_retrievals) as least_n,
               coalesce(make_interval(days => p_after_days), o.stale_after) as after
        from data.orgs o where o.org_id = p_org_id and o.org_id = (select data.acl_org())
    )
    select s.fragment_id, s.retrievals, s.last_retrieved_at, (extract(epoch from k.win) / 86400)::int, k.least_n,
           (extract(epoch from k.after) / 86400)::int
    from knobs k
    cross join lateral data._stale_core(p_org_id, p_as_of, k.win, k.least_n, k.after) s
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = s.fragment_id
    where (f.repo_id is null or (select data.acl_org_wide()) or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;
comment on function data._stale_readable(text, timestamptz, int, int, int) is 'Stale fragments (by the org''s thresholds unless given) that the current principal may read, with their retrievals in the window.';

-- api.stale_fragments: the stale fragments the caller may read, optionally of one
-- owner, most retrieved first: what `contexts stale` prints and GET /owners/{owner}/nudges
-- returns. Security invoker: fragments, sources and documents are read under the
-- caller's row-level security.
create or replace function api.stale_fragments(
    p_org_id text, p_owner text default null, p_min_retrievals int default null, p_window_days int default null,
    p_stale_after_days int default null, p_as_of timestamptz default null)
returns table (fragment_id bigint, org_id text, repo_id text, owner text, owner_source text, kind text,
               doc_id bigint, path text, anchor text, heading_path text[], retrievals int,
               last_retrieved_at timestamptz, last_edited_at timestamptz, days_since_edit int, window_days int,
               min_retrievals int, stale_after_days int)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_read(p_org_id, null, null, null);
    if p_min_retrievals not between 1 and 1000000 or p_window_days not between 1 and 36500
       or p_stale_after_days not between 0 and 36500 then
        raise exception 'min retrievals: 1 to 1000000; window and age: days, up to 36500' using errcode = '22023';
    end if;
    return query
    select f.fragment_id, f.org_id, f.repo_id, f.owner, f.owner_source, f.kind,
           src.doc_id, src.path, src.anchor, f.heading_path, s.retrievals, s.last_retrieved_at, f.updated_at,
           (extract(epoch from coalesce(p_as_of, now()) - f.updated_at) / 86400)::int,
           s.window_days, s.min_retrievals, s.stale_after_days
    from data._stale_readable(p_org_id, coalesce(p_as_of, now()), p_window_days, p_min_retrievals,
                              p_stale_after_days) s
    join data.fragments f on f.org_id = p_org_id and f.fragment_id = s.fragment_id
    cross join lateral (
        select x.doc_id, d.path, x.anchor from data.fragment_sources x join data.documents d on d.org_id = x.org_id and d.doc_id = x.doc_id
        where x.org_id = p_org_id and x.fragment_id = f.fragment_id and x.retired_at is null
        order by x.content_hash = f.content_hash desc, x.created_at desc, x.doc_id, x.ordinal
        limit 1
    ) src
    where p_owner is null or f.owner = p_owner
    order by s.retrievals desc, f.updated_at, f.fragment_id;
end
$$;
comment on function api.stale_fragments(text, text, int, int, int, timestamptz) is 'Stale fragments you may read (often retrieved, text not edited for long; the org''s thresholds unless given), optionally of one owner, most retrieved first, with the document path, retrievals in the window, last edit and where the owner came from.';

-- Webhooks and the nudge outbox --------------------------------------------------

-- service.webhook_set: the org's nudge webhook (an org write grant). The URL is http or
-- https without credentials, its scheme in any case (RFC 3986: stored in lower case, as
-- the table's check reads it); the secret (16 to 256 characters, optional) signs each
-- delivery and is never returned. A null secret keeps the one set before.
create or replace function service.webhook_set(p_org_id text, p_url text, p_secret text default null,
                                           p_enabled boolean default true)
returns table (org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamptz)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    me record;
begin
    perform data._require_write(p_org_id, null, null, null);
    select * into me from data._principal_or_raise();
    if p_url ~* '^https?://' then
        p_url := lower(split_part(p_url, '://', 1)) || substr(p_url, strpos(p_url, '://'));
    end if;
    insert into data.org_webhooks as w (org_id, url, secret, enabled, updated_by)
    values (p_org_id, p_url, p_secret, coalesce(p_enabled, true), me.principal_id)
    on conflict on constraint org_webhooks_pkey do update
        set url = excluded.url, secret = coalesce(excluded.secret, w.secret), enabled = excluded.enabled,
            updated_by = excluded.updated_by, updated_at = now();
    return query select * from service.webhook_get(p_org_id);
exception when check_violation or not_null_violation then
    raise exception 'a webhook URL is http:// or https:// with a host and no credentials (at most 2048 characters); a secret has 16 to 256 characters'
        using errcode = '22023';
end
$$;
comment on function service.webhook_set(text, text, text, boolean) is 'Set the org''s nudge webhook (http/https, no credentials in the URL) and its signing secret; needs an org write grant; the secret is never read back.';

-- service.webhook_get: the org's webhook without its secret (an org write grant).
create or replace function service.webhook_get(p_org_id text)
returns table (org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamptz)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_write(p_org_id, null, null, null);
    return query select w.org_id, w.url, w.secret is not null, w.enabled, w.updated_by, w.updated_at
    from data.org_webhooks w where w.org_id = p_org_id;
    if not found then
        raise exception 'org % has no webhook', p_org_id using errcode = 'P0002';
    end if;
end
$$;
comment on function service.webhook_get(text) is 'The org''s nudge webhook (URL, whether a secret is set, enabled), never the secret; needs an org write grant.';

-- service.webhook_delete: remove it; nudges still owed stay queued for a later webhook.
create or replace function service.webhook_delete(p_org_id text)
returns table (org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamptz)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._require_write(p_org_id, null, null, null);
    return query delete from data.org_webhooks w where w.org_id = p_org_id
        returning w.org_id, w.url, w.secret is not null, w.enabled, w.updated_by, w.updated_at;
    if not found then
        raise exception 'org % has no webhook', p_org_id using errcode = 'P0002';
    end if;
end
$$;
comment on function service.webhook_delete(text) is 'Remove the org''s nudge webhook; needs an org write grant.';

-- service.nudges_enqueue: queue a nudge for each stale fragment of each org with an enabled
-- webhook (or of one org), once per fragment and period: a second run in the same
-- period adds nothing. The delivery worker runs it; no principal is involved (an org's
-- webhook hears about all of its org's fragments, and only about them).
create or replace function service.nudges_enqueue(p_org_id text default null, p_as_of timestamptz default null)
returns table (org_id text, enqueued int)
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    o record;
    at timestamptz := coalesce(p_as_of, now());
    n int;
begin
    for o in
        select g.org_id, g.stale_window, g.stale_min_retrievals, g.stale_after, g.nudge_period
        from data.orgs g join data.org_webhooks w on w.org_id = g.org_id
        where w.enabled and (p_org_id is null or g.org_id = p_org_id)
        order by g.org_id
    loop
        insert into data.nudge_outbox (org_id, fragment_id, owner, period_start, payload)
        select o.org_id, s.fragment_id, f.owner,
               date_bin(o.nudge_period, at, timestamptz '2000-01-03 00:00:00+00'),
               jsonb_build_object(
                   'type', 'stale_fragment', 'org_id', o.org_id, 'owner', f.owner, 'owner_source', f.owner_source,
                   'fragment_id', s.fragment_id, 'repo_id', f.repo_id, 'kind', f.kind,
                   'path', src.path, 'anchor', src.anchor, 'doc_id', src.doc_id,
                   'retrievals', s.retrievals, 'window_days', (extract(epoch from o.stale_window) / 86400)::int,
                   'last_retrieved_at', s.last_retrieved_at, 'last_edited_at', f.updated_at,
                   'period_start', date_bin(o.nudge_period, at, timestamptz '2000-01-03 00:00:00+00'))
        from data._stale_core(o.org_id, at, o.stale_window, o.stale_min_retrievals, o.stale_after) s
        join data.fragments f on f.org_id = o.org_id and f.fragment_id = s.fragment_id
        left join lateral (
            select x.doc_id, d.path, x.anchor from data.fragment_sources x join data.documents d on d.org_id = x.org_id and d.doc_id = x.doc_id
            where x.org_id = o.org_id and x.fragment_id = f.fragment_id and x.retired_at is null
            order by x.content_hash = f.content_hash desc, x.created_at desc, x.doc_id, x.ordinal
            limit 1
        ) src on true
        where f.session_id is null
        on conflict on constraint nudge_once_per_period do nothing;
        get diagnostics n = row_count;
        org_id := o.org_id;
        enqueued := n;
        return next;
    end loop;
end
$$;
comment on function service.nudges_enqueue(text, timestamptz) is 'Queue one nudge per stale fragment and period for each org with an enabled webhook (idempotent within a period); run by the delivery worker.';

-- service.nudge_claim: the next nudge due, locked for this transaction (a second worker
-- skips it), with its org's webhook URL and secret. The worker sends it, records the
-- attempt, and commits: a crash before the commit leaves it undelivered, so it is sent
-- again (at least once). Only the service and the migrator may call it.
create or replace function service.nudge_claim(p_org_id text default null)
returns table (nudge_id bigint, org_id text, url text, secret text, payload jsonb, attempts int)
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
    select n.nudge_id, n.org_id, w.url, w.secret, n.payload || jsonb_build_object('nudge_id', n.nudge_id), n.attempts
    from data.nudge_outbox n
    join data.org_webhooks w on w.org_id = n.org_id
    where n.delivered_at is null and n.next_attempt_at <= clock_timestamp() and w.enabled
      and (p_org_id is null or n.org_id = p_org_id)
    order by n.next_attempt_at, n.nudge_id
    limit 1
    for update of n skip locked
$$;
comment on function service.nudge_claim(text) is 'Lock and return the next nudge due, with its own org''s webhook URL and secret (the delivery worker''s; never an HTTP answer).';

-- service.nudge_attempted: record one delivery attempt; a 2xx status marks the nudge
-- delivered, anything else schedules the next attempt after p_retry_in.
create or replace function service.nudge_attempted(
    p_nudge_id bigint, p_url text, p_status int, p_error text, p_duration_ms float8, p_retry_in interval)
returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    ok boolean := p_status between 200 and 299;
    nudge_org text;
begin
    update data.nudge_outbox n
    set attempts = n.attempts + 1, last_status = p_status, last_error = left(p_error, 1000),
        delivered_at = case when ok then clock_timestamp() end,
        next_attempt_at = case when ok then n.next_attempt_at
                               else clock_timestamp() + greatest(coalesce(p_retry_in, interval '0'), interval '0') end
    where n.nudge_id = p_nudge_id and n.delivered_at is null
    returning n.org_id into nudge_org;
    if nudge_org is null then
        raise exception 'no undelivered nudge %', p_nudge_id using errcode = 'P0002';
    end if;
    insert into data.nudge_deliveries (nudge_id, org_id, url, status, error, duration_ms)
    values (p_nudge_id, nudge_org, p_url, p_status, left(p_error, 1000), p_duration_ms);
end
$$;
comment on function service.nudge_attempted(bigint, text, int, text, float8, interval) is 'Record a delivery attempt: 2xx marks the nudge delivered, else it is retried after p_retry_in.';
