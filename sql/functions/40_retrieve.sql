-- Retrieval: dense top-k per namespace, and the fused candidate list.

-- data._query_vectors: the serving model of each namespace p_query_embeddings names
-- ({"prose": [...], "code": [...]}): the active generation, or the one the transaction
-- asks for (data._serving_models), with that namespace's vector parsed once; 22023 for
-- anything but an object of arrays of the model's dimensions. An optional "_models"
-- key ({"prose": "all-MiniLM-L6-v2"}) names the model each vector came from: a vector
-- from another model (a service still configured with a generation since replaced) is
-- refused with 55000 rather than searched. Other keys are ignored.
create or replace function data._query_vectors(p_query_embeddings jsonb)
returns table (model_id int, namespace text, dims int, query_vector extensions.vector)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    m record;
begin
    if jsonb_typeof(p_query_embeddings) is distinct from 'object' then
        raise exception 'query embeddings must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    for m in
        select em.model_id, em.namespace, em.name, em.generation, em.dims from data._serving_models() em
        where p_query_embeddings ? em.namespace
        order by em.namespace
    loop
        if jsonb_typeof(p_query_embeddings -> '_models' -> m.namespace) = 'string'
           and p_query_embeddings -> '_models' ->> m.namespace <> m.name then
            raise exception 'namespace % is served by % (generation %), not by %', m.namespace, m.name, m.generation,
                p_query_embeddings -> '_models' ->> m.namespace using errcode = '55000',
                hint = 'The namespace was promoted to another model: the service loads it from its recorded source (its log says why when it cannot).';
        end if;
        if jsonb_typeof(p_query_embeddings -> m.namespace) is distinct from 'array'
           or jsonb_array_length(p_query_embeddings -> m.namespace) <> m.dims then
            raise exception 'query embedding for namespace % must have % dimensions', m.namespace, m.dims
                using errcode = '22023';
        end if;
        return query select m.model_id, m.namespace, m.dims, (p_query_embeddings -> m.namespace)::text::vector;
    end loop;
end
$$;

-- data._dense_hits: cosine top-k of one model among the active fragments of a scope
-- (row-level security filters the HNSW scan; iterative scans keep it going until k
-- visible rows are found), optionally only among p_fragment_ids, of p_kinds, updated
-- in [p_updated_since, p_updated_until), negative or not (p_negative; null: both), and
-- current at p_valid_at (sql/functions/48_validity.sql; null: whatever their window).
-- ef_search is raised to k (its default of 40 caps a top-100 at ~40 rows). Callers
-- check the requested scope first.
create or replace function data._dense_hits(
    p_org_id text, p_model_id int, p_dims int, p_query_vector extensions.vector, p_k int,
    p_repo_id text, p_persona_id text, p_session_id text,
    p_fragment_ids bigint[] default null, p_kinds text[] default null,
    p_updated_since timestamptz default null, p_updated_until timestamptz default null,
    p_negative boolean default null, p_valid_at timestamptz default null)
returns table (fragment_id bigint, similarity float8, rank int)
language plpgsql volatile
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform set_config('hnsw.ef_search', least(greatest(p_k, 40), 1000)::text, true);
    perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
    -- Literal model id and dims so the partial expression index matches.
    return query execute format($query$
        with nearest as materialized (
            select e.fragment_id, (e.embedding::vector(%1$s) <=> $1::vector(%1$s)) as distance
            from data.embeddings e
            join data.fragments f on f.fragment_id = e.fragment_id and f.org_id = e.org_id
            where e.model_id = %2$s and e.org_id = $2 and f.active
              and data._in_scope(f.repo_id, f.persona_id, f.session_id, $3, $4, $5)
              and ($7::bigint[] is null or e.fragment_id = any ($7::bigint[]))
              and ($8::text[] is null or f.kind = any ($8::text[]))
              and ($9::timestamptz is null or f.updated_at >= $9::timestamptz)
              and ($10::timestamptz is null or f.updated_at < $10::timestamptz)
              and ($11::boolean is null or f.negative = $11::boolean)
              and ($12::timestamptz is null
                   or ((f.valid_from is null or f.valid_from <= $12::timestamptz)
                       and (f.valid_until is null or f.valid_until > $12::timestamptz)))
            order by e.embedding::vector(%1$s) <=> $1::vector(%1$s)
            limit $6
        )
        select n.fragment_id, 1.0::float8 - n.distance,
               (row_number() over (order by n.distance, n.fragment_id))::int
        from nearest n
        order by n.distance, n.fragment_id
        $query$, p_dims, p_model_id)
    using p_query_vector, p_org_id, p_repo_id, p_persona_id, p_session_id, p_k,
          p_fragment_ids, p_kinds, p_updated_since, p_updated_until, p_negative, p_valid_at;
end
$$;

-- api.search_dense: cosine top-k per embedding namespace, among the fragments the
-- caller may read. p_query_embeddings maps a namespace to its query vector
-- ({"prose": [...], "code": [...]}); each namespace is searched with its active
-- model's HNSW index (data._dense_hits).
create or replace function api.search_dense(
    p_org_id text,
    p_query_embeddings jsonb,
    p_k int default 100,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null)
returns table (fragment_id bigint, namespace text, model_id int, similarity float8, rank int)
language plpgsql volatile
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    m record;
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    for m in select * from data._query_vectors(p_query_embeddings) loop
        return query
        select h.fragment_id, m.namespace, m.model_id, h.similarity, h.rank
        from data._dense_hits(p_org_id, m.model_id, m.dims, m.query_vector, p_k,
                              p_repo_id, p_persona_id, p_session_id) h
        order by h.rank;
    end loop;
end
$$;
comment on function api.search_dense(text, jsonb, int, text, text, text)
    is 'Cosine top-k per namespace with that namespace''s active model (HNSW, iterative scan).';

-- api.retrieve_candidates: lexical top-k and dense top-k, fused (data._fuse in
-- 45_fusion.sql: weighted score fusion by default, or RRF), with everything the
-- reranker, composer and trace need. Dense lists of several namespaces are merged
-- rank by rank (their similarities come from different models and are not comparable).
--
-- Each side's work is done once: BM25 scores every matching fragment in one pass (the
-- top k are the lexical list; the rest complete the dense candidates' scores), and
-- each namespace's query vector is parsed once, then both searches its HNSW index and
-- scores the lexical candidates of that namespace. Access is checked once, up front.
--
-- Optional filters narrow the candidates, never the statistics (BM25's N, df and
-- average length stay those of the requested scope): p_path_prefix keeps fragments with
-- a live exact source in a document under that path (computed once, up front, and then
-- cited from such a source); p_kinds and the half-open [p_updated_since,
-- p_updated_until) window test the fragment's kind and updated_at. Each side applies
-- them inside its own step: BM25 scores only the path's fragments and drops the other
-- kinds and dates in one scan of the scored ids before its top k is taken; the HNSW
-- scan tests them with the scope, so iterative scans keep a filtered top k full.
-- Without filters every added test is a constant and the plans are those of before.
-- p_negatives ('include', 'only', 'exclude') keeps negative fragments (anti-patterns,
-- data.fragments.negative), keeps only them, or drops them, the same way.
--
-- Pins (data.pins, docs/adr/0012): the active fragments pinned to a scope the request
-- sees (data._in_scope of the pin's labels, and of the fragment's), unexpired, within
-- the same filters, come back too, with pin_id and pin_rank (1 for the earliest pin),
-- whatever their scores: a pin among the fused candidates is marked there; any other
-- is added after them with no ranks and a fused score of 0. Pins take no part in the
-- fusion, so a request without visible pins returns exactly what it did before.
--
-- The ranking profile in effect (data._ranking_profile: blend weights and half-lives per
-- kind of the request's persona, else of the org) comes back in `profile` on the first
-- row; with a persona weight above 0, persona_similarity is each candidate's cosine to
-- the persona's vector: its profile's description and the centroid of its own
-- fragments, each as a unit vector, summed (docs/adr/0014). A term weighted 0 is not
-- computed: no persona evidence is read, and with w_authority 0 no authority either
-- (authority and authority_refreshed_at are null: the term counts 0).
create or replace function api.retrieve_candidates(
    p_org_id text,
    p_query text,
    p_query_embeddings jsonb,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_k_lexical int default 100,
    p_k_dense int default 100,
    p_rrf_k int default 60,
    p_fusion jsonb default '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}',
    p_path_prefix text default null,
    p_kinds text[] default null,
    p_updated_since timestamptz default null,
    p_updated_until timestamptz default null,
    p_negatives text default 'include',
    p_as_of timestamptz default null,
    p_include_superseded boolean default false)
returns table (
    fragment_id bigint, lexical_rank int, lexical_score float8, dense_rank int, dense_similarity float8,
    fused_score float8, doc_id bigint, doc_version int, path text, anchor text, repo_id text,
    namespace text, kind text, owner text, heading_path text[], symbol text, text text,
    token_count int, chunker_version text, embedding_model text, updated_at timestamptz,
    lexical_norm float8, dense_norm float8, lexical_weight float8, dense_weight float8,
    negative boolean, pin_id bigint, pin_rank int, persona_similarity float8, authority float8,
    authority_refreshed_at timestamptz, valid_from timestamptz, valid_until timestamptz, reading bytea,
    profile jsonb)
language plpgsql volatile
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    weighted constant boolean := p_fusion ->> 'method' = 'weighted';
    lexical_on constant boolean := p_k_lexical > 0;
    dense_on constant boolean := p_k_dense > 0;
    m record;
    -- The lexical top k, best first (BM25).
    bm25_ids bigint[] := '{}';
    bm25_scores float8[] := '{}';
    lexical_ids bigint[] := '{}';
    -- Dense hits of every namespace (rank within its namespace), and the cosine of the
    -- lexical candidates with their namespace's model (to complete weighted fusion).
    dense_ids bigint[] := '{}';
    dense_sims float8[] := '{}';
    dense_ranks int[] := '{}';
    hit_ids bigint[];
    hit_sims float8[];
    candidate_ids bigint[];
    bm25_fill_ids bigint[] := '{}';
    bm25_fill_scores float8[] := '{}';
    fill_ids bigint[] := '{}';
    fill_sims float8[] := '{}';
    -- Fragments with a live exact source under p_path_prefix (null: no path filter).
    path_ids bigint[];
    -- Negative fragments: null keeps both, true only them, false none of them.
    negative_filter boolean;
    -- Pinned fragments visible to the request, earliest pin first, and their pins.
    pinned_ids bigint[] := '{}';
    pin_ids bigint[] := '{}';
    -- The ranking profile in effect, and each candidate's cosine to the persona's centroid.
    profile jsonb;
    persona_ids bigint[] := '{}';
    persona_sims float8[] := '{}';
    evidence_ids bigint[];
    centroid extensions.vector;
    described extensions.vector;
    -- Fragments whose authority is read: none when the profile does not weigh it.
    authority_ids bigint[] := '{}';
    -- Keep fragments current at this time (null: any window): see below.
    valid_at timestamptz;
begin
    -- The requested scope must lie within the caller's grants (42501 otherwise);
    -- row-level security then keeps every other fragment out of every list below.
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    perform data._require_scope(p_org_id, p_repo_id, p_persona_id);
    if p_query is null or btrim(p_query) = '' then
        raise exception 'query must not be empty' using errcode = '22023';
    end if;
    if p_k_lexical not between 0 and 1000 or p_k_dense not between 0 and 1000 then
        raise exception 'k_lexical and k_dense must be between 0 and 1000' using errcode = '22023';
    end if;
    if p_rrf_k < 1 then
        raise exception 'rrf_k must be positive' using errcode = '22023';
    end if;
    perform data._check_fusion(p_fusion);
    if p_negatives is null or p_negatives not in ('include', 'only', 'exclude') then
        raise exception 'negatives must be include, only or exclude' using errcode = '22023';
    end if;
    negative_filter := case p_negatives when 'only' then true when 'exclude' then false end;
    if p_include_superseded is null then
        raise exception 'include_superseded must be true or false' using errcode = '22023';
    end if;
    -- Supersession and validity windows (sql/functions/48_validity.sql): only fragments
    -- current at p_as_of (now by default), unless superseded ones are asked for. An org
    -- without any window skips the test (an index probe), so its plans stay as they were.
    if not p_include_superseded and exists (
        select 1 from data.fragments f
        where f.org_id = p_org_id and (f.valid_from is not null or f.valid_until is not null)) then
        valid_at := coalesce(p_as_of, statement_timestamp());
    end if;
    profile := data._ranking_profile(p_org_id, p_persona_id);
    if p_path_prefix is not null then
        select coalesce(array_agg(distinct s.fragment_id), '{}') into path_ids
        from data.fragment_sources s
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        join data.fragments f on f.fragment_id = s.fragment_id and f.org_id = s.org_id
        where s.org_id = p_org_id and s.retired_at is null and s.content_hash = f.content_hash
          and d.org_id = p_org_id and starts_with(d.path, p_path_prefix);
        if cardinality(path_ids) = 0 then
            return;  -- nothing under that path: no index scan needed
        end if;
    end if;

    if dense_on then
        for m in select * from data._query_vectors(p_query_embeddings) loop
            select coalesce(array_agg(h.fragment_id order by h.rank), '{}'),
                   coalesce(array_agg(h.similarity order by h.rank), '{}')
              into hit_ids, hit_sims
            from data._dense_hits(p_org_id, m.model_id, m.dims, m.query_vector, p_k_dense,
                                  p_repo_id, p_persona_id, p_session_id,
                                  path_ids, p_kinds, p_updated_since, p_updated_until, negative_filter,
                                  valid_at) h;
            dense_ids := dense_ids || hit_ids;
            dense_sims := dense_sims || hit_sims;
            dense_ranks := dense_ranks || array(select generate_series(1, cardinality(hit_ids)));
        end loop;
        -- Only the first p_k_dense hits of all namespaces together are candidates (the
        -- `dense` list below keeps them in this order): with two namespaces about half of
        -- the hits are not, and their rows, sources, BM25 and authority need not be read.
        select coalesce(array_agg(d.id order by d.rank, d.similarity desc, d.id), '{}'),
               coalesce(array_agg(d.similarity order by d.rank, d.similarity desc, d.id), '{}'),
               coalesce(array_agg(d.rank order by d.rank, d.similarity desc, d.id), '{}')
          into dense_ids, dense_sims, dense_ranks
        from (select u.id, u.similarity, u.rank
              from unnest(dense_ids, dense_sims, dense_ranks) as u(id, similarity, rank)
              order by u.rank, u.similarity desc, u.id
              limit p_k_dense) d;
    end if;

    if lexical_on then
        -- The exact BM25 top k after the filters the dense side applies too (kinds, dates,
        -- negative, validity; sql/functions/21_bm25_top.sql). Weighted fusion also needs the
        -- BM25 of the dense hits outside it: scored from the same blocks in the same call
        -- (in_top false; absent: no query term, 0), not read a second time.
        select coalesce(array_agg(b.fragment_id order by b.ord) filter (where b.in_top), '{}'),
               coalesce(array_agg(b.score order by b.ord) filter (where b.in_top), '{}'),
               coalesce(array_agg(b.fragment_id) filter (where not b.in_top), '{}'),
               coalesce(array_agg(b.score) filter (where not b.in_top), '{}')
          into bm25_ids, bm25_scores, bm25_fill_ids, bm25_fill_scores
        from data._bm25_top(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, path_ids, p_k_lexical,
                            p_kinds, p_updated_since, p_updated_until, negative_filter, valid_at,
                            p_also_ids => case when weighted and dense_on then dense_ids end)
             with ordinality as b(fragment_id, score, in_top, ord);
        lexical_ids := bm25_ids;
        if weighted and dense_on then
            -- And the similarity of the lexical hits outside the dense top k.
            for m in select * from data._query_vectors(p_query_embeddings) loop
                select fill_ids || coalesce(array_agg(e.fragment_id), '{}'),
                       fill_sims || coalesce(array_agg(1.0::float8 - (e.embedding <=> m.query_vector)), '{}')
                  into fill_ids, fill_sims
                from data.embeddings e
                where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (lexical_ids);
            end loop;
        end if;
    end if;

    -- Pins the request sees: the pin's scope and its fragment's both within the requested
    -- scope (row-level security has already bounded both by the caller's grants).
    select coalesce(array_agg(p.fragment_id order by p.created_at, p.pin_id), '{}'),
           coalesce(array_agg(p.pin_id order by p.created_at, p.pin_id), '{}')
      into pinned_ids, pin_ids
    from (select distinct on (p.fragment_id) p.fragment_id, p.pin_id, p.created_at
          from data.pins p
          join data.fragments f on f.fragment_id = p.fragment_id and f.org_id = p.org_id
          where p.org_id = p_org_id and f.org_id = p_org_id and f.active
            and (p.expires_at is null or p.expires_at > statement_timestamp())
            and data._in_scope(p.repo_id, p.persona_id, p.session_id, p_repo_id, p_persona_id, p_session_id)
            and data._in_scope(f.repo_id, f.persona_id, f.session_id, p_repo_id, p_persona_id, p_session_id)
            and (path_ids is null or f.fragment_id = any (path_ids))
            and (p_kinds is null or f.kind = any (p_kinds))
            and (p_updated_since is null or f.updated_at >= p_updated_since)
            and (p_updated_until is null or f.updated_at < p_updated_until)
            and (negative_filter is null or f.negative = negative_filter)
            and (valid_at is null
                 or ((f.valid_from is null or f.valid_from <= valid_at)
                     and (f.valid_until is null or f.valid_until > valid_at)))
          order by p.fragment_id, p.created_at, p.pin_id) p;

    candidate_ids := lexical_ids || dense_ids;
    if (profile ->> 'w_authority')::float8 > 0 then
        authority_ids := candidate_ids || pinned_ids;
    end if;
    -- Persona evidence (docs/adr/0014): what the persona cares about, per model, from
    -- two sources: the description of its profile (embedded when it was set,
    -- data.persona_vectors) and the centroid of its own fragments (the 1000 most
    -- recently updated). With both, their unit vectors count equally (the sum of the two,
    -- whose cosine to a fragment is the mean of the two cosines up to one factor per
    -- persona); with one, that one. Each candidate gets its cosine to it, floored at 0.
    -- Only when the profile weighs it.
    if p_persona_id is not null and (profile ->> 'w_persona')::float8 > 0 then
        select coalesce(array_agg(f.fragment_id), '{}') into evidence_ids
        from (select f.fragment_id from data.fragments f
              where f.org_id = p_org_id and f.persona_id = p_persona_id and f.active
              order by f.updated_at desc, f.fragment_id desc
              limit 1000) f;
        for m in select em.model_id from data._serving_models() em order by em.model_id loop
            -- Two id-list probes, as the lexical fill above (a join lets a stale estimate
            -- pick a nested loop over the whole model's vectors).
            centroid := null;
            if cardinality(evidence_ids) > 0 then
                select avg(e.embedding) into centroid
                from data.embeddings e
                where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (evidence_ids);
            end if;
            select v.embedding into described
            from data.persona_vectors v
            where v.org_id = p_org_id and v.persona_id = p_persona_id and v.model_id = m.model_id;
            centroid := case when centroid is null then described
                             when described is null then centroid
                             else l2_normalize(described) + l2_normalize(centroid) end;
            continue when centroid is null;
            select persona_ids || coalesce(array_agg(e.fragment_id), '{}'),
                   persona_sims || coalesce(array_agg(greatest(0.0::float8, 1.0::float8 - (e.embedding <=> centroid))), '{}')
              into persona_ids, persona_sims
            from data.embeddings e
            where e.model_id = m.model_id and e.org_id = p_org_id and e.fragment_id = any (candidate_ids || pinned_ids);
        end loop;
    end if;

    return query
    with lexical as (
        select l.id as fragment_id, l.score, l.rank::int as rank
        from unnest(bm25_ids, bm25_scores) with ordinality as l(id, score, rank)
    ), dense as (
        select d.id as fragment_id, d.similarity,
               (row_number() over (order by d.rank, d.similarity desc, d.id))::int as rank
        from unnest(dense_ids, dense_sims, dense_ranks) as d(id, similarity, rank)
        order by rank
        limit p_k_dense
    ), pooled as (
        select coalesce(l.fragment_id, d.fragment_id) as fragment_id,
               l.rank as lexical_rank, l.score as lexical_score, d.rank as dense_rank, d.similarity
        from lexical l full join dense d on d.fragment_id = l.fragment_id
    ), candidate_rows as materialized (
        -- One scan probing the index once per id (joined per candidate instead, a
        -- nested loop would re-sort the id list for every probe).
        select f.fragment_id, f.namespace, f.repo_id, f.kind, f.owner, f.heading_path, f.symbol, f.text,
               f.token_count, f.chunker_version, f.updated_at, f.content_hash, f.negative,
               f.valid_from, f.valid_until, f.reading
        from data.fragments f
        where f.org_id = p_org_id and f.fragment_id = any (candidate_ids || pinned_ids)
    ), completed as materialized (
        -- Weighted fusion scores each candidate on both sides: a dense hit matching no
        -- query term has BM25 0; a lexical hit's cosine comes from its namespace's model.
        select p.fragment_id, p.lexical_rank, p.dense_rank, f.namespace, em.name as model,
               em.name || '@' || em.generation as model_label,
               case when lexical_on and weighted
                    then coalesce(p.lexical_score, lf.score, 0.0) else p.lexical_score end as lexical_score,
               coalesce(p.similarity, df.similarity) as dense_similarity,
               f.repo_id, f.kind, f.owner, f.heading_path, f.symbol, f.text, f.token_count,
               f.chunker_version, f.updated_at, f.content_hash, f.negative, f.valid_from, f.valid_until, f.reading
        from pooled p
        join candidate_rows f on f.fragment_id = p.fragment_id
        left join data._serving_models() em on em.namespace = f.namespace
        left join unnest(bm25_fill_ids, bm25_fill_scores) as lf(fragment_id, score) on lf.fragment_id = p.fragment_id
        left join unnest(fill_ids, fill_sims) as df(fragment_id, similarity) on df.fragment_id = p.fragment_id
    ), fused as (
        select fx.* from data._fuse(
            array(select c.fragment_id from completed c), array(select c.lexical_rank from completed c),
            array(select c.lexical_score from completed c), array(select c.dense_rank from completed c),
            array(select c.dense_similarity from completed c), array(select c.namespace from completed c),
            array(select c.model from completed c), lexical_on, dense_on, p_fusion, p_rrf_k) fx
    ), cited as (
        -- Cite a live source holding exactly this text (near-duplicates point here too).
        -- Whether a source holds its fragment's text is one probe of a hash of the
        -- candidates' (id, hash) pairs: joined to candidate_rows instead, the plan (which
        -- expects a handful of sources) compared every source with every candidate, 5 of
        -- the 9 ms of this step at 200 candidates.
        select distinct on (s.fragment_id) s.fragment_id, s.doc_id, s.doc_version, d.path, s.anchor
        from (select s.* from data.fragment_sources s
              where s.fragment_id = any (candidate_ids || pinned_ids) and s.retired_at is null offset 0) s
        join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        order by s.fragment_id,
                 (s.fragment_id, s.content_hash) in (select f.fragment_id, f.content_hash from candidate_rows f) desc,
                 (p_path_prefix is null or starts_with(d.path, p_path_prefix)) desc,
                 s.created_at desc, s.doc_id, s.ordinal
    ), pinned as (
        select pn.fragment_id, pn.pin_id, pn.pin_rank::int as pin_rank
        from unnest(pinned_ids, pin_ids) with ordinality as pn(fragment_id, pin_id, pin_rank)
    ), authority as materialized (
        -- Citation authority (sql/functions/47_authority.sql), read through its definer helper.
        select au.fragment_id, au.authority, au.refreshed_at
        from data._authority(p_org_id, authority_ids) au
        where cardinality(authority_ids) > 0
    )
    -- The profile rides on the first row only (parsed once, not once per candidate).
    select r.*, case when row_number() over (order by r.fused_score desc, r.lexical_rank nulls last,
                                                      r.dense_rank nulls last, r.pin_rank nulls last,
                                                      r.fragment_id) = 1 then profile end
    from (
        select fu.fragment_id, fu.lexical_rank, fu.lexical_score, fu.dense_rank, fu.dense_similarity,
               fu.fused_score, src.doc_id, src.doc_version, src.path, src.anchor, c.repo_id,
               c.namespace, c.kind, c.owner, c.heading_path, c.symbol, c.text,
               c.token_count, c.chunker_version, c.model_label, c.updated_at,
               fu.lexical_norm, fu.dense_norm, fu.lexical_weight, fu.dense_weight,
               c.negative, pn.pin_id, pn.pin_rank, ps.similarity as persona_similarity, au.authority, au.refreshed_at,
               c.valid_from, c.valid_until, c.reading
        from fused fu
        join completed c on c.fragment_id = fu.fragment_id
        left join cited src on src.fragment_id = fu.fragment_id
        left join pinned pn on pn.fragment_id = fu.fragment_id
        left join unnest(persona_ids, persona_sims) as ps(fragment_id, similarity) on ps.fragment_id = fu.fragment_id
        left join authority au on au.fragment_id = fu.fragment_id
        union all
        -- Pins outside both candidate lists: no ranks, no scores, after every candidate.
        select pn.fragment_id, null, null, null, null, 0.0::float8, src.doc_id, src.doc_version, src.path,
               src.anchor, f.repo_id, f.namespace, f.kind, f.owner, f.heading_path, f.symbol, f.text,
               f.token_count, f.chunker_version, em.name || '@' || em.generation, f.updated_at,
               null, null, null, null, f.negative, pn.pin_id, pn.pin_rank, ps.similarity, au.authority, au.refreshed_at,
               f.valid_from, f.valid_until, f.reading
        from pinned pn
        join candidate_rows f on f.fragment_id = pn.fragment_id
        left join data._serving_models() em on em.namespace = f.namespace
        left join cited src on src.fragment_id = pn.fragment_id
        left join unnest(persona_ids, persona_sims) as ps(fragment_id, similarity) on ps.fragment_id = pn.fragment_id
        left join authority au on au.fragment_id = pn.fragment_id
        where not pn.fragment_id = any (candidate_ids)
    ) r
    order by r.fused_score desc, r.lexical_rank nulls last, r.dense_rank nulls last, r.pin_rank nulls last,
             r.fragment_id;
end
$$;
comment on function api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb, text, text[], timestamptz, timestamptz, text, timestamptz, boolean)
    is 'Lexical and dense top-k fused (weighted calibrated scores by default, or RRF), with ranks, scores and citation data per candidate, the pins the request sees (pin_id, pin_rank), each candidate''s similarity to the persona, its citation authority (0 to 1, with the time of the last refresh) and the ranking profile in effect (first row); optional path prefix, kinds, updated-at window and negatives filters; only fragments current at p_as_of (now by default) unless p_include_superseded, each with its validity window and its reading for the learned reranker (null: none stored).';

-- api.get_fragment: one fragment with all its live and past source pointers.
create or replace function api.get_fragment(p_fragment_id bigint)
returns table (
    fragment_id bigint, org_id text, repo_id text, persona_id text, session_id text,
    doc_id bigint, doc_version int, namespace text, kind text, owner text, heading_path text[],
    symbol text, text text, token_count int, chunker_version text, simhash bigint,
    active boolean, created_at timestamptz, updated_at timestamptz, embedding_model text, sources jsonb)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    return query
    select f.fragment_id, f.org_id, f.repo_id, f.persona_id, f.session_id, f.doc_id, f.doc_version,
           f.namespace, f.kind, f.owner, f.heading_path, f.symbol, f.text, f.token_count,
           f.chunker_version, f.simhash, f.active, f.created_at, f.updated_at,
           (select em.name || '@' || em.generation from data.embeddings e
              join data.embedding_models em on em.model_id = e.model_id
             where e.fragment_id = f.fragment_id order by em.generation desc limit 1),
           coalesce((select jsonb_agg(jsonb_build_object(
                        'doc_id', s.doc_id, 'version', s.doc_version, 'path', d.path,
                        'anchor', s.anchor, 'start_line', s.start_line, 'end_line', s.end_line,
                        'live', s.retired_at is null, 'exact', s.content_hash = f.content_hash)
                        order by s.retired_at is null desc, s.created_at desc)
                     from data.fragment_sources s join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
                     where s.fragment_id = f.fragment_id), '[]'::jsonb)
    from data.fragments f
    where f.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
end
$$;
comment on function api.get_fragment(bigint) is 'A fragment, its provenance and every source pointer.';
