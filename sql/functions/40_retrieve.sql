-- Retrieval: dense top-k per namespace, and the fused candidate list.

-- api.search_dense: cosine top-k per embedding namespace, among the fragments the
-- caller may read (row-level security filters the HNSW scan; iterative scans keep it
-- going until k visible rows are found). p_query_embeddings maps a
-- namespace to its query vector ({"prose": [...], "code": [...]}); each namespace is
-- searched with its active model's HNSW index. ef_search is raised to k (its default
-- of 40 caps a top-100 at ~40 rows) and iterative scans keep filtered results full.
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
    if jsonb_typeof(p_query_embeddings) is distinct from 'object' then
        raise exception 'query embeddings must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    perform set_config('hnsw.ef_search', least(greatest(p_k, 40), 1000)::text, true);
    perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
    for m in
        select em.model_id, em.namespace, em.dims from data.embedding_models em
        where em.status = 'active' and p_query_embeddings ? em.namespace
        order by em.namespace
    loop
        if jsonb_typeof(p_query_embeddings -> m.namespace) is distinct from 'array'
           or jsonb_array_length(p_query_embeddings -> m.namespace) <> m.dims then
            raise exception 'query embedding for namespace % must have % dimensions', m.namespace, m.dims
                using errcode = '22023';
        end if;
        -- Literal model id and dims so the partial expression index matches.
        return query execute format($query$
            with nearest as materialized (
                select e.fragment_id, (e.embedding::vector(%1$s) <=> $1::vector(%1$s)) as distance
                from data.embeddings e
                join data.fragments f on f.fragment_id = e.fragment_id
                where e.model_id = %2$s and e.org_id = $2 and f.active
                  and data._in_scope(f.repo_id, f.persona_id, f.session_id, $3, $4, $5)
                order by e.embedding::vector(%1$s) <=> $1::vector(%1$s)
                limit $6
            )
            select n.fragment_id, %3$L::text, %2$s::int, 1.0::float8 - n.distance,
                   (row_number() over (order by n.distance, n.fragment_id))::int
            from nearest n
            order by n.distance, n.fragment_id
            $query$, m.dims, m.model_id, m.namespace)
        using (p_query_embeddings -> m.namespace)::text, p_org_id, p_repo_id, p_persona_id, p_session_id, p_k;
    end loop;
end
$$;
comment on function api.search_dense(text, jsonb, int, text, text, text)
    is 'Cosine top-k per namespace with that namespace''s active model (HNSW, iterative scan).';

-- api.retrieve_candidates: lexical top-k and dense top-k, fused (data._fuse in
-- 45_fusion.sql: weighted score fusion by default, or RRF), with everything the
-- reranker, composer and trace need. Dense lists of several namespaces are merged
-- rank by rank (their similarities come from different models and are not comparable).
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
    p_fusion jsonb default '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}')
returns table (
    fragment_id bigint, lexical_rank int, lexical_score float8, dense_rank int, dense_similarity float8,
    fused_score float8, doc_id bigint, doc_version int, path text, anchor text, repo_id text,
    namespace text, kind text, owner text, heading_path text[], symbol text, text text,
    token_count int, chunker_version text, embedding_model text, updated_at timestamptz,
    lexical_norm float8, dense_norm float8, lexical_weight float8, dense_weight float8)
language plpgsql volatile
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    -- The requested scope must lie within the caller's grants (42501 otherwise);
    -- row-level security then keeps every other fragment out of every list below.
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
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

    return query
    with lexical as materialized (
        select l.fragment_id, l.score, l.rank
        from api.search_lexical(p_org_id, p_query, p_k_lexical, p_repo_id, p_persona_id, p_session_id) l
        where p_k_lexical > 0
    ), dense_by_namespace as materialized (
        select d.fragment_id, d.similarity, d.rank
        from api.search_dense(p_org_id, case when p_k_dense > 0 then p_query_embeddings else '{}'::jsonb end,
                              p_k_dense, p_repo_id, p_persona_id, p_session_id) d
    ), dense as (
        select d.fragment_id, d.similarity,
               (row_number() over (order by d.rank, d.similarity desc, d.fragment_id))::int as rank
        from dense_by_namespace d
        order by rank
        limit p_k_dense
    ), fused as (
        -- Fusion: see 45_fusion.sql.
        select fx.* from data._fuse(
            p_org_id, p_repo_id, p_persona_id, p_session_id, p_query, p_query_embeddings,
            array(select l.fragment_id from lexical l order by l.rank), array(select l.score from lexical l order by l.rank),
            array(select d.fragment_id from dense d order by d.rank), array(select d.similarity from dense d order by d.rank),
            p_k_lexical > 0, p_k_dense > 0, p_fusion, p_rrf_k) fx
    )
    select fu.fragment_id, fu.lexical_rank, fu.lexical_score, fu.dense_rank, fu.dense_similarity,
           fu.fused_score, src.doc_id, src.doc_version, src.path, src.anchor, f.repo_id,
           f.namespace, f.kind, f.owner, f.heading_path, f.symbol, f.text,
           f.token_count, f.chunker_version, em.name || '@' || em.generation, f.updated_at,
           fu.lexical_norm, fu.dense_norm, fu.lexical_weight, fu.dense_weight
    from fused fu
    join data.fragments f on f.fragment_id = fu.fragment_id
    left join data.embedding_models em on em.namespace = f.namespace and em.status = 'active'
    left join lateral (
        -- Cite a live source holding exactly this text (near-duplicates point here too).
        select s.doc_id, s.doc_version, d.path, s.anchor
        from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
        where s.fragment_id = f.fragment_id and s.retired_at is null
        order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id, s.ordinal
        limit 1
    ) src on true
    order by fu.fused_score desc, fu.lexical_rank nulls last, fu.dense_rank nulls last, fu.fragment_id;
end
$$;
comment on function api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb)
    is 'Lexical and dense top-k fused (weighted calibrated scores by default, or RRF), with ranks, scores and citation data per candidate.';

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
                     from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
                     where s.fragment_id = f.fragment_id), '[]'::jsonb)
    from data.fragments f
    where f.fragment_id = p_fragment_id;
    if not found then
        raise exception 'unknown fragment: %', p_fragment_id using errcode = 'P0002';
    end if;
end
$$;
comment on function api.get_fragment(bigint) is 'A fragment, its provenance and every source pointer.';
