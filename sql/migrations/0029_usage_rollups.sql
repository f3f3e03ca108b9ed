-- 0029_usage_rollups: usage roll-ups, so the usage views (sql/views/20_usage.sql) read
-- a few rows per fragment and per day instead of redacting every trace ever written.
--
--   * data.usage_fragments: per org, principal and fragment, how often its traces
--     ranked and returned the fragment, its best fused rank, when last, and where the
--     newest cited it from.
--   * data.usage_below_floor: the traces with nothing above the relevance floor, narrow.
--   * data.usage_days: per UTC day, org, principal, requested scope (the raw ids, and
--     whether the request named another org) and latency bucket (1.02 ratio), the
--     retrievals, the empty ones, those with nothing above the relevance floor, and
--     the summed latency.
--
-- Both are kept from data.retrieval_traces by statement triggers (sql/functions/
-- 51_usage.sql): an insert adds to them, a delete or update corrects them. They hold
-- what every reader could see of a trace before redaction, keyed by what redaction
-- depends on (the principal, the fragment, the scope ids), so the views apply the
-- reader's grants to a roll-up row exactly as api.retrieval_traces applies them to a
-- trace. Like the traces, no caller role may read them: forced row-level security
-- (sql/policies) and no privilege (sql/grants); read through the views.
--
-- Existing traces are rolled up when sql/functions/51_usage.sql is applied, right after
-- this migration in the same transaction (data._usage_rebuild: one pass over them).

create table data.usage_fragments (
    org_id            text not null references data.orgs on delete cascade,
    principal_id      text,
    fragment_id       bigint not null,
    retrievals        bigint not null,
    candidacies       bigint not null,
    best_fused_rank   float8,
    last_retrieved_at timestamptz,
    last_candidate_at timestamptz not null,
    newest_trace_id   uuid not null,
    source            text,
    doc_id            bigint,
    constraint usage_fragments_key unique nulls not distinct (org_id, fragment_id, principal_id)
);
comment on table data.usage_fragments is 'Per org, principal and fragment: how often that principal''s retrievals ranked (candidacies) and returned (retrievals) the fragment; kept from data.retrieval_traces by triggers, read through api.fragment_retrievals.';
comment on column data.usage_fragments.newest_trace_id is 'The newest trace that ranked the fragment (latest created_at, then smallest trace id); source and doc_id are its.';

create table data.usage_days (
    org_id         text not null references data.orgs on delete cascade,
    day            date not null,
    principal_id   text,
    repo_id        text,
    persona_id     text,
    session_id     text,
    foreign_org    boolean not null,
    latency_bucket int,
    retrievals     bigint not null,
    empty          bigint not null,
    below_floor    bigint not null,
    duration_sum   float8 not null,
    constraint usage_days_key unique nulls not distinct
        (org_id, day, principal_id, repo_id, persona_id, session_id, foreign_org, latency_bucket)
);
comment on table data.usage_days is 'Retrievals per UTC day, org, principal, requested scope and latency bucket; kept from data.retrieval_traces by triggers, read through api.retrievals_per_day.';
comment on column data.usage_days.foreign_org is 'The request''s scope named an org other than the trace''s (every reader sees it withheld).';
comment on column data.usage_days.latency_bucket is 'floor(ln(duration_ms) / ln(1.02)) (durations under 1 us count as 1 us); null: no duration recorded.';
comment on column data.usage_days.below_floor is 'Retrievals in which no candidate reached the relevance floor, or that found nothing.';

alter table data.usage_fragments enable row level security;
alter table data.usage_fragments force row level security;
alter table data.usage_days enable row level security;
alter table data.usage_days force row level security;

create table data.usage_below_floor (
    trace_id        uuid primary key references data.retrieval_traces on delete cascade,
    org_id          text not null references data.orgs on delete cascade,
    principal_id    text,
    created_at      timestamptz not null,
    query           text not null,
    repo_id         text,
    persona_id      text,
    session_id      text,
    foreign_org     boolean not null,
    relevance_floor float8 not null,
    best_relevance  float8,
    best_score      float8,
    candidates      int not null
);
create index usage_below_floor_org_created on data.usage_below_floor (org_id, created_at desc);
comment on table data.usage_below_floor is 'The traces in which no candidate reached the relevance floor (or that found nothing), without their candidates; kept from data.retrieval_traces by triggers, read through api.retrievals_below_floor.';

alter table data.usage_below_floor enable row level security;
alter table data.usage_below_floor force row level security;

-- Every stored time is one every reader can decode (migration 0026).
alter table data.usage_fragments
    add constraint usage_fragments_last_retrieved_at_readable
        check (data._readable_time(last_retrieved_at, 'usage_fragments.last_retrieved_at')),
    add constraint usage_fragments_last_candidate_at_readable
        check (data._readable_time(last_candidate_at, 'usage_fragments.last_candidate_at'));
alter table data.usage_days
    add constraint usage_days_day_readable check (data._readable_time(day, 'usage_days.day'));
alter table data.usage_below_floor
    add constraint usage_below_floor_created_at_readable
        check (data._readable_time(created_at, 'usage_below_floor.created_at'));
