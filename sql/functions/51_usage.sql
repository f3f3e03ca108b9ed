-- Usage roll-ups (migrations 0029, 0035, 0040): data.usage_fragments, data.usage_days (a
-- row per day, principal and requested scope, with its latency histogram) and
-- data.usage_below_floor, kept from data.retrieval_traces by the statement triggers
-- below: a written trace is listed in data.usage_pending and counted in batches
-- (data._usage_fold), deletes and updates are corrected at once. Read through the usage
-- views (sql/views/20_usage.sql), which add the pending traces on the fly. They hold
-- what a trace shows every reader before redaction, keyed by what redaction depends on
-- (principal, fragment, requested scope ids), so a view applies the reader's grants to
-- a roll-up row exactly as api.retrieval_traces applies them to a trace (docs/adr/0028).
-- Per candidate, data._json_number's expression is written out rather than called: a
-- call of it is not inlined (it sets search_path) and cost about 3 us, four a candidate.

-- data._usage_summary: what the roll-ups keep of one trace, from its request, its latency
-- and what its candidates add up to (how many, how many included, the best relevance and
-- final score): the logic of data._usage_trace, which the insert trigger calls with the
-- aggregates of candidates it has already expanded.
create or replace function data._usage_summary(
    p_org_id text, p_request jsonb, p_duration_ms float8,
    p_candidates int, p_included bigint, p_best_relevance float8, p_best_score float8,
    out repo_id text, out persona_id text, out session_id text, out foreign_org boolean,
    out latency_bucket int, out empty boolean, out below_floor boolean, out relevance_floor float8,
    out best_relevance float8, out best_score float8, out candidates int)
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    with s as (
        select case when jsonb_typeof(p_request -> 'scope') = 'object' then p_request -> 'scope' else '{}' end as scope,
               coalesce(data._json_number(p_request -> 'min_relevance'), 0.0) as min_relevance
    )
    select s.scope ->> 'repo_id', s.scope ->> 'persona_id', s.scope ->> 'session_id',
           s.scope ? 'org_id' and s.scope ->> 'org_id' is distinct from p_org_id,
           case when p_duration_ms is not null then floor(ln(greatest(p_duration_ms, 0.001)) / ln(1.02))::int end,
           p_included = 0,
           case when p_candidates = 0 then true
                when p_best_relevance is null then null
                else p_best_relevance < case when s.min_relevance > 0 then s.min_relevance else 0.3 end
           end,
           case when s.min_relevance > 0 then s.min_relevance else 0.3 end,
           p_best_relevance, p_best_score, p_candidates
    from s
$$;
comment on function data._usage_summary(text, jsonb, float8, int, bigint, float8, float8) is 'What the usage roll-ups keep of one trace, from its request, latency and candidate aggregates (data._usage_trace''s logic).';

-- data._usage_trace: what the roll-ups keep of one trace: its requested scope as
-- api.retrieval_summaries reads it (ids from an object scope; whether it named another
-- org, which every reader sees withheld), its latency bucket, whether it returned
-- nothing, and whether nothing reached the relevance floor (as
-- api.retrieval_summaries.nothing_above_floor; null: no relevance recorded).
create or replace function data._usage_trace(
    p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms float8,
    out repo_id text, out persona_id text, out session_id text, out foreign_org boolean,
    out latency_bucket int, out empty boolean, out below_floor boolean, out relevance_floor float8,
    out best_relevance float8, out best_score float8, out candidates int)
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    select d.*
    from (select count(*)::int as candidates,
                 count(*) filter (where e ->> 'included' = 'true') as included,
                 max(case when jsonb_typeof(e -> 'relevance') = 'number' then (e ->> 'relevance')::float8 end)
                     as best_relevance,
                 max(case when jsonb_typeof(e -> 'final_score') = 'number' then (e ->> 'final_score')::float8 end)
                     as best_score
          from jsonb_array_elements(case when jsonb_typeof(p_candidates) = 'array' then p_candidates else '[]' end) e
         ) c
    cross join lateral data._usage_summary(p_org_id, p_request, p_duration_ms, c.candidates, c.included,
                                           c.best_relevance, c.best_score) d
$$;
comment on function data._usage_trace(text, jsonb, jsonb, float8) is 'What the usage roll-ups keep of one trace (scope ids, latency bucket, empty, below the relevance floor).';

-- data._usage_latency: the latency a bucket of data.usage_days stands for (its geometric
-- middle: within 1% of every duration in it).
create or replace function data._usage_latency(p_bucket int)
returns float8
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$ select exp((p_bucket + 0.5) * ln(1.02::float8)) $$;

-- data._usage_histogram_add: two latency histograms of data.usage_days (buckets
-- ascending, a count each) added bucket by bucket (a negative count takes away); buckets
-- left at zero are dropped.
create or replace function data._usage_histogram_add(
    p_buckets int[], p_counts bigint[], p_more_buckets int[], p_more_counts bigint[],
    out buckets int[], out counts bigint[])
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
    select coalesce(array_agg(h.b order by h.b), '{}'), coalesce(array_agg(h.c order by h.b), '{}')
    from (select x.b, sum(x.c)::bigint as c
          from (select * from unnest(p_buckets, p_counts)
                union all
                select * from unnest(p_more_buckets, p_more_counts)) x(b, c)
          group by x.b) h
    where h.c <> 0
$$;

-- data._usage_p95: the 95th percentile of the latency a histogram holds, as
-- percentile_cont(0.95) places it (0-based position 0.95 * (n - 1) among the n timed
-- retrievals): the latencies of the buckets holding that position and the next one,
-- interpolated. A bucket may appear more than once (histograms concatenated): its counts
-- add up. A loop, not a query: the per-day view calls it once per group that redaction
-- merges (a query with a window took twice as long a call).
create or replace function data._usage_p95(p_buckets int[], p_counts bigint[])
returns float8
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
    lo int;
    hi int;
    dense bigint[];
    total bigint := 0;
    position numeric;
    below bigint := 0;
    low_bucket int;
begin
    for i in 1 .. coalesce(cardinality(p_buckets), 0) loop
        if p_counts[i] > 0 then
            lo := least(lo, p_buckets[i]);
            hi := greatest(hi, p_buckets[i]);
            total := total + p_counts[i];
        end if;
    end loop;
    if total = 0 then
        return null;
    end if;
    dense := array_fill(0::bigint, array[hi - lo + 1]);
    for i in 1 .. cardinality(p_buckets) loop
        if p_counts[i] > 0 then
            dense[p_buckets[i] - lo + 1] := dense[p_buckets[i] - lo + 1] + p_counts[i];
        end if;
    end loop;
    position := floor(0.95 * (total - 1));
    for i in 1 .. hi - lo + 1 loop
        below := below + dense[i];
        if low_bucket is null and below > position then
            low_bucket := lo + i - 1;
        end if;
        if below > position + 1 then
            return data._usage_latency(low_bucket) + (0.95 * (total - 1) - position)::float8
                   * (data._usage_latency(lo + i - 1) - data._usage_latency(low_bucket));
        end if;
    end loop;
    return data._usage_latency(low_bucket);
end
$$;

-- data._usage_concat: arrays concatenated over the rows of a group (in the order the
-- rows are fed, the same for two such aggregates of one query): the histograms of the
-- data.usage_days rows that redaction merges, for data._usage_p95.
create or replace aggregate data._usage_concat(anycompatiblearray) (sfunc = array_cat, stype = anycompatiblearray);

-- p95_ms of a data.usage_days row, kept as its histogram changes.
create or replace function data._usage_days_p95()
returns trigger
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
    new.p95_ms := data._usage_p95(new.latency_buckets, new.latency_counts);
    return new;
end
$$;
create or replace trigger usage_days_p95
    before insert or update on data.usage_days
    for each row execute function data._usage_days_p95();

-- data._usage_candidates: the candidates of one trace the usage roll-ups count: those
-- api.retrieval_traces may show whole (an object with a fragment id of the shape
-- data._redact_candidates accepts); whether each may be shown is the reader's, at read.
create or replace function data._usage_candidates(p_candidates jsonb)
returns table (fragment_id bigint, included boolean, fused_rank float8, source text, doc_id bigint)
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    select (e ->> 'fragment_id')::bigint, e ->> 'included' = 'true',
           case when jsonb_typeof(e -> 'fused_rank') = 'number' then (e ->> 'fused_rank')::float8 end,
           e ->> 'source',
           case when jsonb_typeof(e -> 'doc_id') = 'number'
                then case when abs((e ->> 'doc_id')::float8) < 9e18 then (e ->> 'doc_id')::float8::bigint end end
    from jsonb_array_elements(case when jsonb_typeof(p_candidates) = 'array' then p_candidates else '[]' end) e
    where jsonb_typeof(e) = 'object' and jsonb_typeof(e -> 'fragment_id') = 'number'
      and e ->> 'fragment_id' ~ '^[0-9]{1,18}$'
$$;

-- data._usage_statements: the statements that add the traces of relation p_source
-- (a trigger's transition table, or data.retrieval_traces itself) to the roll-ups
-- (p_sign 1), or take them out (-1). Taking out leaves data.usage_fragments alone: its
-- minimums and maximums cannot be undone, so the principals concerned are counted
-- again (data._usage_recount); data.usage_below_floor follows the trace's key.
create or replace function data._usage_statements(p_source text, p_sign int)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    select case when p_sign = 1 then array[
        format($q$
            insert into data.usage_days as u (org_id, day, principal_id, repo_id, persona_id, session_id, foreign_org,
                                              retrievals, empty, below_floor, duration_sum, timed, latency_buckets,
                                              latency_counts)
            select g.org_id, g.day, g.principal_id, g.repo_id, g.persona_id, g.session_id, g.foreign_org,
                   sum(g.retrievals), sum(g.empty), sum(g.below_floor), sum(g.duration_sum),
                   coalesce(sum(g.retrievals) filter (where g.latency_bucket is not null), 0),
                   coalesce(array_agg(g.latency_bucket order by g.latency_bucket)
                                filter (where g.latency_bucket is not null), '{}'),
                   coalesce(array_agg(g.retrievals order by g.latency_bucket)
                                filter (where g.latency_bucket is not null), '{}')
            from (select t.org_id, (t.created_at at time zone 'UTC')::date as day, t.principal_id, d.repo_id,
                         d.persona_id, d.session_id, d.foreign_org, d.latency_bucket, count(*) as retrievals,
                         count(*) filter (where d.empty) as empty, count(*) filter (where d.below_floor) as below_floor,
                         coalesce(sum(t.duration_ms), 0) as duration_sum
                  from %1$s t cross join lateral data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d
                  group by 1, 2, 3, 4, 5, 6, 7, 8) g
            group by 1, 2, 3, 4, 5, 6, 7
            order by 1, 2, 3, 4, 5, 6, 7
            on conflict on constraint usage_days_key do update
            set retrievals = u.retrievals + excluded.retrievals, empty = u.empty + excluded.empty,
                below_floor = u.below_floor + excluded.below_floor,
                duration_sum = u.duration_sum + excluded.duration_sum, timed = u.timed + excluded.timed,
                (latency_buckets, latency_counts) = (
                    select h.buckets, h.counts
                    from data._usage_histogram_add(u.latency_buckets, u.latency_counts, excluded.latency_buckets,
                                                   excluded.latency_counts) h)
        $q$, p_source),
        format($q$
            insert into data.usage_below_floor (trace_id, org_id, principal_id, created_at, query, repo_id, persona_id,
                                                session_id, foreign_org, relevance_floor, best_relevance, best_score,
                                                candidates)
            select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, d.repo_id, d.persona_id, d.session_id,
                   d.foreign_org, d.relevance_floor, d.best_relevance, d.best_score, d.candidates
            from %1$s t cross join lateral data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d
            where d.below_floor
            on conflict do nothing  -- any key: (trace_id), or (org_id, trace_id) on Citus
        $q$, p_source),
        format($q$
            insert into data.usage_fragments as u (org_id, principal_id, fragment_id, retrievals, candidacies,
                                                   best_fused_rank, last_retrieved_at, last_candidate_at,
                                                   newest_trace_id, source, doc_id)
            select t.org_id, t.principal_id, c.fragment_id, count(*) filter (where c.included), count(*),
                   min(c.fused_rank), max(t.created_at) filter (where c.included), max(t.created_at),
                   (array_agg(t.trace_id order by t.created_at desc, t.trace_id))[1],
                   (array_agg(c.source order by t.created_at desc, t.trace_id))[1],
                   (array_agg(c.doc_id order by t.created_at desc, t.trace_id))[1]
            from %1$s t cross join lateral data._usage_candidates(t.candidates) c
            group by t.org_id, t.principal_id, c.fragment_id
            order by t.org_id, c.fragment_id, t.principal_id
            on conflict on constraint usage_fragments_key do update
            set retrievals = u.retrievals + excluded.retrievals, candidacies = u.candidacies + excluded.candidacies,
                best_fused_rank = least(u.best_fused_rank, excluded.best_fused_rank),
                last_retrieved_at = greatest(u.last_retrieved_at, excluded.last_retrieved_at),
                last_candidate_at = greatest(u.last_candidate_at, excluded.last_candidate_at),
                newest_trace_id = case when (excluded.last_candidate_at, u.newest_trace_id)
                                            > (u.last_candidate_at, excluded.newest_trace_id)
                                       then excluded.newest_trace_id else u.newest_trace_id end,
                source = case when (excluded.last_candidate_at, u.newest_trace_id)
                                   > (u.last_candidate_at, excluded.newest_trace_id)
                              then excluded.source else u.source end,
                doc_id = case when (excluded.last_candidate_at, u.newest_trace_id)
                                   > (u.last_candidate_at, excluded.newest_trace_id)
                              then excluded.doc_id else u.doc_id end
        $q$, p_source)]
    else array[
        -- An update, not an upsert: under a cascade from data.orgs the org is gone.
        format($q$
            update data.usage_days u
            set retrievals = u.retrievals - a.retrievals, empty = u.empty - a.empty,
                below_floor = u.below_floor - a.below_floor, duration_sum = u.duration_sum - a.duration_sum,
                timed = u.timed - a.timed,
                (latency_buckets, latency_counts) = (
                    select h.buckets, h.counts
                    from data._usage_histogram_add(u.latency_buckets, u.latency_counts, a.latency_buckets,
                                                   a.latency_taken) h)
            from (select g.org_id, g.day, g.principal_id, g.repo_id, g.persona_id, g.session_id, g.foreign_org,
                         sum(g.retrievals) as retrievals, sum(g.empty) as empty, sum(g.below_floor) as below_floor,
                         sum(g.duration_sum) as duration_sum,
                         coalesce(sum(g.retrievals) filter (where g.latency_bucket is not null), 0) as timed,
                         coalesce(array_agg(g.latency_bucket order by g.latency_bucket)
                                      filter (where g.latency_bucket is not null), '{}') as latency_buckets,
                         coalesce(array_agg(-g.retrievals order by g.latency_bucket)
                                      filter (where g.latency_bucket is not null), '{}') as latency_taken
                  from (select t.org_id, (t.created_at at time zone 'UTC')::date as day, t.principal_id, d.repo_id,
                               d.persona_id, d.session_id, d.foreign_org, d.latency_bucket, count(*) as retrievals,
                               count(*) filter (where d.empty) as empty,
                               count(*) filter (where d.below_floor) as below_floor,
                               coalesce(sum(t.duration_ms), 0) as duration_sum
                        from %1$s t
                        cross join lateral data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d
                        group by 1, 2, 3, 4, 5, 6, 7, 8) g
                  group by 1, 2, 3, 4, 5, 6, 7) a
            where u.org_id = a.org_id and u.day = a.day and u.principal_id is not distinct from a.principal_id
              and u.repo_id is not distinct from a.repo_id and u.persona_id is not distinct from a.persona_id
              and u.session_id is not distinct from a.session_id and u.foreign_org = a.foreign_org
        $q$, p_source),
        'delete from data.usage_days where retrievals <= 0',
        format('delete from data.usage_below_floor b using %1$s t where b.trace_id = t.trace_id', p_source)]
    end
$$;

-- data._usage_recount: count data.usage_fragments again for the principals of the
-- traces in p_source, from their traces as they are now (after a delete or an update).
create or replace function data._usage_recount_statements(p_source text)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
    select array[
        format($q$
            delete from data.usage_fragments u
            using (select distinct src.org_id, src.principal_id from %1$s src) k
            where u.org_id = k.org_id and u.principal_id is not distinct from k.principal_id
        $q$, p_source),
        format($q$
            insert into data.usage_fragments (org_id, principal_id, fragment_id, retrievals, candidacies,
                                              best_fused_rank, last_retrieved_at, last_candidate_at,
                                              newest_trace_id, source, doc_id)
            select t.org_id, t.principal_id, c.fragment_id, count(*) filter (where c.included), count(*),
                   min(c.fused_rank), max(t.created_at) filter (where c.included), max(t.created_at),
                   (array_agg(t.trace_id order by t.created_at desc, t.trace_id))[1],
                   (array_agg(c.source order by t.created_at desc, t.trace_id))[1],
                   (array_agg(c.doc_id order by t.created_at desc, t.trace_id))[1]
            from data.retrieval_traces t
            cross join lateral data._usage_candidates(t.candidates) c
            where exists (select 1 from %1$s k where k.org_id = t.org_id
                                                 and k.principal_id is not distinct from t.principal_id)
              and exists (select 1 from data.orgs o where o.org_id = t.org_id)
            group by t.org_id, t.principal_id, c.fragment_id
        $q$, p_source)]
$$;

-- The triggers that correct the roll-ups: one function for deletes and updates of traces
-- (a statement each, with its transition tables; every pending trace is folded first, by
-- data._usage_settle), one for truncation. Inserts: data._usage_pend above.
create or replace function data._usage_track()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    s text;
begin
    if tg_op in ('DELETE', 'UPDATE') then
        foreach s in array data._usage_statements('removed', -1) loop
            execute s;
        end loop;
    end if;
    if tg_op = 'UPDATE' then
        foreach s in array data._usage_statements('added', 1) loop
            -- An update counts usage_fragments again below rather than adding to it.
            if s not like '%data.usage_fragments%' then
                execute s;
            end if;
        end loop;
    end if;
    if tg_op = 'DELETE' then
        foreach s in array data._usage_recount_statements('removed') loop
            execute s;
        end loop;
    elsif tg_op = 'UPDATE' then
        foreach s in array data._usage_recount_statements(
                '(select org_id, principal_id from removed union select org_id, principal_id from added)') loop
            execute s;
        end loop;
    end if;
    return null;
end
$$;

-- data._usage_fold: count up to p_limit traces listed in data.usage_pending (all of
-- them: null) into the roll-ups, and take them off the list, in one statement: the rows of
-- data._usage_statements(..., 1), written out so that their plan is kept for the session,
-- expanding each trace's candidates once for the three roll-ups. One fold at a time (the
-- advisory lock contexts.usage_fold, to the end of the transaction: two folds would wait
-- on each other's roll-up rows anyway), and the traces are claimed skip-locked, so that no
-- trace is counted twice or lost whoever folds; a reader never waits for a fold (the usage
-- views add the listed traces on the fly), and a write never does (data._usage_pend only
-- tries the lock). The rebuild runs the generated statements, and
-- tests/sql/test_usage_rollups.py checks that both give the same roll-ups.
create or replace function data._usage_fold_some(p_limit int)
returns int
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    folded int;
begin
    perform pg_advisory_xact_lock(hashtext('contexts.usage_fold'));
    with claimed as materialized (
        delete from data.usage_pending p
        where p.pending_id in (select q.pending_id from data.usage_pending q
                               order by q.pending_id limit p_limit for update skip locked)
        returning p.trace_id
    ), added as materialized (
        -- Under a cascade from data.orgs the org is gone: its traces are not counted.
        select t.*
        from claimed c
        join data.retrieval_traces t on t.trace_id = c.trace_id
        where exists (select 1 from data.orgs o where o.org_id = t.org_id)
    ), expanded as materialized (
        -- Each candidate once, with what the roll-ups read of it and of its trace (no join
        -- back to the traces: a batch's thousands of entries stay a single pass); the
        -- fragment id only for the entries data._usage_candidates keeps.
        select t.trace_id, t.org_id, t.principal_id, t.created_at, e.c ->> 'included' = 'true' as included,
               case when jsonb_typeof(e.c -> 'relevance') = 'number' then (e.c ->> 'relevance')::float8 end as relevance,
               case when jsonb_typeof(e.c -> 'final_score') = 'number' then (e.c ->> 'final_score')::float8 end as final_score,
               case when jsonb_typeof(e.c) = 'object' and jsonb_typeof(e.c -> 'fragment_id') = 'number'
                         and e.c ->> 'fragment_id' ~ '^[0-9]{1,18}$'
                    then (e.c ->> 'fragment_id')::bigint end as fragment_id,
               case when jsonb_typeof(e.c -> 'fused_rank') = 'number' then (e.c ->> 'fused_rank')::float8 end
                   as fused_rank,
               e.c ->> 'source' as source,
               case when jsonb_typeof(e.c -> 'doc_id') = 'number'
                    then case when abs((e.c ->> 'doc_id')::float8) < 9e18 then (e.c ->> 'doc_id')::float8::bigint end
               end as doc_id
        from added t
        cross join lateral jsonb_array_elements(
            case when jsonb_typeof(t.candidates) = 'array' then t.candidates else '[]' end) e(c)
    ), totals as (
        select e.trace_id, count(*)::int as candidates, count(*) filter (where e.included) as included,
               max(e.relevance) as best_relevance, max(e.final_score) as best_score
        from expanded e
        group by e.trace_id
    ), traced as materialized (
        select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, t.duration_ms, d.*
        from added t
        left join totals n on n.trace_id = t.trace_id
        cross join lateral data._usage_summary(t.org_id, t.request, t.duration_ms, coalesce(n.candidates, 0),
                                               coalesce(n.included, 0), n.best_relevance, n.best_score) d
    ), days as (
        insert into data.usage_days as u (org_id, day, principal_id, repo_id, persona_id, session_id, foreign_org,
                                          retrievals, empty, below_floor, duration_sum, timed, latency_buckets,
                                          latency_counts)
        select g.org_id, g.day, g.principal_id, g.repo_id, g.persona_id, g.session_id, g.foreign_org,
               sum(g.retrievals), sum(g.empty), sum(g.below_floor), sum(g.duration_sum),
               coalesce(sum(g.retrievals) filter (where g.latency_bucket is not null), 0),
               coalesce(array_agg(g.latency_bucket order by g.latency_bucket)
                            filter (where g.latency_bucket is not null), '{}'),
               coalesce(array_agg(g.retrievals order by g.latency_bucket)
                            filter (where g.latency_bucket is not null), '{}')
        from (select t.org_id, (t.created_at at time zone 'UTC')::date as day, t.principal_id, t.repo_id,
                     t.persona_id, t.session_id, t.foreign_org, t.latency_bucket, count(*) as retrievals,
                     count(*) filter (where t.empty) as empty, count(*) filter (where t.below_floor) as below_floor,
                     coalesce(sum(t.duration_ms), 0) as duration_sum
              from traced t
              group by 1, 2, 3, 4, 5, 6, 7, 8) g
        group by 1, 2, 3, 4, 5, 6, 7
        order by 1, 2, 3, 4, 5, 6, 7
        on conflict on constraint usage_days_key do update
        set retrievals = u.retrievals + excluded.retrievals, empty = u.empty + excluded.empty,
            below_floor = u.below_floor + excluded.below_floor,
            duration_sum = u.duration_sum + excluded.duration_sum, timed = u.timed + excluded.timed,
            (latency_buckets, latency_counts) = (
                select h.buckets, h.counts
                from data._usage_histogram_add(u.latency_buckets, u.latency_counts, excluded.latency_buckets,
                                               excluded.latency_counts) h)
    ), below as (
        insert into data.usage_below_floor (trace_id, org_id, principal_id, created_at, query, repo_id, persona_id,
                                            session_id, foreign_org, relevance_floor, best_relevance, best_score,
                                            candidates)
        select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, t.repo_id, t.persona_id, t.session_id,
               t.foreign_org, t.relevance_floor, t.best_relevance, t.best_score, t.candidates
        from traced t
        where t.below_floor
        on conflict do nothing  -- any key: (trace_id), or (org_id, trace_id) on Citus
    ), fragments as (
    insert into data.usage_fragments as u (org_id, principal_id, fragment_id, retrievals, candidacies,
                                           best_fused_rank, last_retrieved_at, last_candidate_at,
                                           newest_trace_id, source, doc_id)
    select c.org_id, c.principal_id, c.fragment_id, count(*) filter (where c.included), count(*),
           min(c.fused_rank), max(c.created_at) filter (where c.included), max(c.created_at),
           (array_agg(c.trace_id order by c.created_at desc, c.trace_id))[1],
           (array_agg(c.source order by c.created_at desc, c.trace_id))[1],
           (array_agg(c.doc_id order by c.created_at desc, c.trace_id))[1]
    from expanded c
    where c.fragment_id is not null
    group by c.org_id, c.principal_id, c.fragment_id
    order by c.org_id, c.fragment_id, c.principal_id
    on conflict on constraint usage_fragments_key do update
    set retrievals = u.retrievals + excluded.retrievals, candidacies = u.candidacies + excluded.candidacies,
        best_fused_rank = least(u.best_fused_rank, excluded.best_fused_rank),
        last_retrieved_at = greatest(u.last_retrieved_at, excluded.last_retrieved_at),
        last_candidate_at = greatest(u.last_candidate_at, excluded.last_candidate_at),
        newest_trace_id = case when (excluded.last_candidate_at, u.newest_trace_id)
                                    > (u.last_candidate_at, excluded.newest_trace_id)
                               then excluded.newest_trace_id else u.newest_trace_id end,
        source = case when (excluded.last_candidate_at, u.newest_trace_id)
                           > (u.last_candidate_at, excluded.newest_trace_id)
                      then excluded.source else u.source end,
        doc_id = case when (excluded.last_candidate_at, u.newest_trace_id)
                           > (u.last_candidate_at, excluded.newest_trace_id)
                      then excluded.doc_id else u.doc_id end
    )
    select count(*) into folded from claimed;
    return folded;
end
$$;
comment on function data._usage_fold_some(int) is 'Count up to p_limit pending traces (all: null) into the usage roll-ups and say how many; traces another transaction is folding are skipped.';

create or replace function data._usage_fold(p_limit int default null)
returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._usage_fold_some(p_limit);
end
$$;
comment on function data._usage_fold(int) is 'Count up to p_limit pending traces (all: null) into the usage roll-ups; traces another transaction is folding are skipped.';

-- service.fold_usage: what the service's folder (app.retrieve.usage_fold) runs in a
-- transaction of its own, after the write that made a fold due has answered: up to
-- p_limit pending traces folded, and how many (0 at once when another fold holds the
-- lock: that one folds them, and the next due write wakes a folder again). It counts
-- traces already written into the roll-ups every reader's view adds up anyway, and tells
-- nothing of any org but a number.
create or replace function service.fold_usage(p_limit int default 256)
returns int
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_limit is null or p_limit < 1 then
        raise exception 'a fold takes a positive number of traces, not %', coalesce(p_limit::text, 'null')
            using errcode = '22023';
    end if;
    if not pg_try_advisory_xact_lock(hashtext('contexts.usage_fold')) then
        return 0;
    end if;
    return data._usage_fold_some(p_limit);
end
$$;
comment on function service.fold_usage(int) is 'Count up to p_limit pending traces into the usage roll-ups, off the request path (the service''s folder); 0 when another fold is under way.';

-- data._usage_fold_all: every pending trace counted (after a fold under way in another
-- transaction ends: what it folded is off the list by then). Before a trace is deleted or
-- updated.
create or replace function data._usage_fold_all()
returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._usage_fold(null);
end
$$;
comment on function data._usage_fold_all() is 'Count every pending trace into the usage roll-ups (waits for concurrent folds).';

-- data._usage_fold_every: how many traces are written between two folds (the write whose
-- list entry crosses a multiple of it makes a fold due): 64, or the setting
-- contexts.usage_fold_every (a positive integer).
create or replace function data._usage_fold_every()
returns int
language sql stable parallel safe
set search_path = pg_catalog, pg_temp
as $$
    select case when s ~ '^[0-9]{1,9}$' and s::int > 0 then s::int else 64 end
    from (select current_setting('contexts.usage_fold_every', true) as s) c
$$;

-- data._usage_pend: the insert trigger's function. A trace's write only lists it (a row of
-- data.usage_pending) and folds nothing: the write whose list entries cross a multiple of
-- data._usage_fold_every() sets contexts.usage_fold_due to 'on' for its transaction, and
-- its writer wakes a folder that folds in a transaction of its own once the answer is
-- sent (service.fold_usage, app.retrieve.usage_fold). Only when the list already spans
-- four times that many entries (no folder is running, or folds keep failing) does the
-- write fold a batch of that size itself, unless a fold is under way in another
-- transaction: then it leaves them to the next.
create or replace function data._usage_pend()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    lo bigint;
    hi bigint;
    every int := data._usage_fold_every();
begin
    with listed as (
        insert into data.usage_pending (trace_id, org_id)
        select a.trace_id, a.org_id from added a
        returning pending_id
    )
    select min(pending_id), max(pending_id) into lo, hi from listed;
    if hi / every > (lo - 1) / every then
        perform set_config('contexts.usage_fold_due', 'on', true);
        if hi - (select min(p.pending_id) from data.usage_pending p) + 1 >= 4 * every
           and pg_try_advisory_xact_lock(hashtext('contexts.usage_fold')) then
            perform data._usage_fold(4 * every);
        end if;
    end if;
    return null;
end
$$;

-- Before a delete or an update of traces, every pending trace is counted: the statement
-- triggers below then correct the roll-ups for exactly the traces they were counted from.
create or replace function data._usage_settle()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    perform data._usage_fold_all();
    return null;
end
$$;

create or replace function data._usage_truncate()
returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    truncate data.usage_fragments, data.usage_days, data.usage_below_floor, data.usage_pending;
    return null;
end
$$;

create or replace trigger retrieval_traces_usage_insert
    after insert on data.retrieval_traces
    referencing new table as added
    for each statement execute function data._usage_pend();
create or replace trigger retrieval_traces_usage_settle
    before delete or update on data.retrieval_traces
    for each statement execute function data._usage_settle();
create or replace trigger retrieval_traces_usage_delete
    after delete on data.retrieval_traces
    referencing old table as removed
    for each statement execute function data._usage_track();
create or replace trigger retrieval_traces_usage_update
    after update on data.retrieval_traces
    referencing old table as removed new table as added
    for each statement execute function data._usage_track();
create or replace trigger retrieval_traces_usage_truncate
    after truncate on data.retrieval_traces
    for each statement execute function data._usage_truncate();

-- data._usage_rebuild: the roll-ups counted again from every trace (the DBA's repair;
-- migrate runs it once, when traces exist that were never counted: after migration 0029).
create or replace function data._usage_rebuild()
returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    s text;
begin
    truncate data.usage_fragments, data.usage_days, data.usage_below_floor, data.usage_pending;
    foreach s in array data._usage_statements('data.retrieval_traces', 1) loop
        execute s;
    end loop;
end
$$;
comment on function data._usage_rebuild() is 'Count the usage roll-ups again from every retrieval trace.';

-- A trace always adds a row to data.usage_days: traces without any are traces never
-- counted (written before migration 0029).
do $$
begin
    if exists (select 1 from data.retrieval_traces) and not exists (select 1 from data.usage_days) then
        perform data._usage_rebuild();
    end if;
end
$$;
