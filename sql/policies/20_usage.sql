-- The usage roll-ups (migration 0029, sql/functions/51_usage.sql) are read through the
-- usage views (sql/views/20_usage.sql), which apply each reader's grants as
-- api.retrieval_traces does; no caller role may select them: deny everyone.
drop policy if exists no_direct_access on data.usage_fragments;
create policy no_direct_access on data.usage_fragments using (false);
drop policy if exists no_direct_access on data.usage_days;
create policy no_direct_access on data.usage_days using (false);
drop policy if exists no_direct_access on data.usage_below_floor;
create policy no_direct_access on data.usage_below_floor using (false);
drop policy if exists no_direct_access on data.usage_pending;
create policy no_direct_access on data.usage_pending using (false);
