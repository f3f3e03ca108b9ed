-- Usage: how retrieval is used, for analysts. Every view here reads traces only through
-- api.retrieval_traces (sql/views/10_traces.sql), so each row, query, scope id and
-- candidate is exactly what that view shows the caller: its own traces, its org's with
-- an audit grant, each redacted to what its grants let it read now. They are security
-- invoker views: data tables they join are read under the caller's row-level security.
-- Each trace read is redacted on the way (one look-up of its candidates' fragments), so
-- over a long history filter api.retrieval_summaries on created_at (it reaches the
-- trace table's index) rather than an aggregate on its day.

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

-- api.retrievals_per_day: retrievals per UTC day, org, principal and requested scope.
create or replace view api.retrievals_per_day with (security_invoker = true) as
select (s.created_at at time zone 'UTC')::date as day, s.org_id, s.principal_id,
       s.repo_id, s.persona_id, s.session_id, s.withheld,
       count(*) as retrievals,
       count(*) filter (where s.included = 0) as empty,
       count(*) filter (where s.nothing_above_floor) as nothing_above_floor,
       avg(s.duration_ms) as mean_ms,
       percentile_cont(0.95) within group (order by s.duration_ms) as p95_ms
from api.retrieval_summaries s
group by 1, 2, 3, 4, 5, 6, 7;
comment on view api.retrievals_per_day is 'Retrievals you may read per UTC day, org, principal and requested scope (repo, persona, session; withheld: a scope you hold no grant on), with empty answers and latency.';
comment on column api.retrievals_per_day.empty is 'Retrievals that returned no fragment.';

-- api.retrievals_below_floor: queries with nothing above the relevance floor.
create or replace view api.retrievals_below_floor with (security_invoker = true) as
select s.trace_id, s.org_id, s.principal_id, s.created_at, s.query, s.repo_id, s.persona_id, s.session_id,
       s.withheld, s.relevance_floor, s.best_relevance, s.best_score, s.candidates
from api.retrieval_summaries s
where s.nothing_above_floor;
comment on view api.retrievals_below_floor is 'Retrievals you may read in which no candidate reached the relevance floor (the request''s min_relevance, else 0.3), or that found nothing. For another floor: api.retrieval_summaries where best_relevance < x.';

-- api.fragment_retrievals: per fragment, how often retrievals returned it. Only the
-- candidates api.retrieval_traces shows whole (fragments you may read now) are counted:
-- a withheld candidate has no fragment id.
create or replace view api.fragment_retrievals with (security_invoker = true) as
select t.org_id, (e ->> 'fragment_id')::bigint as fragment_id,
       (array_agg(e ->> 'source' order by t.created_at desc, t.trace_id))[1] as source,
       (array_agg(data._json_number(e -> 'doc_id')::bigint order by t.created_at desc, t.trace_id))[1] as doc_id,
       count(*) filter (where e ->> 'included' = 'true') as retrievals,
       count(*) as candidacies,
       min(data._json_number(e -> 'fused_rank'))::int as best_fused_rank,
       max(t.created_at) filter (where e ->> 'included' = 'true') as last_retrieved_at,
       max(t.created_at) as last_candidate_at
from api.retrieval_traces t
cross join lateral jsonb_array_elements(t.candidates) e
where e ->> 'redacted' = 'false' and jsonb_typeof(e -> 'fragment_id') = 'number'
group by t.org_id, (e ->> 'fragment_id')::bigint;
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
