-- Retrieval traces: every retrieval explains each candidate's scores.
--
-- A trace is read only through api.retrieval_traces (sql/views) and api.get_trace, which
-- show a reader what that reader could read directly now, judged against its grants at
-- the moment it reads (a revoked grant or an expired session hides again what it showed):
--   * the rows: the principal's own traces, and every trace of its org with an audit grant;
--   * a candidate whose fragment the reader may not read (under the same rule as the
--     row-level policies of data.fragments, sql/policies) keeps only its ranks, scores and
--     fate ("redacted": true); its fragment id, source, document, version, tokens, namespace
--     and models are dropped;
--   * a request naming a repo, persona or session the reader holds no grant on loses its
--     query and those scope ids (null), and lists them in "redacted".
-- The caller roles hold no privilege on data.retrieval_traces itself.

-- service.record_trace: store one retrieval's request, pipeline versions and candidates,
-- stamped with the bound principal (never one the caller names), and the query vectors
-- it was searched with ({"prose": [...], "code": [...]}, as api.retrieve_candidates
-- took them). A vector is stored once per distinct model (namespaces sharing a model
-- share it), under the name of the model the namespace was searched with (the active
-- generation's, or the one the transaction names: data._serving_models); a namespace
-- without one is skipped, as retrieval skips it. `p_left_out`: what validity windows
-- kept out that would otherwise have ranked, and the pins it could not serve
-- (api.validity_left_out), an array of objects like the candidates (null: none).
create or replace function service.record_trace(
    p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb,
    p_candidates jsonb, p_duration_ms float8 default null, p_query_vectors jsonb default null,
    p_left_out jsonb default null)
returns uuid
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    id uuid;
    m record;
    v vector;
    at int;
    models text[];
    vectors vector[];
begin
    select * into me from data.current_principal();
    if me.org_id is distinct from p_org_id then
        raise exception 'traces are recorded for the bound principal''s own org' using errcode = '42501';
    end if;
    if jsonb_typeof(p_request) is distinct from 'object' or jsonb_typeof(p_candidates) is distinct from 'array'
       or jsonb_path_exists(p_candidates, '$[*] ? (@.type() != "object")') then
        raise exception 'a trace records a request object and an array of candidate objects' using errcode = '22023';
    end if;
    if p_left_out is not null and (jsonb_typeof(p_left_out) <> 'array'
                                   or jsonb_path_exists(p_left_out, '$[*] ? (@.type() != "object")')) then
        raise exception 'a trace records what it left out as an array of objects' using errcode = '22023';
    end if;
    if jsonb_typeof(p_query_vectors) not in ('object', 'null') then
        raise exception 'query vectors must be a JSON object keyed by namespace' using errcode = '22023';
    end if;
    if jsonb_typeof(p_query_vectors) = 'object' then
        if exists (select 1 from jsonb_object_keys(p_query_vectors) k
                   where not exists (select 1 from data.embedding_namespaces n where n.namespace = k)) then
            raise exception 'query vectors name an unknown embedding namespace: %',
                (select string_agg(k, ', ' order by k) from jsonb_object_keys(p_query_vectors) k
                 where not exists (select 1 from data.embedding_namespaces n where n.namespace = k))
                using errcode = '22023';
        end if;
        for m in
            select em.namespace, em.name, em.dims from data._serving_models() em
            where p_query_vectors ? em.namespace
            order by em.namespace
        loop
            if jsonb_typeof(p_query_vectors -> m.namespace) is distinct from 'array'
               or jsonb_array_length(p_query_vectors -> m.namespace) <> m.dims then
                raise exception 'query vector for namespace % must have % dimensions', m.namespace, m.dims
                    using errcode = '22023';
            end if;
            v := (p_query_vectors -> m.namespace)::text::vector;
            at := array_position(models, m.name);
            if at is null then
                models := models || m.name;
                vectors := vectors || v;
            elsif vectors[at] <> v then
                raise exception 'namespaces sharing model % were given different query vectors', m.name
                    using errcode = '22023';
            end if;
        end loop;
    end if;
    insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, duration_ms,
                                       query_models, query_vectors, left_out)
    values (p_org_id, me.principal_id, p_query, p_request, p_pipeline, p_candidates, p_duration_ms,
            models, vectors, nullif(p_left_out, '[]'))
    returning trace_id into id;
    return id;
end
$$;
comment on function service.record_trace(text, text, jsonb, jsonb, jsonb, float8, jsonb, jsonb) is 'Record one retrieval (for the bound principal), the fate of each candidate, its query vectors, and what validity windows left out.';

-- data._readable_fragments: the fragments among p_ids the current principal may read
-- now. The predicate of the row-level policy on data.fragments (sql/policies), restated:
-- a security definer, it reads past row-level security so that a reader whose role
-- holds no privilege on data.fragments (contexts_auditor) is judged by its principal's
-- grants all the same. It only ever answers for the caller's own principal, so it tells
-- nothing a `select fragment_id from data.fragments` under its grants would not.
create or replace function data._readable_fragments(p_org_id text, p_ids bigint[])
returns bigint[]
language sql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
    select coalesce(array_agg(f.fragment_id order by f.fragment_id), '{}')
    from data.fragments f
    where f.org_id = p_org_id
      and f.org_id = (select data.acl_org())
      and f.fragment_id = any (p_ids)
      and (f.repo_id is null or (select data.acl_org_wide())
           or f.repo_id = any ((select data.acl_repos())::text[]))
      and (f.persona_id is null or (select data.acl_org_wide())
           or f.persona_id = any ((select data.acl_personas())::text[]))
      and (f.session_id is null or f.session_id = any ((select data.acl_sessions())::text[]))
$$;
comment on function data._readable_fragments(text, bigint[]) is 'Fragments among the given ids the current principal may read now (the data.fragments policy).';

-- data._redact_candidates: a trace's candidates as the current principal may see them.
-- A readable candidate is shown whole ("redacted": false); any other keeps only the keys
-- below (ranks, scores, fate), whatever else its writer put in it ("redacted": true).
-- Dropping the fragment id is deliberate: an id the reader cannot open would still let it
-- follow one hidden fragment from trace to trace, and confirm that it exists.
create or replace function data._redact_candidates(p_org_id text, p_candidates jsonb)
returns jsonb
language sql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
    with listed as (
        select e.c, e.n,
               case when jsonb_typeof(e.c -> 'fragment_id') = 'number' and e.c ->> 'fragment_id' ~ '^[0-9]{1,18}$'
                    then (e.c ->> 'fragment_id')::bigint end as fragment_id
        from jsonb_array_elements(case when jsonb_typeof(p_candidates) = 'array' then p_candidates else '[]' end)
             with ordinality as e(c, n)
    ), readable as materialized (
        -- Materialized: a plain subquery would be pulled up and the look-up evaluated
        -- once per candidate instead of once per trace (7x the cost of a whole trace).
        select data._readable_fragments(p_org_id, array(select l.fragment_id from listed l
                                                         where l.fragment_id is not null)) as ids
    )
    select coalesce(jsonb_agg(
               case when l.fragment_id = any (r.ids) and jsonb_typeof(l.c) = 'object'
                    then l.c || '{"redacted": false}'
                    else coalesce((select jsonb_object_agg(k.key, k.value) from jsonb_each(
                                       case when jsonb_typeof(l.c) = 'object' then l.c else '{}' end) k
                                   where k.key in ('fused_rank', 'lexical_rank', 'lexical_score', 'dense_rank',
                                                   'dense_similarity', 'lexical_norm', 'dense_norm',
                                                   'lexical_weight', 'dense_weight', 'fused_score', 'rerank_score',
                                                   'freshness', 'terms', 'final_rank', 'final_score', 'relevance',
                                                   'included', 'reason')),
                                  '{}') || '{"redacted": true}'
               end order by l.n), '[]')
    from listed l cross join readable r
$$;
comment on function data._redact_candidates(text, jsonb) is 'A trace''s candidates for the current principal: unreadable ones reduced to ranks, scores and fate.';

-- data._redact_request: a recorded request as a reader with the given read grants may
-- see it. When it names a repo, persona or session the grants do not cover (or another
-- org), the query and those ids become null, only the retrieval knobs stay, and
-- `redacted` lists every field withheld ("query", "request.query", "request.scope.session_id",
-- ...), so a withheld query is never mistaken for an empty one. Pure: it trusts the
-- grants it is given (api.retrieval_traces passes the caller's own, from api.whoami()).
create or replace function data._redact_request(
    p_org_id text, p_query text, p_request jsonb,
    p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[],
    out query text, out request jsonb, out redacted text[])
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
    knobs constant text[] := array['budget_tokens', 'k_lexical', 'k_dense', 'rerank_top',
                                   'freshness_halflife_days', 'min_score', 'top_k', 'min_relevance',
                                   'negatives', 'include_superseded', 'expand_links', 'context_mode',
                                   'generation', 'include_retired', 'request_kind'];
    scope jsonb := case when jsonb_typeof(p_request -> 'scope') = 'object' then p_request -> 'scope' else '{}' end;
    hidden text[] := '{}';
    k text;
begin
    if scope ? 'org_id' and scope ->> 'org_id' is distinct from p_org_id then
        hidden := hidden || 'org_id'::text;
    end if;
    if scope ->> 'repo_id' is not null
       and not (coalesce(p_org_wide, false) or scope ->> 'repo_id' = any (coalesce(p_repos, '{}'))) then
        hidden := hidden || 'repo_id'::text;
    end if;
    if scope ->> 'persona_id' is not null
       and not (coalesce(p_org_wide, false) or scope ->> 'persona_id' = any (coalesce(p_personas, '{}'))) then
        hidden := hidden || 'persona_id'::text;
    end if;
    if scope ->> 'session_id' is not null and not (scope ->> 'session_id' = any (coalesce(p_sessions, '{}'))) then
        hidden := hidden || 'session_id'::text;
    end if;
    if cardinality(hidden) = 0 then
        query := p_query;
        request := p_request;
        redacted := '{}';
        return;
    end if;
    query := null;
    redacted := array['query', 'request.query'];
    scope := jsonb_build_object('org_id', scope -> 'org_id', 'repo_id', scope -> 'repo_id',
                                'persona_id', scope -> 'persona_id', 'session_id', scope -> 'session_id');
    foreach k in array hidden loop
        scope := jsonb_set(scope, array[k], 'null');
        redacted := redacted || ('request.scope.' || k);
    end loop;
    request := jsonb_build_object('query', null, 'scope', scope);
    for k in select j.key from jsonb_each(p_request) j order by j.key loop
        -- Knobs stay; so does a filter left unset (null tells nothing); any other field
        -- (a path prefix, kinds, a time window) is withheld and listed.
        if k = any (knobs) or jsonb_typeof(p_request -> k) = 'null' then
            request := request || jsonb_build_object(k, p_request -> k);
        elsif k not in ('query', 'scope') then
            redacted := redacted || ('request.' || k);
        end if;
    end loop;
end
$$;
comment on function data._redact_request(text, text, jsonb, boolean, text[], text[], text[]) is 'A recorded request as a reader with the given grants may see it: withheld query and scope ids, listed.';

-- data._redact_pipeline: a recorded pipeline as a reader may see it, given what
-- data._redact_request withheld from that reader (`p_redacted`): the ranking profile of a
-- persona the reader holds no grant on (its weights and half-lives, which GET /profiles
-- withholds from that reader too) is null and listed. The org's and the built-in profiles
-- are every member's to read, and stay.
create or replace function data._redact_pipeline(
    p_pipeline jsonb, p_redacted text[], out pipeline jsonb, out redacted text[])
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    select case when hide then p_pipeline || '{"profile": null}' else p_pipeline end,
           coalesce(p_redacted, '{}') || case when hide then array['pipeline.profile'] else '{}'::text[] end
    from (select 'request.scope.persona_id' = any (coalesce(p_redacted, '{}'))
                 and jsonb_typeof(p_pipeline -> 'profile') = 'object'
                 and p_pipeline -> 'profile' ->> 'source' is distinct from 'built-in'
                 and p_pipeline -> 'profile' ->> 'source' is distinct from 'org' as hide) h
$$;
comment on function data._redact_pipeline(jsonb, text[]) is 'A recorded pipeline as a reader may see it: a persona''s ranking profile withheld (and listed) where the request''s persona is.';

-- data._json_number: a JSON number as float8, anything else (null, a string) as null.
-- Trace candidates are JSON written by the service; the usage views (sql/views) read
-- their scores with it so that one odd value cannot fail a whole aggregate.
create or replace function data._json_number(p_value jsonb)
returns float8
language sql immutable
set search_path = pg_catalog, pg_temp
as $$ select case when jsonb_typeof(p_value) = 'number' then (p_value #>> '{}')::float8 end $$;

-- data._stored_query_vector: the newest vector of this exact query text and model among
-- the traces whose query the caller may read (api.query_vectors' rows), and the fusion
-- that trace's retrieval used, for api.retrieve: looked up by the stored text in
-- data.readable_traces (sql/views/10_traces.sql) without the view's fence (the text is
-- this function's condition, never a caller's), then kept only where the redacted query
-- shows. PL/pgSQL: the view it reads is made after the functions.
create or replace function data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims int)
returns table (trace_id uuid, embedding extensions.vector, fusion jsonb)
language plpgsql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
begin
    return query
    select t.trace_id, v.embedding, t.pipeline -> 'fusion'
    from data.readable_traces t
    cross join lateral unnest(t.query_models, t.query_vectors) as v(model, embedding)
    where t.org_id = p_org_id and t.query = p_query and v.model = p_model and vector_dims(v.embedding) = p_dims
      and (data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos, t.personas, t.sessions)).query
          is not null
    order by t.created_at desc, t.trace_id
    limit 1;
end
$$;
comment on function data._stored_query_vector(text, text, text, int) is 'The newest stored vector of a query text and model among the traces whose query the caller may read, with that retrieval''s fusion.';

-- data._trace: one trace the caller may read as a JSON document, as api.retrieval_traces
-- shows it (null for any other id), looked up by id in data.readable_traces without the
-- view's fence: the id is this function's condition, never a caller's, so the lookup is
-- one index probe however many traces the org holds. The columns are the view's.
create or replace function data._trace(p_trace_id uuid)
returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    result jsonb;
begin
    select to_jsonb(v) into result
    from (select t.trace_id, t.org_id, t.principal_id, r.query, r.request, p.pipeline,
                 data._redact_candidates(t.org_id, t.candidates) as candidates, t.duration_ms, t.created_at,
                 p.redacted, data._redact_candidates(t.org_id, coalesce(t.left_out, '[]')) as left_out
          from data.readable_traces t
          cross join lateral data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos,
                                                  t.personas, t.sessions) r
          cross join lateral data._redact_pipeline(t.pipeline, r.redacted) p
          where t.trace_id = p_trace_id) v;
    return result;
end
$$;
comment on function data._trace(uuid) is 'A trace the caller may read, as api.retrieval_traces shows it (null for any other id).';

-- api.get_trace: one trace as a JSON document, as api.retrieval_traces shows it to the
-- caller (the principal's own, or any of its org's with an audit grant, each field
-- redacted for the caller); any other id is unknown.
create or replace function api.get_trace(p_trace_id uuid)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    result jsonb := data._trace(p_trace_id);
begin
    if result is null then
        raise exception 'unknown trace: %', p_trace_id using errcode = 'P0002';
    end if;
    return result;
end
$$;
comment on function api.get_trace(uuid) is 'A retrieval trace as the caller may see it: request, pipeline versions, every candidate''s ranks and scores; what its grants do not cover is redacted and listed.';
