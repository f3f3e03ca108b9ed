-- Fusion of the lexical and dense candidate lists (R-RET-2). The math lives here,
-- apart from the retrieval plumbing in 40_retrieve.sql, which calls data._fuse once.
--
-- Two methods, chosen per call by p_fusion (a JSON object):
--   {"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}   (default)
--   {"method": "rrf"}                                            Reciprocal Rank Fusion
-- "weighted" first completes the scores: a candidate found by one side only gets its
-- exact score from the other side too (BM25 of that fragment, cosine with its
-- namespace's active model), so no candidate is penalised for falling just outside
-- the other list's top k. Each side is then calibrated per query by its best score:
-- lexical_norm = BM25 / best BM25; dense_norm = cosine / best cosine of the same
-- model (namespaces with different models are not comparable). The fused score is
--     fused = lexical_weight * lexical_norm + dense_weight * dense_norm
-- with lexical_weight = (1 - w) * f / s and dense_weight = w / s, s = (1 - w) * f + w,
-- w = p_fusion's dense_weight and f = 1 unless p_fusion's "lexical_weight" discounts a
-- namespace's lexical evidence (the service discounts code for natural-language
-- questions: a question's words rarely occur in the code that answers it). The two
-- weights of a namespace sum to 1, so scores lie in [0, 1], 1 for the best on both
-- sides, in every namespace alike.
-- Ranks alone (RRF) throw away how far ahead a side's best candidates are, so a side
-- with no idea still pulls its arbitrary top ranks into the fused top; scores keep it.

-- api.score_lexical: BM25 of the given fragments for a query, with the same formula
-- and the same statistics as api.search_lexical (summed over the scope groups of the
-- requested scope that the caller may read); fragments matching no term are absent.
create or replace function api.score_lexical(
    p_org_id text,
    p_query text,
    p_fragment_ids bigint[],
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_k1 float8 default 1.2,
    p_b float8 default 0.75)
returns table (fragment_id bigint, score float8)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    return query
    select s.fragment_id, s.score
    from data._bm25_scores(p_org_id, p_query, p_repo_id, p_persona_id, p_session_id, p_fragment_ids, p_k1, p_b) s;
end
$$;
comment on function api.score_lexical(text, text, bigint[], text, text, text, float8, float8)
    is 'BM25 (k1=1.2, b=0.75) of given fragments for a query, with api.search_lexical''s statistics; no matching term: absent.';

-- api.score_dense: cosine similarity of the given fragments (those the caller may read)
-- to the query vector of their namespace ({"prose": [...], "code": [...]}), with that
-- namespace's active model.
create or replace function api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[])
returns table (fragment_id bigint, similarity float8)
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    perform data._require_read(p_org_id, null, null, null);
    if jsonb_typeof(p_query_embeddings) is distinct from 'object' then
        return;
    end if;
    return query
    with query_vectors as materialized (
        -- Each namespace's vector is parsed once, not once per fragment.
        select em.model_id, em.namespace, (p_query_embeddings -> em.namespace)::text::vector as v
        from data.embedding_models em
        where em.status = 'active' and p_query_embeddings ? em.namespace
          and jsonb_typeof(p_query_embeddings -> em.namespace) = 'array'
          and jsonb_array_length(p_query_embeddings -> em.namespace) = em.dims
    )
    select e.fragment_id, 1.0::float8 - (e.embedding <=> q.v)
    from query_vectors q
    join data.fragments f on f.org_id = p_org_id and f.namespace = q.namespace and f.fragment_id = any (p_fragment_ids)
    join data.embeddings e on e.org_id = p_org_id and e.fragment_id = f.fragment_id and e.model_id = q.model_id;
end
$$;
comment on function api.score_dense(text, jsonb, bigint[])
    is 'Cosine similarity of given fragments to the query vector of their namespace (active model).';

-- data._check_fusion: reject an unusable fusion specification (22023).
create or replace function data._check_fusion(p_fusion jsonb)
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
    w record;
begin
    if jsonb_typeof(p_fusion) is distinct from 'object' or p_fusion ->> 'method' not in ('weighted', 'rrf') then
        raise exception 'fusion must be {"method": "weighted" | "rrf", ...}' using errcode = '22023';
    end if;
    if p_fusion ? 'dense_weight' and (jsonb_typeof(p_fusion -> 'dense_weight') <> 'number'
                                      or (p_fusion ->> 'dense_weight')::float8 not between 0 and 1) then
        raise exception 'fusion dense_weight must be a number in [0, 1]' using errcode = '22023';
    end if;
    if p_fusion ? 'lexical_weight' then
        if jsonb_typeof(p_fusion -> 'lexical_weight') <> 'object' then
            raise exception 'fusion lexical_weight must map a namespace to a number' using errcode = '22023';
        end if;
        for w in select key, value from jsonb_each(p_fusion -> 'lexical_weight') loop
            if jsonb_typeof(w.value) <> 'number' or (w.value)::text::float8 not between 0 and 1 then
                raise exception 'fusion lexical_weight of % must be a number in [0, 1]', w.key using errcode = '22023';
            end if;
        end loop;
    end if;
end
$$;

-- data._fuse: the fused list, from the pooled candidates with both sides' scores
-- (arrays aligned by position; for "weighted", scores already completed on both
-- sides by the caller). Out come both ranks (null outside that list's top k), both
-- raw scores, both calibrated scores, the weights that multiply them and the fused
-- score. A side that was not asked for (k = 0) takes no part. Pure arithmetic: the
-- caller has read every number under its own row-level security.
create or replace function data._fuse(
    p_ids bigint[], p_lexical_ranks int[], p_lexical_scores float8[], p_dense_ranks int[], p_dense_scores float8[],
    p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k int)
returns table (fragment_id bigint, lexical_rank int, lexical_score float8, dense_rank int,
               dense_similarity float8, lexical_norm float8, dense_norm float8, lexical_weight float8,
               dense_weight float8, fused_score float8)
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    with completed as (
        select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity,
               c.namespace, c.model
        from unnest(p_ids, p_lexical_ranks, p_lexical_scores, p_dense_ranks, p_dense_scores, p_namespaces, p_models)
             as c(fragment_id, lexical_rank, lexical_score, dense_rank, dense_similarity, namespace, model)
    ), calibrated as (
        select c.*,
               greatest(c.lexical_score, 0.0) / nullif(max(c.lexical_score) over (), 0.0) as lexical_norm,
               greatest(c.dense_similarity, 0.0)
                   / nullif(max(c.dense_similarity) over (partition by c.model), 0.0) as dense_norm,
               coalesce((p_fusion ->> 'dense_weight')::float8, 0.5) as w,
               coalesce((p_fusion -> 'lexical_weight' ->> c.namespace)::float8, 1.0) as f
        from completed c
    ), weighted as (
        -- Per namespace the two weights sum to 1 (lexical (1 - w) f and dense w, over
        -- their sum): a discounted namespace trades lexical evidence for dense evidence
        -- instead of losing reach, so its best candidate can still score 1, as another
        -- namespace's can (in a repository of code and docs, a discount that only took
        -- away let every Markdown page outrank the code a question was about).
        select c.*,
               case when not p_dense_on then 0.0 when not p_lexical_on then 1.0
                    else coalesce(c.w / nullif((1.0 - c.w) * c.f + c.w, 0.0), 0.0) end as w_dense,
               case when not p_lexical_on then 0.0 when not p_dense_on then 1.0
                    else coalesce((1.0 - c.w) * c.f / nullif((1.0 - c.w) * c.f + c.w, 0.0), 1.0) end as w_lexical
        from calibrated c
    )
    select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity,
           c.lexical_norm, c.dense_norm, c.w_lexical, c.w_dense,
           case when p_fusion ->> 'method' = 'rrf'
                then coalesce(1.0::float8 / (p_rrf_k + c.lexical_rank), 0) + coalesce(1.0::float8 / (p_rrf_k + c.dense_rank), 0)
                else c.w_lexical * coalesce(c.lexical_norm, 0) + c.w_dense * coalesce(c.dense_norm, 0) end
    from weighted c
$$;
