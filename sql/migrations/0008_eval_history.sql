-- 0008_eval_history: eval runs stored in the database, so analysts can chart golden-set
-- figures over time and read replay diffs (`contexts eval run | gate | replay` write them).
--
-- Runs and their figures describe the pipeline, not a tenant: they are measured on
-- labelled sets the operator supplies (ingested into eval orgs of their own, which
-- change with the pipeline and so cannot hold a history), and hold no query, document
-- or fragment: every analyst and auditor may read them (api.eval_runs, api.eval_figures).
-- Replay diffs carry tenants' queries and fragments: they are per org, under forced
-- row-level security, and read only through the redacting view api.eval_replay_diffs.

create table data.eval_runs (
    run_id           bigint generated always as identity primary key,
    command          text not null check (command in ('run', 'gate', 'replay')),
    pipeline         jsonb not null check (jsonb_typeof(pipeline) = 'object'),
    pipeline_version text not null generated always as (left(md5(pipeline::text), 12)) stored,
    options          jsonb not null default '{}' check (jsonb_typeof(options) = 'object'),
    outcome          text check (outcome in ('passed', 'failed', 'baseline')),
    contexts_version text not null,
    started_at       timestamptz not null,
    finished_at      timestamptz not null default clock_timestamp()
);
create index eval_runs_finished on data.eval_runs (finished_at);
comment on table data.eval_runs is 'One row per `contexts eval run|gate|replay`: the pipeline measured, the options, when. Global: no tenant data (see 0008).';
comment on column data.eval_runs.pipeline is 'Versions and knobs the figures depend on (chunker, models, dtype, fragment size, BM25 analysis, fusion, reranker).';
comment on column data.eval_runs.pipeline_version is 'Short digest of pipeline: runs with the same value measured the same pipeline.';
comment on column data.eval_runs.started_at is 'When the command started, by the clock of the machine that ran it.';
comment on column data.eval_runs.finished_at is 'When the run was recorded, by the database''s clock.';
comment on column data.eval_runs.outcome is 'gate: passed, failed, or baseline (the figures were written as the new baseline); null otherwise.';

create table data.eval_figures (
    run_id   bigint not null references data.eval_runs on delete cascade,
    dataset  text not null,
    split    text not null,
    stage    text not null,
    scope    text,
    metric   text not null,
    value    float8,
    queries  int check (queries >= 0),
    baseline float8,
    status   text check (status in ('ok', 'improved', 'regressed', 'waived', 'missing')),
    waiver   text,
    constraint eval_figures_key unique nulls not distinct (run_id, dataset, split, stage, scope, metric),
    check (value is not null or coalesce(status = 'missing', false))
);
comment on table data.eval_figures is 'Golden-set figures of an eval run: one per set, stage, query scope and metric; gate runs add the baseline and the check''s status. Global: no tenant data (see 0008).';
comment on column data.eval_figures.scope is 'A query scope label of the labelled set (per-scope breakdown); null: every query of the set.';
comment on column data.eval_figures.value is 'The figure measured; null only for a gated figure the run did not measure (status missing).';

create table data.eval_replays (
    run_id       bigint not null references data.eval_runs on delete cascade,
    ordinal      int not null check (ordinal >= 1),
    org_id       text not null references data.orgs on delete cascade,
    principal_id text not null,
    trace_id     uuid,
    origin       text not null,
    query        text not null,
    request      jsonb not null check (jsonb_typeof(request) = 'object'),
    overlap      float8 check (overlap between 0 and 1),
    flagged      boolean not null,
    same_order   boolean,
    current      jsonb not null default '[]' check (jsonb_typeof(current) = 'array'),
    candidate    jsonb not null default '[]' check (jsonb_typeof(candidate) = 'array'),
    error        text,
    primary key (run_id, ordinal)
);
create index eval_replays_org on data.eval_replays (org_id, run_id);
comment on table data.eval_replays is 'One replayed query of an eval replay run: the top results under the current and the candidate pipeline, their token overlap, flagged or not. Read through api.eval_replay_diffs.';
comment on column data.eval_replays.principal_id is 'Who the query was replayed for (the principal that asked, for a recorded trace).';
comment on column data.eval_replays.trace_id is 'The recorded retrieval replayed; null for a query read from a file.';
alter table data.eval_replays enable row level security;
alter table data.eval_replays force row level security;
