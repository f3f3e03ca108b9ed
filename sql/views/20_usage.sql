-- Usage: how retrieval is used, for analysts. Every row, query, scope id and fragment
-- here is exactly what api.retrieval_traces (sql/views/10_traces.sql) shows the caller:
-- its own traces, its org's with an audit grant, each redacted to what its grants let it
-- read now.
--   * api.retrieval_summaries reads api.retrieval_traces itself (one row per trace, each
--     redacted on the way: over a long history filter it on created_at).
--   * api.retrievals_per_day, api.retrievals_below_floor and api.fragment_retrievals read
--     the usage roll-ups (sql/functions/51_usage.sql), kept as traces are written, keyed
--     by what redaction depends on: they restate the row rule of api.retrieval_traces
--     (the caller's org; own rows, or all with an audit grant) and its redaction (a
--     scope id the caller holds no grant on is withheld; a fragment it may not read now
--     is not counted), so their cost follows the roll-ups, not the history (ADR 0028).
--     A trace is counted into the roll-ups in batches after it is written: until then it
--     is listed in data.usage_pending, and each of these views adds what the listed
--     traces the caller may read hold (data.usage_pending_traces, read from the traces
--     themselves by key), so that no reader ever sees the roll-ups lag.
--     Like api.retrieval_traces they run as their owner and filter their rows themselves.
--   * The others are security invoker views over those and the data tables.

-- api.retrieval_summaries: one row per retrieval the caller may read, without the
-- candidate list: who asked, in which scope, what came back, and whether anything
-- reached the relevance floor. Relevance is the absolute score of ADR 0009 (the same
-- number means the same for every query; the fused score does not); the floor is the
-- request's min_relevance when it set one, else 0.3, where that ADR found unrelated top
-- hits stop and relevant ones start with the default model.
create or replace view api.retrieval_summaries with (security_invoker = true) as
with summarized as (
    select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query,
           t.request -> 'scope' ->> 'repo_id' as repo_id,
           t.request -> 'scope' ->> 'persona_id' as persona_id,
           t.request -> 'scope' ->> 'session_id' as session_id,
           cardinality(t.redacted) > 0 as withheld,
           coalesce(data._json_number(t.request -> 'min_score'), 0.0) as min_score,
           coalesce(data._json_number(t.request -> 'min_relevance'), 0.0) as min_relevance,
           c.candidates, c.included, c.best_score, c.best_relevance, t.duration_ms
    from api.retrieval_traces t
    cross join lateral (
        select count(*)::int as candidates,
               (count(*) filter (where e ->> 'included' = 'true'))::int as included,
               max(data._json_number(e -> 'final_score')) as best_score,
               max(data._json_number(e -> 'relevance')) as best_relevance
        from jsonb_array_elements(t.candidates) e
    ) c
)
select s.trace_id, s.org_id, s.principal_id, s.created_at, s.query, s.repo_id, s.persona_id, s.session_id,
       s.withheld, s.min_score, s.min_relevance,
       case when s.min_relevance > 0 then s.min_relevance else 0.3 end as relevance_floor,
       s.candidates, s.included, s.best_score, s.best_relevance,
       case when s.candidates = 0 then true
            when s.best_relevance is null then null
            else s.best_relevance < case when s.min_relevance > 0 then s.min_relevance else 0.3 end
       end as nothing_above_floor,
       s.duration_ms
from summarized s;
comment on view api.retrieval_summaries is 'One row per retrieval trace you may read (api.retrieval_traces): who asked, when, the scope, candidates found and included, best final score and best relevance, and whether any candidate reached the relevance floor.';
comment on column api.retrieval_summaries.withheld is 'True when the request named a scope you hold no grant on now: its query and those scope ids are null (api.retrieval_traces.redacted).';
comment on column api.retrieval_summaries.relevance_floor is 'The request''s min_relevance when it set one, else 0.3 (docs/adr/0009-absolute-relevance.md).';
comment on column api.retrieval_summaries.best_relevance is 'Best absolute relevance among the ranked candidates (null: none ranked, or a trace from before relevance was recorded).';
comment on column api.retrieval_summaries.nothing_above_floor is 'No ranked candidate reached relevance_floor (true when nothing was found at all; null for a trace that recorded no relevance).';

-- data.usage_pending_traces: the traces listed in data.usage_pending (written, not yet
-- counted into the roll-ups) that api.retrieval_traces shows the caller: its org's, its
-- own or all of them with an audit grant. The three usage views below add these to what
-- the roll-ups hold. It runs as its owner, as they do; no caller role may select it.
create or replace view data.usage_pending_traces with (security_barrier) as
select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, t.request, t.candidates, t.duration_ms
from data.usage_pending p
-- By key, a trace at a time (limit 1: a lateral lookup, never a scan of the traces).
cross join lateral (
    select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, t.request, t.candidates, t.duration_ms
    from data.retrieval_traces t
    where t.trace_id = p.trace_id and t.org_id = (select data.acl_org())
      and (t.principal_id = (select data.acl_principal()) or (select data.acl_audit()))
    limit 1) t
where p.org_id = (select data.acl_org());
comment on view data.usage_pending_traces is 'The traces not yet counted into the usage roll-ups that the caller may read (the row rule of api.retrieval_traces), for the usage views.';

-- api.retrievals_per_day: retrievals per UTC day, org, principal and requested scope,
-- from data.usage_days (a row per group, with its latency histogram). p95_ms is read from
-- latency buckets 2% wide: within 1% of the exact percentile. A group that redaction
-- leaves alone keeps the p95 stored with its row; one that redaction makes of several
-- rows (scope ids withheld from the reader become alike) concatenates their histograms.
create or replace view api.retrievals_per_day with (security_barrier) as
with me as materialized (
    select * from api.whoami()
), counted as (
    select u.day, u.org_id, u.principal_id, u.repo_id, u.persona_id, u.session_id, u.foreign_org,
           u.retrievals, u.empty, u.below_floor, u.duration_sum, u.timed, u.latency_buckets, u.latency_counts,
           u.p95_ms, false as pending
    from data.usage_days u
    where u.org_id = (select data.acl_org())
      and (u.principal_id = (select data.acl_principal()) or (select data.acl_audit()))
    union all
    -- The traces not yet counted, a row each, as data._usage_fold will count them.
    select (t.created_at at time zone 'UTC')::date, t.org_id, t.principal_id, d.repo_id, d.persona_id,
           d.session_id, d.foreign_org, 1, d.empty::int, (d.below_floor is true)::int, coalesce(t.duration_ms, 0),
           (d.latency_bucket is not null)::int,
           case when d.latency_bucket is null then '{}' else array[d.latency_bucket] end,
           case when d.latency_bucket is null then '{}' else array[1::bigint] end,
           null, true
    from data.usage_pending_traces t
    cross join lateral data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d
), visible as (
    select u.day, u.org_id, u.principal_id, u.repo_id, u.persona_id, u.session_id, u.foreign_org,
           u.retrievals, u.empty, u.below_floor, u.duration_sum, u.timed, u.latency_buckets, u.latency_counts,
           u.p95_ms, u.pending,
           u.repo_id is not null and not (coalesce(me.org_wide, false) or u.repo_id = any (coalesce(me.repos, '{}')))
               as repo_hidden,
           u.persona_id is not null
               and not (coalesce(me.org_wide, false) or u.persona_id = any (coalesce(me.personas, '{}')))
               as persona_hidden,
           u.session_id is not null and not (u.session_id = any (coalesce(me.sessions, '{}'))) as session_hidden
    from me
    cross join counted u
), per_group as (
    select v.day, v.org_id, v.principal_id,
           case when v.repo_hidden then null else v.repo_id end as repo_id,
           case when v.persona_hidden then null else v.persona_id end as persona_id,
           case when v.session_hidden then null else v.session_id end as session_id,
           v.foreign_org or v.repo_hidden or v.persona_hidden or v.session_hidden as withheld,
           count(*) as merged, sum(v.retrievals)::bigint as retrievals, sum(v.empty)::bigint as empty,
           sum(v.below_floor)::bigint as nothing_above_floor,
           sum(v.duration_sum) / nullif(sum(v.timed), 0) as mean_ms,
           min(v.p95_ms) as p95_ms, bool_or(v.pending) as pending,
           data._usage_concat(v.latency_buckets) as latency_buckets, data._usage_concat(v.latency_counts) as latency_counts
    from visible v
    group by 1, 2, 3, 4, 5, 6, 7
)
select g.day, g.org_id, g.principal_id, g.repo_id, g.persona_id, g.session_id, g.withheld,
       g.retrievals, g.empty, g.nothing_above_floor, g.mean_ms,
       case when g.merged = 1 and not g.pending then g.p95_ms else data._usage_p95(g.latency_buckets, g.latency_counts) end as p95_ms
from per_group g
offset 0;  -- the fence (sql/views/10_traces.sql)
comment on view api.retrievals_per_day is 'Retrievals you may read per UTC day, org, principal and requested scope (repo, persona, session; withheld: a scope you hold no grant on), with empty answers and latency.';
comment on column api.retrievals_per_day.empty is 'Retrievals that returned no fragment.';
comment on column api.retrievals_per_day.p95_ms is '95th percentile of the latency, from buckets 2% wide (within 1% of the exact value).';

-- api.retrievals_below_floor: queries with nothing above the relevance floor, from
-- data.usage_below_floor.
create or replace view api.retrievals_below_floor with (security_barrier) as
with me as materialized (
    select * from api.whoami()
), listed as (
    select b.trace_id, b.org_id, b.principal_id, b.created_at, b.query, b.repo_id, b.persona_id, b.session_id,
           b.foreign_org, b.relevance_floor, b.best_relevance, b.best_score, b.candidates
    from data.usage_below_floor b
    where b.org_id = (select data.acl_org())
      and (b.principal_id = (select data.acl_principal()) or (select data.acl_audit()))
    union all
    -- The traces not yet counted (data.usage_pending).
    select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, d.repo_id, d.persona_id, d.session_id,
           d.foreign_org, d.relevance_floor, d.best_relevance, d.best_score, d.candidates
    from data.usage_pending_traces t
    cross join lateral data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d
    where d.below_floor
), visible as (
    select b.*,
           b.foreign_org
           or (b.repo_id is not null
               and not (coalesce(me.org_wide, false) or b.repo_id = any (coalesce(me.repos, '{}'))))
           or (b.persona_id is not null
               and not (coalesce(me.org_wide, false) or b.persona_id = any (coalesce(me.personas, '{}'))))
           or (b.session_id is not null and not (b.session_id = any (coalesce(me.sessions, '{}')))) as withheld,
           coalesce(me.org_wide, false) as org_wide, me.repos, me.personas, me.sessions
    from me
    cross join listed b
)
select v.trace_id, v.org_id, v.principal_id, v.created_at,
       case when v.withheld then null else v.query end as query,
       case when v.withheld and v.repo_id is not null
                 and not (v.org_wide or v.repo_id = any (coalesce(v.repos, '{}'))) then null
            else v.repo_id end as repo_id,
       case when v.withheld and v.persona_id is not null
                 and not (v.org_wide or v.persona_id = any (coalesce(v.personas, '{}'))) then null
            else v.persona_id end as persona_id,
       case when v.withheld and v.session_id is not null
                 and not (v.session_id = any (coalesce(v.sessions, '{}'))) then null
            else v.session_id end as session_id,
       v.withheld, v.relevance_floor, v.best_relevance, v.best_score, v.candidates
from visible v
offset 0;  -- the fence (sql/views/10_traces.sql)
comment on view api.retrievals_below_floor is 'Retrievals you may read in which no candidate reached the relevance floor (the request''s min_relevance, else 0.3), or that found nothing. For another floor: api.retrieval_summaries where best_relevance < x.';

-- api.fragment_retrievals: per fragment, how often retrievals returned it, from
-- data.usage_fragments. Only fragments the caller may read now are counted (the
-- predicate of data._readable_fragments, with the caller's grants): a withheld
-- candidate has no fragment id.
create or replace view api.fragment_retrievals with (security_barrier) as
with me as materialized (
    select * from api.whoami()
), counted as (
    select u.org_id, u.fragment_id, u.source, u.doc_id, u.retrievals, u.candidacies, u.best_fused_rank,
           u.last_retrieved_at, u.last_candidate_at, u.newest_trace_id
    from data.usage_fragments u
    where u.org_id = (select data.acl_org())
      and (u.principal_id = (select data.acl_principal()) or (select data.acl_audit()))
    union all
    -- The traces not yet counted (data.usage_pending): a row per candidate.
    select t.org_id, c.fragment_id, c.source, c.doc_id, (c.included is true)::int, 1, c.fused_rank,
           case when c.included then t.created_at end, t.created_at, t.trace_id
    from data.usage_pending_traces t
    cross join lateral data._usage_candidates(t.candidates) c
)
select u.org_id, u.fragment_id,
       (array_agg(u.source order by u.last_candidate_at desc, u.newest_trace_id))[1] as source,
       (array_agg(u.doc_id order by u.last_candidate_at desc, u.newest_trace_id))[1] as doc_id,
       sum(u.retrievals)::bigint as retrievals,
       sum(u.candidacies)::bigint as candidacies,
       min(u.best_fused_rank)::int as best_fused_rank,
       max(u.last_retrieved_at) as last_retrieved_at,
       max(u.last_candidate_at) as last_candidate_at
from me
cross join counted u
join data.fragments f on f.org_id = u.org_id and f.fragment_id = u.fragment_id
where f.org_id = (select data.acl_org())
  and (f.repo_id is null or coalesce(me.org_wide, false) or f.repo_id = any (coalesce(me.repos, '{}')))
  and (f.persona_id is null or coalesce(me.org_wide, false) or f.persona_id = any (coalesce(me.personas, '{}')))
  and (f.session_id is null or f.session_id = any (coalesce(me.sessions, '{}')))
group by u.org_id, u.fragment_id
offset 0;  -- the fence (sql/views/10_traces.sql)
comment on view api.fragment_retrievals is 'Per fragment you may read: how many of the retrievals you may read returned it (retrievals) or ranked it as a candidate (candidacies), and when last. Most retrieved: order by retrievals desc.';
comment on column api.fragment_retrievals.source is 'path#anchor the newest retrieval cited it from.';

-- api.document_retrievals: per document, how often retrievals returned its fragments
-- (a fragment counts for the document it was cited from).
create or replace view api.document_retrievals with (security_invoker = true) as
select r.org_id, r.doc_id, d.path, d.kind, d.repo_id, d.persona_id, d.session_id, d.current_version,
       sum(r.retrievals)::bigint as fragments_returned,
       count(*) filter (where r.retrievals > 0) as fragments_retrieved,
       sum(r.candidacies)::bigint as candidacies,
       max(r.last_retrieved_at) as last_retrieved_at
from api.fragment_retrievals r
join data.documents d on d.org_id = r.org_id and d.doc_id = r.doc_id
-- Every column named, not the key's functional dependency: a view depending on
-- documents_pkey would stop docker/citus/distribute.sql replacing that key.
group by r.org_id, r.doc_id, d.path, d.kind, d.repo_id, d.persona_id, d.session_id, d.current_version;
comment on view api.document_retrievals is 'Per document you may read: how often the retrievals you may read returned its fragments. Most retrieved: order by fragments_returned desc.';
comment on column api.document_retrievals.fragments_returned is 'Fragments of this document returned, summed over retrievals.';
comment on column api.document_retrievals.fragments_retrieved is 'Distinct fragments of this document ever returned.';

-- api.fragments_never_retrieved: active fragments you may read that no retrieval you
-- may read has returned (with an audit grant: no retrieval of the org).
create or replace view api.fragments_never_retrieved with (security_invoker = true) as
select f.fragment_id, f.org_id, f.repo_id, f.persona_id, f.session_id, f.namespace, f.kind, f.owner,
       f.token_count, f.created_at, f.updated_at,
       coalesce(r.candidacies, 0) as candidacies,
       (select d.path from data.fragment_sources s join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id
        where s.fragment_id = f.fragment_id and s.retired_at is null
        order by s.content_hash = f.content_hash desc, s.created_at desc, s.doc_id, s.ordinal
        limit 1) as path
from data.fragments f
left join api.fragment_retrievals r on r.fragment_id = f.fragment_id and r.org_id = f.org_id
where f.active and coalesce(r.retrievals, 0) = 0;
comment on view api.fragments_never_retrieved is 'Active fragments you may read that no retrieval you may read returned (your own retrievals; your org''s with an audit grant). candidacies: how often one was ranked but not returned.';

-- api.fragment_authority: citation authority (docs/adr/0013) of the fragments the caller
-- may read now (the read rule of data.fragments, with the caller's grants, as
-- data._authority applies it), with where each came from. Most cited first: order by
-- authority desc. Runs as its owner: data.fragment_authority denies every caller.
create or replace view api.fragment_authority with (security_barrier) as
select a.org_id, a.fragment_id, a.authority, a.pagerank, f.repo_id, f.persona_id, f.session_id, f.kind, f.active,
       d.path, f.heading_path,
       (select max(r.refreshed_at) from data.authority_refreshes r) as refreshed_at
from data.fragment_authority a
join data.fragments f on f.org_id = a.org_id and f.fragment_id = a.fragment_id
left join data.documents d on d.org_id = f.org_id and d.doc_id = f.doc_id
where a.org_id = (select data.acl_org())
  and (f.repo_id is null or coalesce((select data.acl_org_wide()), false)
       or f.repo_id = any (coalesce((select data.acl_repos()), '{}')))
  and (f.persona_id is null or coalesce((select data.acl_org_wide()), false)
       or f.persona_id = any (coalesce((select data.acl_personas()), '{}')))
  and (f.session_id is null or f.session_id = any (coalesce((select data.acl_sessions()), '{}')))
offset 0;  -- the fence (sql/views/10_traces.sql)
comment on view api.fragment_authority is 'Citation authority of the fragments you may read (refreshed after ingestion: refreshed_at). Top 20: order by authority desc limit 20.';
