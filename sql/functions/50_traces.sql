-- Retrieval traces: every retrieval explains each candidate's scores.

-- api.record_trace: store one retrieval's request, pipeline versions and candidates,
-- stamped with the bound principal (never one the caller names).
create or replace function api.record_trace(
    p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb,
    p_candidates jsonb, p_duration_ms float8 default null)
returns uuid
language plpgsql security definer
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    me record;
    id uuid;
begin
    select * into me from data.current_principal();
    if me.org_id is distinct from p_org_id then
        raise exception 'traces are recorded for the bound principal''s own org' using errcode = '42501';
    end if;
    insert into data.retrieval_traces (org_id, principal_id, query, request, pipeline, candidates, duration_ms)
    values (p_org_id, me.principal_id, p_query, p_request, p_pipeline, p_candidates, p_duration_ms)
    returning trace_id into id;
    return id;
end
$$;
comment on function api.record_trace(text, text, jsonb, jsonb, jsonb, float8) is 'Record one retrieval (for the bound principal) and the fate of each candidate.';

-- api.get_trace: one trace as a JSON document: visible to the principal that made it
-- and to auditors of its org (row-level security); any other id is unknown.
create or replace function api.get_trace(p_trace_id uuid)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    result jsonb;
begin
    select jsonb_build_object(
               'trace_id', t.trace_id, 'org_id', t.org_id, 'principal_id', t.principal_id,
               'query', t.query, 'request', t.request, 'pipeline', t.pipeline,
               'candidates', t.candidates, 'duration_ms', t.duration_ms, 'created_at', t.created_at)
    into result
    from data.retrieval_traces t where t.trace_id = p_trace_id;
    if result is null then
        raise exception 'unknown trace: %', p_trace_id using errcode = 'P0002';
    end if;
    return result;
end
$$;
comment on function api.get_trace(uuid) is 'A retrieval trace: request, pipeline versions, every candidate''s ranks and scores.';
