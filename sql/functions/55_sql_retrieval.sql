-- Retrieval from SQL: the service's hybrid retrieval for analysts at psql. Query vectors
-- come from a model PostgreSQL cannot run, so api.retrieve reuses the vectors the
-- service computed for the same query text (traces keep them: api.query_vectors), and
-- searches lexically only when it has none. To get a vector for a new text, retrieve it
-- once through the service (POST /contexts/retrieve, or `contexts query TEXT`).

-- api.retrieve: api.retrieve_candidates for a query text, with the newest query vector
-- of each active model that the caller may read for exactly this text (its own traces;
-- its org's with an audit grant; never one whose query is withheld from it), and the
-- fusion the service used with that vector (unless p_fusion says otherwise). Without
-- any such vector: BM25 only, and a notice that says how to get one. Row-level
-- security, the scope check and every error are api.retrieve_candidates' own.
create or replace function api.retrieve(
    p_org_id text,
    p_query text,
    p_repo_id text default null,
    p_persona_id text default null,
    p_session_id text default null,
    p_k_lexical int default 100,
    p_k_dense int default 100,
    p_fusion jsonb default null,
    p_as_of timestamptz default null,
    p_include_superseded boolean default false)
returns table (
    fragment_id bigint, lexical_rank int, lexical_score float8, dense_rank int, dense_similarity float8,
    fused_score float8, doc_id bigint, doc_version int, path text, anchor text, repo_id text,
    namespace text, kind text, owner text, heading_path text[], symbol text, text text,
    token_count int, chunker_version text, embedding_model text, updated_at timestamptz,
    lexical_norm float8, dense_norm float8, lexical_weight float8, dense_weight float8,
    negative boolean, pin_id bigint, pin_rank int, persona_similarity float8, authority float8,
    authority_refreshed_at timestamptz, valid_from timestamptz, valid_until timestamptz, profile jsonb)
language plpgsql volatile
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    vectors jsonb := '{}';
    missing text[] := '{}';
    source_trace uuid;
    source_fusion jsonb;
    fusion jsonb := p_fusion;
    rrf_k int := 60;
    k_dense int := p_k_dense;
    m record;
    hit record;
begin
    -- Checked before any notice, so a refusal is never preceded by one.
    perform data._require_read(p_org_id, p_repo_id, p_persona_id, p_session_id);
    perform data._require_org(p_org_id);
    if p_query is null or btrim(p_query) = '' then
        raise exception 'query must not be empty' using errcode = '22023';
    end if;
    if p_k_lexical is null or p_k_dense is null or p_k_lexical not between 0 and 1000
       or p_k_dense not between 0 and 1000 then
        raise exception 'k_lexical and k_dense must be between 0 and 1000' using errcode = '22023';
    end if;
    if p_k_lexical = 0 and p_k_dense = 0 then
        raise exception 'k_lexical and k_dense are both 0: nothing would be retrieved' using errcode = '22023';
    end if;
    if p_fusion is not null then
        perform data._check_fusion(p_fusion);
    end if;

    if p_k_dense > 0 then
        for m in select em.namespace, em.name, em.dims from data.embedding_models em
                 where em.status = 'active' order by em.namespace loop
            select q.trace_id, q.embedding, q.fusion into hit
            from data._stored_query_vector(p_org_id, p_query, m.name, m.dims) q;
            if hit.trace_id is null then
                missing := missing || m.namespace;
            else
                vectors := vectors || jsonb_build_object(m.namespace, hit.embedding::text::jsonb);
                if source_trace is null then
                    source_trace := hit.trace_id;
                    source_fusion := hit.fusion;
                end if;
            end if;
        end loop;
        if vectors = '{}' then
            k_dense := 0;
            raise notice 'no stored query vector for this exact text: lexical search only (BM25)'
                using hint = 'Retrieve the text once through the service (POST /contexts/retrieve, or '
                             '`contexts query TEXT --org ORG`) as a principal whose traces you may read; '
                             'its trace keeps the query vector (docs/analysts.md).';
        elsif cardinality(missing) > 0 then
            raise notice 'no stored query vector for namespace(s) %: dense search skips them',
                array_to_string(missing, ', ');
        end if;
    end if;

    if fusion is null and source_trace is not null then
        -- The fusion the service used for this very text (its weights depend on the
        -- query's shape), when the trace recorded a usable one.
        fusion := source_fusion;
        begin
            perform data._check_fusion(fusion);
        exception when sqlstate '22023' then
            fusion := null;
        end;
    end if;
    if fusion ->> 'method' = 'rrf' and jsonb_typeof(fusion -> 'k') = 'number' then
        rrf_k := greatest(1, (fusion ->> 'k')::numeric::int);
    end if;

    return query
    select c.fragment_id, c.lexical_rank, c.lexical_score, c.dense_rank, c.dense_similarity, c.fused_score,
           c.doc_id, c.doc_version, c.path, c.anchor, c.repo_id, c.namespace, c.kind, c.owner, c.heading_path,
           c.symbol, c.text, c.token_count, c.chunker_version, c.embedding_model, c.updated_at, c.lexical_norm,
           c.dense_norm, c.lexical_weight, c.dense_weight, c.negative, c.pin_id, c.pin_rank,
           c.persona_similarity, c.authority, c.authority_refreshed_at, c.valid_from, c.valid_until, c.profile
    from api.retrieve_candidates(
        p_org_id, p_query, vectors, p_repo_id, p_persona_id, p_session_id, p_k_lexical, k_dense, rrf_k,
        coalesce(fusion, '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'),
        p_as_of => p_as_of, p_include_superseded => p_include_superseded) c;
end
$$;
comment on function api.retrieve(text, text, text, text, text, int, int, jsonb, timestamptz, boolean)
    is 'Hybrid retrieval of a query text from SQL: api.retrieve_candidates with the newest stored query vector of that text you may read (traces keep them), else BM25 only with a notice.';
