-- Supersession and validity windows (the knowledge lifecycle; docs/adr/0016). A fragment
-- is current in [valid_from, valid_until); retrieval keeps only fragments current at the
-- time it is as of (now by default) unless it asks for superseded ones too.
--
-- A document's window comes from its current version's metadata (valid_from,
-- valid_until: ISO 8601, checked at ingest) and from supersession: a live document S
-- that supersedes D (declared in S's or D's metadata, front matter or header:
-- "Supersedes ADR-3", "Status: superseded by ADR-7"; data.fragment_links) ends D's
-- window when S starts, and S's own window starts then. S starts at its valid_from,
-- else at its own time: the earliest of its versions' timestamps (a request's
-- `timestamp`; for `contexts sync`, the commit that last changed the file, and
-- `git_added_at`, the commit that added it), a version without one counting from when
-- it was written. Like a citation counted toward authority, a supersession counts only
-- when every reader of D may read S (S's scope labels are D's or fewer): what a reader
-- cannot see never hides what it can. A fragment cited from several live documents is
-- current while any of them is.

-- data._metadata_time: a metadata value as a time, null when absent or not a time
-- (ingestion refuses such values; rows written otherwise never break a refresh).
create or replace function data._metadata_time(p_value text)
returns timestamptz
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    select case when p_value is not null and pg_input_is_valid(p_value, 'timestamptz')
                then p_value::timestamptz end
$$;
comment on function data._metadata_time(text) is 'A metadata value as a time; null when absent or not a time.';

-- data._refresh_validity: recompute the window of every fragment with a live source in
-- these documents, in the documents they supersede, and in those superseding them.
-- Called after a version's fragments and references are written (service.add_fragments)
-- and after a document is deleted (service.delete_document): once per document written, so
-- the common case (no claim, no date, no window) returns after three index probes.
create or replace function data._refresh_validity(p_org_id text, p_doc_ids bigint[])
returns int
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    touched bigint[];
    fragment_ids bigint[];
    doc_ids bigint[];
    changed int;
begin
    touched := array(
        select unnest(p_doc_ids)
        union
        select l.target_doc_id from data.fragment_links l
        where l.doc_id = any (p_doc_ids) and l.link_type in ('supersedes', 'superseded_by')
          and l.target_doc_id is not null
        union
        select l.doc_id from data.fragment_links l
        where l.target_doc_id = any (p_doc_ids) and l.link_type in ('supersedes', 'superseded_by'));
    -- Fragments whose window may have changed (a deleted document's last version, and a
    -- new version's previous one, included: fragments they left may be cited elsewhere,
    -- under another window now), and every live document citing them.
    fragment_ids := array(
        select distinct s.fragment_id from data.fragment_sources s
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        where s.doc_id = any (touched) and (s.retired_at is null or s.doc_version >= d.current_version - 1));
    doc_ids := array(
        select distinct s.doc_id from data.fragment_sources s
        where s.fragment_id = any (fragment_ids) and s.retired_at is null);
    if not exists (select 1 from data.fragment_links l
                   where l.link_type in ('supersedes', 'superseded_by')
                     and (l.doc_id = any (doc_ids) or l.target_doc_id = any (doc_ids)))
       and not exists (select 1 from data.documents d
                       join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
                       where d.doc_id = any (doc_ids) and (v.metadata ? 'valid_from' or v.metadata ? 'valid_until'))
       and not exists (select 1 from data.fragments f
                       where f.fragment_id = any (fragment_ids) and (f.valid_from is not null or f.valid_until is not null))
    then
        return 0;
    end if;

    with said as (
        -- Live supersession claims: (superseding document, superseded document), made by
        -- a live fragment of the current version of the document that says it.
        select case l.link_type when 'supersedes' then l.doc_id else l.target_doc_id end as newer,
               case l.link_type when 'supersedes' then l.target_doc_id else l.doc_id end as older
        from (select l.* from data.fragment_links l
              where l.link_type in ('supersedes', 'superseded_by') and l.doc_id = any (doc_ids)
              union
              select l.* from data.fragment_links l
              where l.link_type in ('supersedes', 'superseded_by') and l.target_doc_id = any (doc_ids)) l
        where l.org_id = p_org_id and l.target_doc_id is not null
          and exists (select 1 from data.fragment_sources s join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
                      where s.fragment_id = l.fragment_id and s.doc_id = l.doc_id and s.retired_at is null
                        and s.doc_version = d.current_version and d.deleted_at is null)
    ), starts as (
        select d.doc_id, d.repo_id, d.persona_id, d.session_id,
               data._metadata_time(v.metadata ->> 'valid_from') as valid_from,
               data._metadata_time(v.metadata ->> 'valid_until') as valid_until,
               -- The document's own time: its earliest version's (least() skips nulls).
               (select min(least(coalesce(e.source_ts, e.created_at),
                                 data._metadata_time(e.metadata ->> 'git_added_at')))
                from data.document_versions e where e.org_id = d.org_id and e.doc_id = d.doc_id) as began_at
        from data.documents d
        join data.document_versions v on v.org_id = d.org_id and v.doc_id = d.doc_id and v.version = d.current_version
        where d.doc_id = any (doc_ids || array(select s.newer from said s) || array(select s.older from said s))
          and d.org_id = p_org_id and d.deleted_at is null
    ), counted as (
        -- Supersessions that count: both ends live, and the older one within what any
        -- writer of the newer one may write (so may read): the same scope labels, or the
        -- newer one org-wide (written with an org write grant, which covers every repo
        -- and persona, but no session). The newer one is then also readable by every
        -- reader of the older one. A narrower writer naming a document it cannot read
        -- (a repo writer, one of that repo and a persona) retires nothing.
        select s.newer, s.older, coalesce(n.valid_from, n.began_at) as since
        from said s
        join starts n on n.doc_id = s.newer
        join starts o on o.doc_id = s.older
        where s.newer <> s.older
          and ((n.repo_id is not distinct from o.repo_id and n.persona_id is not distinct from o.persona_id
                and n.session_id is not distinct from o.session_id)
               or (n.repo_id is null and n.persona_id is null and n.session_id is null and o.session_id is null))
    ), windows as (
        select o.doc_id,
               coalesce(o.valid_from,
                        case when exists (select 1 from counted c where c.newer = o.doc_id) then o.began_at end)
                   as valid_from,
               least(o.valid_until, (select min(c.since) from counted c where c.older = o.doc_id)) as valid_until
        from starts o
        where o.doc_id = any (doc_ids)
    ), computed as (
        select s.fragment_id,
               case when bool_or(w.valid_from is null) then null else min(w.valid_from) end as valid_from,
               case when bool_or(w.valid_until is null) then null else max(w.valid_until) end as valid_until
        from data.fragment_sources s
        join windows w on w.doc_id = s.doc_id
        where s.fragment_id = any (fragment_ids) and s.retired_at is null
        group by s.fragment_id
    )
    update data.fragments f set valid_from = c.valid_from, valid_until = c.valid_until
    from computed c
    where f.fragment_id = c.fragment_id and f.org_id = p_org_id
      and (f.valid_from is distinct from c.valid_from or f.valid_until is distinct from c.valid_until);
    get diagnostics changed = row_count;
    return changed;
end
$$;
comment on function data._refresh_validity(text, bigint[]) is 'Recompute the validity windows of the fragments of these documents and of the documents they supersede or are superseded by.';

-- data._superseders: for each of these fragments, the live documents that supersede a
-- live document it is cited from ([{doc_id, path, evidence}], earliest first; [] when
-- none), as the caller may read them: a security invoker, it reads links and documents
-- under row-level security (a supersession counts only from a document every reader of
-- the older one may read, so a reader of the fragment sees what superseded it).
create or replace function data._superseders(p_org_id text, p_fragment_ids bigint[])
returns table (fragment_id bigint, superseded_by jsonb)
language sql stable
set search_path = pg_catalog, pg_temp
as $$
    with sources as materialized (
        select distinct s.fragment_id, s.doc_id
        from (select s.* from data.fragment_sources s
              where s.org_id = p_org_id and s.fragment_id = any (p_fragment_ids) and s.retired_at is null
              offset 0) s
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id and d.deleted_at is null
    ), edges as materialized (
        -- Each direction through its partial index (0014_validity.sql).
        select src.fragment_id, src.doc_id as older, l.doc_id as newer, l.evidence
        from sources src
        join data.fragment_links l
          on l.target_doc_id = src.doc_id and l.link_type in ('supersedes', 'superseded_by')
        where l.link_type = 'supersedes' and l.org_id = p_org_id
        union all
        select src.fragment_id, src.doc_id, l.target_doc_id, l.evidence
        from sources src
        join data.fragment_links l
          on l.doc_id = src.doc_id and l.link_type in ('supersedes', 'superseded_by')
        where l.link_type = 'superseded_by' and l.org_id = p_org_id and l.target_doc_id is not null
    ), claims as (
        -- One per (fragment, superseding document): its declaration, if it has several.
        select distinct on (e.fragment_id, n.doc_id) e.fragment_id, n.doc_id, n.path, e.evidence, n.created_at
        from edges e
        join data.documents n on n.doc_id = e.newer and n.deleted_at is null and n.doc_id <> e.older
        order by e.fragment_id, n.doc_id, e.evidence nulls last
    ), listed as (
        select c.fragment_id,
               jsonb_agg(jsonb_build_object('doc_id', c.doc_id, 'path', c.path, 'evidence', c.evidence)
                         order by c.created_at, c.doc_id) as superseded_by
        from claims c
        group by c.fragment_id
    )
    select f.id, coalesce(l.superseded_by, '[]')
    from unnest(p_fragment_ids) as f(id)
    left join listed l on l.fragment_id = f.id
$$;
comment on function data._superseders(text, bigint[])
    is 'The live documents superseding a live source of each fragment, as the caller may read them ([] when none).';

-- api.validity_left_out: what validity windows kept out of a retrieval that it would
-- otherwise have held (a trace answers "why didn't the README come back?" with it, and
-- the response names the pins it could not serve). Two kinds of rows:
--   * the pins the request sees (the pin's scope and its fragment's within the
--     request's, unexpired) that api.retrieve_candidates could not serve (pin_id set),
--     whatever their scores: the fragment retired (its document deleted, or its text
--     changed: reason `retired`), outside the request's filters (`filtered`), or not
--     current at p_as_of;
--   * fragments not current at p_as_of that would have ranked: a BM25 score at or above
--     p_lexical_floor (the lexical list's last score when it was full, else 0: any
--     matching fragment), or a cosine at or above its namespace's floor in
--     p_dense_floors ({"prose": 0.41}; a namespace absent: any), at most p_limit of
--     them, the strongest first. A null floor skips that side.
-- Each row says why (superseded, expired, not_yet_valid) and by what (data._superseders).
-- Bounded: an org none of whose fragments has a window and that has no pin returns
-- after two index probes; otherwise the windowed fragments of the scope that are not current (at most 1000,
-- the most recently ended first, through the partial index fragments_windowed) are
-- scored, by index probes per term and per vector, never by a scan of the org. The
-- request's filters apply as in api.retrieve_candidates. Security invoker: row-level
-- security bounds every row, as it bounds the retrieval.
create or replace function api.validity_left_out(
    p_org_id text,
    p_query text,
    p_query_embeddings jsonb,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_lexical_floor float8 default null,
    p_dense_floors jsonb default null,
    p_path_prefix text default null,
    p_kinds text[] default null,
    p_updated_since timestamptz default null,
    p_updated_until timestamptz default null,
    p_negatives text default 'include',
    p_as_of timestamptz default null,
    p_limit int default 20)
returns table (
    fragment_id bigint, pin_id bigint, reason text, lexical_score float8, dense_similarity float8,
    namespace text, doc_id bigint, doc_version int, path text, anchor text, token_count int,
    valid_from timestamptz, valid_until timestamptz, superseded_by jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    valid_at constant timestamptz := coalesce(p_as_of, statement_timestamp());
    negative_filter boolean;
    path_ids bigint[];
    windowed bigint[];
    lexical_ids bigint[] := '{}';
    lexical_scores float8[] := '{}';
    dense_ids bigint[] := '{}';
    dense_sims float8[] := '{}';
    m record;
    has_windows boolean;
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_negatives is null or p_negatives not in ('include', 'only', 'exclude') then
        raise exception 'negatives must be include, only or exclude' using errcode = '22023';
    end if;
    if p_limit is null or p_limit not between 0 and 1000 then
        raise exception 'limit must be between 0 and 1000' using errcode = '22023';
    end if;
    if jsonb_typeof(p_dense_floors) not in ('object', 'null') then
        raise exception 'dense floors must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    has_windows := exists (select 1 from data.fragments f
                           where f.org_id = p_org_id and (f.valid_from is not null or f.valid_until is not null));
    if not has_windows and not exists (select 1 from data.pins p where p.org_id = p_org_id) then
        return;
    end if;
    negative_filter := case p_negatives when 'only' then true when 'exclude' then false end;
    if p_path_prefix is not null then
        select coalesce(array_agg(distinct s.fragment_id), '{}') into path_ids
        from data.fragment_sources s
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id
        where s.org_id = p_org_id and s.retired_at is null and s.content_hash = f.content_hash
          and d.org_id = p_org_id and starts_with(d.path, p_path_prefix);
    end if;
    -- The scope's fragments outside their window at valid_at, passing the filters.
    windowed := array(
        select f.fragment_id from data.fragments f
        where has_windows and p_limit > 0  -- limit 0: the pins alone (a request keeping superseded fragments)
          and f.org_id = p_org_id and (f.valid_from is not null or f.valid_until is not null) and f.active
          and not ((f.valid_from is null or f.valid_from <= valid_at) and (f.valid_until is null or f.valid_until > valid_at))
          and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
          and (path_ids is null or f.fragment_id = any (path_ids))
          and (p_kinds is null or f.kind = any (p_kinds))
          and (p_updated_since is null or f.updated_at >= p_updated_since)
          and (p_updated_until is null or f.updated_at < p_updated_until)
          and (negative_filter is null or f.negative = negative_filter)
        order by f.valid_until desc nulls last, f.fragment_id
        limit 1000);

    if p_lexical_floor is not null and cardinality(windowed) > 0 and p_limit > 0 then
        select coalesce(array_agg(l.fragment_id), '{}'), coalesce(array_agg(l.score), '{}')
          into lexical_ids, lexical_scores
        from data._bm25_scores(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, windowed, 1.2, 0.75) l;
    end if;
    if p_dense_floors is not null and cardinality(windowed) > 0 and p_limit > 0 then
        for m in select * from data._query_vectors(p_query_embeddings) loop
            select dense_ids || coalesce(array_agg(e.fragment_id), '{}'),
                   dense_sims || coalesce(array_agg(1.0::float8 - (e.embedding <=> m.query_vector)), '{}')
              into dense_ids, dense_sims
            from data.embeddings e
            where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (windowed);
        end loop;
    end if;

    return query
    with scored as (
        select w.id,
               l.score as lexical_score,
               d.similarity as dense_similarity
        from unnest(windowed) as w(id)
        left join unnest(lexical_ids, lexical_scores) as l(id, score) on l.id = w.id
        left join unnest(dense_ids, dense_sims) as d(id, similarity) on d.id = w.id
    ), pinned as (
        -- The pins the request sees that api.retrieve_candidates could not serve, and why
        -- (its conditions, in its order; `window`: the validity reason is found below).
        select x.* from (
            select distinct on (p.fragment_id) p.fragment_id as id, p.pin_id, f.namespace, p.created_at,
                   case when not f.active then 'retired'
                        when not ((path_ids is null or f.fragment_id = any (path_ids))
                                  and (p_kinds is null or f.kind = any (p_kinds))
                                  and (p_updated_since is null or f.updated_at >= p_updated_since)
                                  and (p_updated_until is null or f.updated_at < p_updated_until)
                                  and (negative_filter is null or f.negative = negative_filter)) then 'filtered'
                        when (f.valid_from is not null or f.valid_until is not null)
                             and not ((f.valid_from is null or f.valid_from <= valid_at)
                                      and (f.valid_until is null or f.valid_until > valid_at)) then 'window'
                   end as why
            from data.pins p
            join data.fragments f on f.fragment_id = p.fragment_id and f.org_id = p.org_id
            where p.org_id = p_org_id and f.org_id = p_org_id
              and (p.expires_at is null or p.expires_at > statement_timestamp())
              and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
              and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
            order by p.fragment_id, p.created_at, p.pin_id) x
        where x.why is not null
    ), ranked as (
        -- Strongest first: each side's score over the best among these, the better side.
        select x.*
        from (select s.id, s.lexical_score, s.dense_similarity, f.namespace,
                     greatest(coalesce(s.lexical_score / nullif(max(s.lexical_score) over (), 0), 0),
                              coalesce(s.dense_similarity / nullif(max(s.dense_similarity) over (), 0), 0)) as strength
              from scored s
              join data.fragments f on f.fragment_id = s.id and f.org_id = p_org_id
              where not exists (select 1 from pinned p where p.id = s.id)  -- said as a pin
                and ((s.lexical_score > 0 and s.lexical_score >= p_lexical_floor)
                     or (s.dense_similarity is not null
                         and (p_dense_floors ->> f.namespace is null
                              or s.dense_similarity >= (p_dense_floors ->> f.namespace)::float8)))) x
        order by x.strength desc, x.id
        limit p_limit
    ), rows as (
        select p.id, p.pin_id, null::float8 as lexical_score, null::float8 as dense_similarity, p.namespace,
               0 as part, row_number() over (order by p.created_at, p.pin_id) as ord, p.why
        from pinned p
        union all
        select r.id, null, r.lexical_score, r.dense_similarity, r.namespace, 1,
               row_number() over (order by r.strength desc, r.id), 'window'
        from ranked r
    ), cited as (
        -- As api.retrieve_candidates cites: the sources first (offset 0: probed by id,
        -- never reached from a scan of the documents). A retired pin has no live source:
        -- the last one it had says where its text was.
        select distinct on (s.fragment_id) s.fragment_id, s.doc_id, s.doc_version, d.path, s.anchor
        from (select s.* from data.fragment_sources s
              where s.org_id = p_org_id and s.fragment_id = any (array(select r.id from rows r))
                and (s.retired_at is null or s.fragment_id = any (array(select r.id from rows r where r.why = 'retired')))
              offset 0) s
        join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        order by s.fragment_id, s.retired_at is null desc, s.retired_at desc, s.content_hash = f.content_hash desc,
                 (p_path_prefix is null or starts_with(d.path, p_path_prefix)) desc,
                 s.created_at desc, s.doc_id, s.ordinal
    ), superseders as materialized (
        select * from data._superseders(p_org_id, array(select distinct r.id from rows r))
    )
    select r.id, r.pin_id,
           case when r.why <> 'window' then r.why
                when f.valid_from is not null and f.valid_from > valid_at then 'not_yet_valid'
                when jsonb_array_length(sp.superseded_by) > 0 then 'superseded'
                else 'expired' end,
           r.lexical_score, r.dense_similarity, r.namespace, c.doc_id, c.doc_version, c.path, c.anchor,
           f.token_count, f.valid_from, f.valid_until, sp.superseded_by
    from rows r
    join data.fragments f on f.fragment_id = r.id and f.org_id = p_org_id
    left join cited c on c.fragment_id = r.id
    left join superseders sp on sp.fragment_id = r.id
    order by r.part, r.ord;
end
$$;
comment on function api.validity_left_out(text, text, jsonb, text, text, text, float8, jsonb, text, text[], timestamptz, timestamptz, text, timestamptz, int)
    is 'What validity windows kept out of a retrieval: the pins it sees whose fragment is not current at p_as_of, and the fragments not current then that would have ranked (scores at or above the lists'' floors), each with its reason and the documents superseding it.';
