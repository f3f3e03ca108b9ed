-- data._bm25_top: the exact BM25 top k of a query within a scope and filters, scored by
-- the contexts_bm25 extension over the packed postings the caller may read
-- (docs/adr/0025-lexical-blocks.md; the pruning it replaces: docs/adr/0023).
--
-- extensions.bm25_top walks the query terms' blocks document at a time with MaxScore:
-- the common terms whose bounds together cannot lift a fragment to the current k-th
-- best are never iterated, only probed for the fragments the others bring, and a probe
-- skips whole sub-blocks of 128 postings by their last id. Its answer is what scoring
-- every posting gives (tests/sql/test_bm25_top.py).
--
-- Filters that postings do not carry (kinds, update window, negative, validity) are
-- applied to the best k x 4 fragments; when fewer than k pass and more fragments
-- matched, the next pass asks for four times as many, until k pass or every matching
-- fragment was looked at: exact, and one pass in the usual case. p_also_ids (the dense
-- hits of a hybrid retrieval) get their BM25 from the same blocks in the last pass, with
-- in_top false when they are outside the top k (absent: no query term).
create or replace function data._bm25_top(
    p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_ids bigint[], p_k int,
    p_kinds text[] default null, p_updated_since timestamptz default null,
    p_updated_until timestamptz default null, p_negative boolean default null,
    p_valid_at timestamptz default null,
    p_k1 float8 default 1.2, p_b float8 default 0.75, p_also_ids bigint[] default null)
returns table (fragment_id bigint, score float8, in_top boolean)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    filtered constant boolean := p_kinds is not null or p_updated_since is not null
        or p_updated_until is not null or p_negative is not null or p_valid_at is not null;
    st record;
    asked int;
    ids bigint[];
    scores float8[];
    kept bigint[];
    top bigint[];
begin
    if p_k is null or p_k < 0 then
        return;
    end if;
    st := data._bm25_statistics(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id);
    if st.terms is null then
        return;
    end if;
    if not filtered then
        return query
        select t.fragment_id, t.score, t.in_top
        from extensions.bm25_top(st.term_nos, st.blocks, st.weights, p_k, p_k1, p_b, st.avgdl,
                                 p_fragment_ids, p_also_ids) t;
        return;
    end if;
    asked := least(greatest(p_k, 1) * 4, 1000000);
    loop
        select coalesce(array_agg(t.fragment_id order by t.ord), '{}'), coalesce(array_agg(t.score order by t.ord), '{}')
          into ids, scores
        from extensions.bm25_top(st.term_nos, st.blocks, st.weights, asked, p_k1, p_b, st.avgdl, p_fragment_ids)
             with ordinality as t(fragment_id, score, in_top, ord);
        kept := data._bm25_kept(p_org_id, ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at);
        exit when cardinality(kept) >= p_k or cardinality(ids) < asked or asked >= 1000000;
        asked := least(asked * 4, 1000000);
    end loop;
    -- The first k of the asked ones that passed, in score order.
    select coalesce(array_agg(c.id order by c.ord), '{}') into top
    from (select c.id, c.ord from unnest(ids) with ordinality as c(id, ord)
          join unnest(kept) as k(id) on k.id = c.id
          order by c.ord limit p_k) c;
    return query
    select c.id, c.score, true
    from unnest(ids, scores) as c(id, score)
    join unnest(top) with ordinality as t(id, ord) on t.id = c.id
    order by t.ord;
    if p_also_ids is not null then
        return query
        select t.fragment_id, t.score, false
        from extensions.bm25_top(st.term_nos, st.blocks, st.weights, cardinality(p_also_ids), p_k1, p_b, st.avgdl,
                                 p_also_ids) t
        where t.fragment_id <> all (top);
    end if;
end
$$;
comment on function data._bm25_top(text, text, text, text, text, bigint[], int, text[], timestamptz, timestamptz, boolean, timestamptz, float8, float8, bigint[])
    is 'Exact BM25 top k within a scope and filters over packed postings (contexts_bm25); also the BM25 of p_also_ids (docs/adr/0025).';

-- data._bm25_kept: which of the given fragments pass the retrieval filters (kind,
-- update window, negative flag, validity at a time): the filters the postings do not carry.
create or replace function data._bm25_kept(
    p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamptz,
    p_updated_until timestamptz, p_negative boolean, p_valid_at timestamptz)
returns bigint[]
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    select coalesce(array_agg(f.fragment_id), '{}')
    from data.fragments f
    where f.org_id = p_org_id and f.fragment_id = any (p_fragment_ids)
      and (p_kinds is null or f.kind = any (p_kinds))
      and (p_updated_since is null or f.updated_at >= p_updated_since)
      and (p_updated_until is null or f.updated_at < p_updated_until)
      and (p_negative is null or f.negative = p_negative)
      and (p_valid_at is null
           or ((f.valid_from is null or f.valid_from <= p_valid_at)
               and (f.valid_until is null or f.valid_until > p_valid_at)))
$$;
comment on function data._bm25_kept(text, bigint[], text[], timestamptz, timestamptz, boolean, timestamptz)
    is 'The given fragments that pass the retrieval filters postings do not carry (kind, dates, negative, validity).';
