-- 0035_usage_day_histograms: data.usage_days keeps one row per UTC day, org, principal
-- and requested scope, with its latency histogram in two arrays, instead of one row per
-- latency bucket (docs/adr/0028). The per-day view then reads a row per group, not
-- about twenty: at 100,000 traces 3,724 rows instead of 66,600, and p95 is stored with
-- the row (sql/functions/51_usage.sql keeps it), computed at read only for the groups
-- that redaction merges.
--
-- The rows are counted again from the traces when sql/functions/51_usage.sql is applied
-- right after this migration, in the same transaction (the table is empty, traces
-- exist: data._usage_rebuild).

drop view if exists api.retrievals_per_day;  -- re-created from sql/views/20_usage.sql
drop table data.usage_days;

create table data.usage_days (
    org_id          text not null references data.orgs on delete cascade,
    day             date not null,
    principal_id    text,
    repo_id         text,
    persona_id      text,
    session_id      text,
    foreign_org     boolean not null,
    retrievals      bigint not null,
    empty           bigint not null,
    below_floor     bigint not null,
    duration_sum    float8 not null,
    timed           bigint not null,
    latency_buckets int[] not null,
    latency_counts  bigint[] not null,
    p95_ms          float8,
    constraint usage_days_key unique nulls not distinct
        (org_id, day, principal_id, repo_id, persona_id, session_id, foreign_org)
);
comment on table data.usage_days is 'Retrievals per UTC day, org, principal and requested scope, with their latency histogram; kept from data.retrieval_traces by triggers, read through api.retrievals_per_day.';
comment on column data.usage_days.foreign_org is 'The request''s scope named an org other than the trace''s (every reader sees it withheld).';
comment on column data.usage_days.below_floor is 'Retrievals in which no candidate reached the relevance floor, or that found nothing.';
comment on column data.usage_days.timed is 'Retrievals with a duration recorded (the sum of latency_counts).';
comment on column data.usage_days.latency_buckets is 'The latency buckets that hold retrievals, ascending: floor(ln(duration_ms) / ln(1.02)) (durations under 1 us count as 1 us).';
comment on column data.usage_days.latency_counts is 'Retrievals in each bucket of latency_buckets (same positions).';
comment on column data.usage_days.p95_ms is 'The 95th percentile of the latency read from the buckets (data._usage_p95), kept by a trigger.';
alter table data.usage_days enable row level security;
alter table data.usage_days force row level security;

-- Every stored time is one every reader can decode (migration 0026).
alter table data.usage_days
    add constraint usage_days_day_readable check (data._readable_time(day, 'usage_days.day'));
