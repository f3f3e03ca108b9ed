-- Eval history: `contexts eval run | gate | replay` store each run here (app/eval/history.py),
-- read through api.eval_runs, api.eval_figures and api.eval_replay_diffs (sql/views).
-- Written by the operator's connection (the migrator, which runs the eval commands):
-- no caller role is granted service.record_eval_run.

-- service.record_eval_run: one run, its figures and its replayed queries, in one call.
--   p_figures: [{"dataset", "split", "stage", "scope"?, "metric", "value", "queries"?,
--               "baseline"?, "status"?, "waiver"?}]
--   p_replays: [{"org_id", "principal_id", "origin", "trace_id"?, "query", "request",
--               "overlap"?, "flagged", "same_order"?, "current", "candidate", "error"?}]
-- Returns the run's id. Bad input raises 22023 (naming the entry), an unknown org P0002.
create or replace function service.record_eval_run(
    p_command text,
    p_pipeline jsonb,
    p_options jsonb,
    p_started_at timestamptz,
    p_contexts_version text,
    p_figures jsonb default '[]',
    p_replays jsonb default '[]',
    p_outcome text default null)
returns bigint
language plpgsql
set search_path = pg_catalog, extensions, pg_temp
as $$
declare
    id bigint;
    e record;
begin
    if p_command is null or p_command not in ('run', 'gate', 'replay') then
        raise exception 'eval command must be run, gate or replay, not %', coalesce(p_command, 'null')
            using errcode = '22023';
    end if;
    if jsonb_typeof(p_pipeline) is distinct from 'object' or jsonb_typeof(p_options) is distinct from 'object' then
        raise exception 'an eval run records its pipeline and options as JSON objects' using errcode = '22023';
    end if;
    if p_started_at is null then
        raise exception 'an eval run records when it started' using errcode = '22023';
    end if;
    if jsonb_typeof(p_figures) is distinct from 'array' or jsonb_typeof(p_replays) is distinct from 'array' then
        raise exception 'figures and replays are JSON arrays' using errcode = '22023';
    end if;
    if p_outcome is not null and (p_command <> 'gate' or p_outcome not in ('passed', 'failed', 'baseline')) then
        raise exception 'only a gate run has an outcome (passed, failed or baseline), not %', p_outcome
            using errcode = '22023';
    end if;
    insert into data.eval_runs (command, pipeline, options, outcome, contexts_version, started_at)
    values (p_command, p_pipeline, p_options, p_outcome, coalesce(p_contexts_version, ''), p_started_at)
    returning run_id into id;

    for e in select f.value as v, f.n from jsonb_array_elements(p_figures) with ordinality as f(value, n) loop
        if jsonb_typeof(e.v) is distinct from 'object'
           or jsonb_typeof(e.v -> 'dataset') is distinct from 'string'
           or jsonb_typeof(e.v -> 'split') is distinct from 'string'
           or jsonb_typeof(e.v -> 'stage') is distinct from 'string'
           or jsonb_typeof(e.v -> 'metric') is distinct from 'string'
           or coalesce(jsonb_typeof(e.v -> 'value'), 'null') not in ('number', 'null')
           or (e.v ? 'scope' and jsonb_typeof(e.v -> 'scope') not in ('string', 'null'))
           or (e.v ? 'queries' and jsonb_typeof(e.v -> 'queries') not in ('number', 'null'))
           or (e.v ? 'baseline' and jsonb_typeof(e.v -> 'baseline') not in ('number', 'null')) then
            raise exception 'figure %: needs dataset, split, stage and metric (strings) and value (a number)', e.n
                using errcode = '22023';
        end if;
        begin
            insert into data.eval_figures (run_id, dataset, split, stage, scope, metric, value, queries,
                                           baseline, status, waiver)
            values (id, e.v ->> 'dataset', e.v ->> 'split', e.v ->> 'stage', e.v ->> 'scope', e.v ->> 'metric',
                    (e.v ->> 'value')::float8, (e.v ->> 'queries')::numeric::int, (e.v ->> 'baseline')::float8,
                    e.v ->> 'status', e.v ->> 'waiver');
        exception when check_violation or unique_violation or numeric_value_out_of_range then
            raise exception 'figure %: %', e.n, sqlerrm using errcode = '22023';
        end;
    end loop;

    for e in select r.value as v, r.n from jsonb_array_elements(p_replays) with ordinality as r(value, n) loop
        if jsonb_typeof(e.v) is distinct from 'object'
           or jsonb_typeof(e.v -> 'org_id') is distinct from 'string'
           or jsonb_typeof(e.v -> 'principal_id') is distinct from 'string'
           or jsonb_typeof(e.v -> 'origin') is distinct from 'string'
           or jsonb_typeof(e.v -> 'query') is distinct from 'string'
           or jsonb_typeof(e.v -> 'request') is distinct from 'object'
           or jsonb_typeof(e.v -> 'flagged') is distinct from 'boolean'
           or jsonb_typeof(coalesce(e.v -> 'current', '[]')) <> 'array'
           or jsonb_typeof(coalesce(e.v -> 'candidate', '[]')) <> 'array'
           or jsonb_path_exists(coalesce(e.v -> 'current', '[]') || coalesce(e.v -> 'candidate', '[]'),
                                '$[*] ? (@.type() != "object")')
           or (e.v ? 'trace_id' and jsonb_typeof(e.v -> 'trace_id') not in ('string', 'null'))
           or (e.v ? 'overlap' and jsonb_typeof(e.v -> 'overlap') not in ('number', 'null'))
           or (e.v ? 'same_order' and jsonb_typeof(e.v -> 'same_order') not in ('boolean', 'null'))
           or (e.v ? 'error' and jsonb_typeof(e.v -> 'error') not in ('string', 'null')) then
            raise exception 'replay %: needs org_id, principal_id, origin, query (strings), request (an object), '
                            'flagged (a boolean), and current and candidate lists of objects', e.n
                using errcode = '22023';
        end if;
        perform data._require_org(e.v ->> 'org_id');
        begin
            insert into data.eval_replays (run_id, ordinal, org_id, principal_id, trace_id, origin, query, request,
                                           overlap, flagged, same_order, current, candidate, error)
            values (id, e.n, e.v ->> 'org_id', e.v ->> 'principal_id', (e.v ->> 'trace_id')::uuid,
                    e.v ->> 'origin', e.v ->> 'query', e.v -> 'request', (e.v ->> 'overlap')::float8,
                    (e.v ->> 'flagged')::boolean, (e.v ->> 'same_order')::boolean,
                    coalesce(e.v -> 'current', '[]'), coalesce(e.v -> 'candidate', '[]'), e.v ->> 'error');
        exception when check_violation or invalid_text_representation then
            raise exception 'replay %: %', e.n, sqlerrm using errcode = '22023';
        end;
    end loop;
    return id;
end
$$;
comment on function service.record_eval_run(text, jsonb, jsonb, timestamptz, text, jsonb, jsonb, text)
    is 'Store one eval run (run, gate or replay) with its golden-set figures and replayed queries; returns its run_id. The operator''s, called by the eval commands.';
