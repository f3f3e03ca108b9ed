-- data._bm25_top: the exact BM25 top k of a query within a scope, without scoring every
-- posting of every query term (docs/adr/0023).
--
-- Scoring everything (data._bm25_scores) costs one step per posting: a query holding a
-- common term reads that term's whole list, and at 100k fragments a tenant's common
-- terms hold tens of thousands of postings each. Term-level MaxScore skips most of them
-- and still returns exactly what scoring everything would:
--
--   1. A term's contribution to any fragment is below its bound idf * (k1 + 1) (tf
--      saturates: tf (k1 + 1) / (tf + k1 norm) < k1 + 1 for every tf and length).
--   2. A threshold theta no higher than the true k-th best score: the exact k-th best
--      among seed fragments, the postings of the rarest query terms (any set of
--      fragments gives a lower bound; rare terms' fragments give a high one cheaply).
--   3. Terms taken from the most common up, while their bounds sum below theta, are
--      non-essential: a fragment holding none of the other (essential) terms scores
--      below theta and cannot be in the top k. Candidates are the fragments of the
--      essential terms' postings, scored on those terms in one pass.
--   4. A candidate whose partial score plus every non-essential bound stays below theta
--      is dropped; the rest get their non-essential contributions by index probes
--      (org, term, fragment) instead of reading those terms' lists.
--
-- The same filters as the dense side (kinds, update window, negative, validity) apply
-- to the seeds before theta is taken and to the result, so theta bounds the k-th best
-- fragment that survives them. When pruning cannot pay (fewer than p_prune_from
-- postings in all, where the extra statements cost more than scoring everything: about
-- 20,000 on the bench corpus; fewer than k seeds; no non-essential term) the function
-- scores everything as before. Scores are
-- the formula of data._bm25_scores with its statistics (a sum taken in another order
-- may differ from it in the last bits). Callers check the requested scope first.
create or replace function data._bm25_top(
    p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_ids bigint[], p_k int,
    p_kinds text[] default null, p_updated_since timestamptz default null,
    p_updated_until timestamptz default null, p_negative boolean default null,
    p_valid_at timestamptz default null,
    p_k1 float8 default 1.2, p_b float8 default 0.75, p_prune_from bigint default 20000)
returns table (fragment_id bigint, score float8)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    filtered constant boolean := p_kinds is not null or p_updated_since is not null
        or p_updated_until is not null or p_negative is not null or p_valid_at is not null;
    n float8;
    avgdl float8;
    -- The query's terms found in scope, most common first, with idf and frequency.
    terms text[];
    idfs float8[];
    dfs bigint[];
    seed_terms text[];
    seed_ids bigint[];
    theta float8;
    -- terms[1:cut] are non-essential; their bounds sum to ne_bound.
    cut int := 0;
    ne_bound float8 := 0;
    i int;
    ids bigint[];
    partials float8[];
    kept bigint[];
begin
    if p_k is null or p_k < 1 then
        return;
    end if;
    select sum(c.fragment_count)::float8,
           sum(c.total_length)::float8 / greatest(sum(c.fragment_count), 1)::float8
      into n, avgdl
    from data.bm25_corpus c
    where c.org_id = p_org_id
      and data._in_scope(c.repo_id, c.persona_id, c.session_id, p_repo_id, p_persona_id, p_session_id)
    having sum(c.fragment_count) > 0;
    if n is null then
        return;
    end if;
    select array_agg(t.term order by t.idf, t.term), array_agg(t.idf order by t.idf, t.term),
           array_agg(t.df order by t.idf, t.term)
      into terms, idfs, dfs
    from (select s.term, sum(s.df) as df,
                 ln(1.0::float8 + (n - sum(s.df)::float8 + 0.5) / (sum(s.df)::float8 + 0.5)) as idf
          from data.bm25_terms s
          where s.org_id = p_org_id
            and s.term = any (array(select distinct q.lexeme from unnest(api.lexical_tsvector(p_query)) as q))
            and s.df > 0
            and data._in_scope(s.repo_id, s.persona_id, s.session_id, p_repo_id, p_persona_id, p_session_id)
          group by s.term) t;
    if terms is null then
        return;
    end if;

    if (select sum(d) from unnest(dfs) as d) >= p_prune_from then
        -- Seeds: the fragments best on the rarest terms (up to 3,000 of their postings),
        -- those that pass the filters, the 2k best kept. Their exact k-th best score is
        -- theta: the true top k holds k fragments at least that good.
        select array_agg(r.term) into seed_terms
        from (select r.term, sum(r.df) over (order by r.df, r.term) - r.df as before
              from unnest(terms, dfs) as r(term, df)) r
        where r.before < 3000;
        select array_agg(x.fragment_id order by x.partial desc, x.fragment_id) into seed_ids
        from (select p.fragment_id,
                     sum(p.idf * (p.tf::float8 * (p_k1 + 1.0))
                         / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as partial
              from (select w.idf, p.fragment_id, p.tf, p.dl
                    from (select w.term, w.idf from unnest(terms, idfs) as w(term, idf)
                          where w.term = any (seed_terms) order by w.idf desc offset 0) w
                    join lateral (select p.fragment_id, p.tf, p.dl from data.bm25_postings p
                                  where p.org_id = p_org_id and p.term = w.term
                                    and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
                                    and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))) p on true
                    limit 3000) p
              group by p.fragment_id) x;
        if filtered and seed_ids is not null then
            kept := data._bm25_kept(p_org_id, seed_ids, p_kinds, p_updated_since, p_updated_until,
                                    p_negative, p_valid_at);
            select array_agg(c.id order by c.ord) into seed_ids
            from unnest(seed_ids) with ordinality as c(id, ord)
            join unnest(kept) as k(id) on k.id = c.id;
        end if;
        seed_ids := seed_ids[1:greatest(2 * p_k, 50)];
        if cardinality(seed_ids) >= p_k then
            -- One index probe per term for the seeds' postings (`fragment_id = any` as an
            -- index condition): joined instead, the plan read every posting of the seeds,
            -- all their terms (10,000 rows for 200 seeds at 100k fragments, 36 ms).
            select s.score into theta
            from (select sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                             / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
                  from unnest(terms, idfs) as w(term, idf)
                  cross join lateral (select p.fragment_id, p.tf, p.dl from data.bm25_postings p
                                      where p.org_id = p_org_id and p.term = w.term
                                        and p.fragment_id = any (seed_ids)
                                      offset 0) p
                  group by p.fragment_id) s
            order by s.score desc
            offset p_k - 1 limit 1;
            -- The shortest run of common terms whose bounds stay below theta (a margin
            -- of 1e-9 for rounding): none of them can lift a fragment to theta alone.
            i := 1;
            while i <= cardinality(terms)
                  and ne_bound + idfs[i] * (p_k1 + 1.0) < theta * (1.0 - 1e-9) loop
                ne_bound := ne_bound + idfs[i] * (p_k1 + 1.0);
                cut := i;
                i := i + 1;
            end loop;
        end if;
    end if;

    if cut = 0 or cut = cardinality(terms) then
        -- Nothing to skip: score every posting (data._bm25_scores' plan).
        if not filtered then
            return query
            select p.fragment_id,
                   sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                       / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
            from unnest(terms, idfs) as w(term, idf)
            join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
            where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
              and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
            group by p.fragment_id
            order by score desc, p.fragment_id
            limit p_k;
            return;
        end if;
        select coalesce(array_agg(b.fragment_id), '{}'), coalesce(array_agg(b.score), '{}')
          into ids, partials
        from (select p.fragment_id,
                     sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                         / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as score
              from unnest(terms, idfs) as w(term, idf)
              join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
              where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
                and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
              group by p.fragment_id) b;
        kept := data._bm25_kept(p_org_id, ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at);
        return query
        select c.id, c.score
        from unnest(ids, partials) as c(id, score)
        join unnest(kept) as k(id) on k.id = c.id
        order by c.score desc, c.id
        limit p_k;
        return;
    end if;

    raise debug 'bm25_top: % of % terms non-essential (bound %, theta %)', cut, cardinality(terms), ne_bound, theta;
    -- Candidates: fragments of the essential terms that can still reach theta.
    select coalesce(array_agg(e.fragment_id), '{}'), coalesce(array_agg(e.partial), '{}')
      into ids, partials
    from (select p.fragment_id,
                 sum(w.idf * (p.tf::float8 * (p_k1 + 1.0))
                     / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))) as partial
          from unnest(terms[cut + 1:], idfs[cut + 1:]) as w(term, idf)
          join data.bm25_postings p on p.org_id = p_org_id and p.term = w.term
          where data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
            and (p_fragment_ids is null or p.fragment_id = any (p_fragment_ids))
          group by p.fragment_id) e
    where e.partial + ne_bound >= theta * (1.0 - 1e-9);
    if filtered then
        kept := data._bm25_kept(p_org_id, ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at);
        select coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.partial), '{}')
          into ids, partials
        from unnest(ids, partials) as c(id, partial)
        join unnest(kept) as k(id) on k.id = c.id;
    end if;
    -- Partial scores are lower bounds of the final ones: the k-th best of them may
    -- raise theta. Then the non-essential terms, the likeliest first, one probe by
    -- (org, term, fragment) per candidate still able to reach theta with the bounds of
    -- the terms left; each round may raise theta again and drop more candidates.
    i := cut;
    loop
        select greatest(theta, (select c.partial from unnest(partials) as c(partial)
                                order by c.partial desc offset p_k - 1 limit 1))
          into theta;
        raise debug 'bm25_top: % candidates, theta %, bound left %', cardinality(ids), theta, ne_bound;
        exit when i = 0;
        select coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.partial), '{}')
          into ids, partials
        from unnest(ids, partials) as c(id, partial)
        where c.partial + ne_bound >= theta * (1.0 - 1e-9);
        -- The term's postings of these candidates: `fragment_id = any (ids)` is an index
        -- condition (a skip scan over the sorted ids, never the whole list), and the
        -- contributions are added by grouping, not by a join, which a plan estimating
        -- ten candidates would run as a nested loop over both lists.
        select coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.partial), '{}')
          into ids, partials
        from (select c.id, sum(c.score) as partial
              from (select u.id, u.partial as score from unnest(ids, partials) as u(id, partial)
                    union all
                    select p.fragment_id,
                           idfs[i] * (p.tf::float8 * (p_k1 + 1.0))
                           / (p.tf::float8 + p_k1 * (1.0 - p_b + p_b * p.dl::float8 / avgdl))
                    from data.bm25_postings p
                    where p.org_id = p_org_id and p.term = terms[i] and p.fragment_id = any (ids)) c
              group by c.id) x;
        ne_bound := ne_bound - idfs[i] * (p_k1 + 1.0);
        i := i - 1;
    end loop;
    return query
    select c.id, c.partial
    from unnest(ids, partials) as c(id, partial)
    order by c.partial desc, c.id
    limit p_k;
end
$$;
comment on function data._bm25_top(text, text, text, text, text, bigint[], int, text[], timestamptz, timestamptz, boolean, timestamptz, float8, float8, bigint)
    is 'Exact BM25 top k within a scope and filters, pruning common terms by MaxScore from p_prune_from postings on (docs/adr/0023).';

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
