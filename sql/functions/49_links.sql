-- Links resolved on demand ("write less, link more"): fragments stay minimal, and the
-- citation graph (data.fragment_links, sql/functions/47_authority.sql) is followed when
-- a caller asks, one hop, under the caller's row-level security: a link is visible with
-- its citing fragment and, once resolved, with the fragment it cites.

-- api.fragment_links: the references a fragment makes (`out`: resolved or still waiting
-- for their target) and those made to it (`in`), each with the fragment at the other
-- end and where it is cited from, and a supersession's evidence. P0002 unless the caller
-- may read the fragment.
-- data._links_to_hidden: the references a fragment the caller may read makes to
-- fragments the caller may not read. Row-level security hides such a link's row (it
-- names its target); left out of the listing, it would differ from a reference to
-- nothing, shown unresolved, and tell the reader that the path it names exists (a
-- persona's document, a session's note under the hash of its text). So api.fragment_links
-- shows these as unresolved too: what the citing text says, never what it reaches.
create or replace function data._links_to_hidden(p_fragment_id bigint)
returns table (link_type text, target text, target_key text, target_name text, target_anchor text,
               link_id bigint, evidence text)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    org constant text := (select data.acl_org());
    targets bigint[];
    readable bigint[];
begin
    -- PL/pgSQL: data._readable_fragments (the read rule, restated once) is made after
    -- this file (50_traces.sql).
    targets := array(select l.target_fragment_id from data.fragment_links l
                     where l.fragment_id = p_fragment_id and l.org_id = org and l.target_fragment_id is not null);
    readable := data._readable_fragments(org, p_fragment_id || targets);
    if not p_fragment_id = any (readable) then
        return;
    end if;
    return query
    select l.link_type, l.target, l.target_key, l.target_name, l.target_anchor, l.link_id, l.evidence
    from data.fragment_links l
    where l.fragment_id = p_fragment_id and l.org_id = org and l.target_fragment_id is not null
      and not l.target_fragment_id = any (readable);
end
$$;
comment on function data._links_to_hidden(bigint) is 'References a fragment the caller may read makes to fragments it may not read (api.fragment_links shows them unresolved).';

create or replace function api.fragment_links(p_fragment_id bigint)
returns table (direction text, link_type text, target text, resolved boolean,
               fragment_id bigint, doc_id bigint, path text, anchor text, evidence text)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
    perform 1 from data.fragments f where f.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
    return query
    select x.direction, x.link_type, x.target, x.resolved, x.fragment_id, x.doc_id, x.path, x.anchor, x.evidence
    from (
        select distinct on (l.link_type, l.target_key, coalesce(l.target_name, ''), coalesce(l.target_anchor, ''))
               'out'::text as direction, l.link_type, l.target, l.target_fragment_id is not null as resolved,
               l.target_fragment_id as fragment_id, l.target_doc_id as doc_id, d.path,
               (select s.anchor from data.fragment_sources s
                where s.org_id = l.org_id and s.fragment_id = l.target_fragment_id and s.doc_id = l.target_doc_id and s.retired_at is null
                order by s.doc_version desc, s.ordinal limit 1) as anchor,
               l.link_id, l.evidence
        from (select l.org_id, l.link_type, l.target, l.target_key, l.target_name, l.target_anchor,
                     l.target_fragment_id, l.target_doc_id, l.link_id, l.evidence
              from data.fragment_links l
              where l.fragment_id = p_fragment_id
              union all
              select null, h.link_type, h.target, h.target_key, h.target_name, h.target_anchor, null, null,
                     h.link_id, h.evidence
              from data._links_to_hidden(p_fragment_id) h) l
        left join data.documents d on d.org_id = l.org_id and d.doc_id = l.target_doc_id and l.target_fragment_id is not null
        order by l.link_type, l.target_key, coalesce(l.target_name, ''), coalesce(l.target_anchor, ''), l.link_id
    ) x
    union all
    select y.direction, y.link_type, y.target, true, y.fragment_id, y.doc_id, y.path, y.anchor, y.evidence
    from (
        select distinct on (l.fragment_id, l.link_type)
               'in'::text as direction, l.link_type, l.target, l.fragment_id, l.doc_id, d.path,
               (select s.anchor from data.fragment_sources s
                where s.org_id = l.org_id and s.fragment_id = l.fragment_id and s.doc_id = l.doc_id and s.retired_at is null
                order by s.doc_version desc, s.ordinal limit 1) as anchor,
               l.link_id, l.evidence
        from data.fragment_links l
        join data.fragments f on f.org_id = l.org_id and f.fragment_id = l.fragment_id and f.active
        join data.documents d on d.org_id = l.org_id and d.doc_id = l.doc_id and d.deleted_at is null
        where l.target_fragment_id = p_fragment_id and l.fragment_id <> p_fragment_id
        order by l.fragment_id, l.link_type, l.link_id
    ) y;
end
$$;
comment on function api.fragment_links(bigint) is 'The references a fragment makes and those made to it, as the caller may see them (GET /fragments/{id}/links).';

-- api.linked_fragments: one hop from these fragments (in their order): the active
-- fragments they cite, within the requested scope and the caller's grants, current at
-- p_as_of unless p_include_superseded, each once (for the first fragment citing it), not
-- one of p_fragment_ids; with what composition and the response need (retrieval's
-- `expand_links`).
create or replace function api.linked_fragments(
    p_org_id text, p_fragment_ids bigint[],
    p_repo_id text default null, p_persona_id text default null, p_session_id text default null,
    p_as_of timestamptz default null, p_include_superseded boolean default false)
returns table (
    linked_from bigint, link_type text, fragment_id bigint, lexical_rank int, lexical_score float8,
    dense_rank int, dense_similarity float8, fused_score float8, doc_id bigint, doc_version int, path text,
    anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text,
    text text, token_count int, chunker_version text, embedding_model text, updated_at timestamptz,
    negative boolean, valid_from timestamptz, valid_until timestamptz)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
    valid_at timestamptz := case when p_include_superseded then null else coalesce(p_as_of, statement_timestamp()) end;
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    if coalesce(cardinality(p_fragment_ids), 0) > 1000 then
        raise exception 'at most 1000 fragments to expand' using errcode = '22023';
    end if;
    return query
    with hops as (
        select distinct on (l.target_fragment_id) c.id as citing, l.link_type, l.target_fragment_id as target, c.ord,
               l.link_id
        from unnest(p_fragment_ids) with ordinality as c(id, ord)
        join data.fragment_links l on l.fragment_id = c.id and l.org_id = p_org_id
        where l.target_fragment_id is not null and not l.target_fragment_id = any (p_fragment_ids)
        order by l.target_fragment_id, c.ord, l.link_id
    )
    select h.citing, h.link_type, f.fragment_id, null::int, null::float8, null::int, null::float8, 0.0::float8,
           src.doc_id, src.doc_version, src.path, src.anchor, f.repo_id, f.namespace, f.kind, f.owner,
           f.heading_path, f.symbol, f.text, f.token_count, f.chunker_version,
           (select em.name || '@' || em.generation from data._serving_models() em
            where em.namespace = f.namespace),
           f.updated_at, f.negative, f.valid_from, f.valid_until
    from hops h
    join data.fragments f on f.fragment_id = h.target and f.org_id = p_org_id and f.active
    cross join lateral (
        select s.doc_id, s.doc_version, d.path, s.anchor
        from data.fragment_sources s join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        where s.fragment_id = f.fragment_id and s.retired_at is null
        order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id, s.ordinal
        limit 1
    ) src
    where data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
      and (valid_at is null
           or ((f.valid_from is null or f.valid_from <= valid_at) and (f.valid_until is null or f.valid_until > valid_at)))
    order by h.ord, h.link_id;
end
$$;
comment on function api.linked_fragments(text, bigint[], text, text, text, timestamptz, boolean) is 'The fragments these cite, one hop, within the requested scope and current (a retrieval''s expand_links).';
