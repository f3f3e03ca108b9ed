-- 0040_usage_pending: the usage roll-ups (migration 0029, sql/functions/51_usage.sql)
-- are no longer kept on each trace's write. A trace insert only lists the trace in
-- data.usage_pending; data._usage_fold counts the listed traces into the roll-ups in
-- batches (one statement for many traces), claiming them skip-locked, so two writers
-- folding at once never count one trace twice. The usage views (sql/views/20_usage.sql)
-- add what the listed traces hold on the fly, so they stay exact at any moment
-- (docs/adr/0028).
--
-- At this migration every trace is counted already (the trigger it replaces counted
-- each as it was written): the list starts empty.

drop trigger if exists retrieval_traces_usage_insert on data.retrieval_traces;  -- re-created by 51_usage.sql
drop function if exists data._usage_added();

create table data.usage_pending (
    pending_id bigint generated always as identity primary key,
    trace_id   uuid not null,
    org_id     text not null
);
comment on table data.usage_pending is 'Retrieval traces written but not yet counted into the usage roll-ups (data._usage_fold folds them in batches; the usage views add them on the fly).';
alter table data.usage_pending enable row level security;
alter table data.usage_pending force row level security;
-- Statistics from the start: the usage views join it to data.retrieval_traces by key, and
-- a table never analysed is planned as ten pages of rows.
analyze data.usage_pending;
