-- Quality: eval runs stored by `contexts eval run | gate | replay` (sql/functions/60_eval.sql).
-- Runs and figures are global (they describe the pipeline on labelled sets, and hold no
-- tenant data): every analyst and auditor reads all of them. Replay diffs hold tenants'
-- queries and fragments and are redacted per reader exactly as traces are.

-- api.eval_runs: one row per eval command run.
create or replace view api.eval_runs as
select r.run_id, r.command, r.started_at, r.finished_at, r.pipeline_version, r.outcome,
       array(select distinct f.dataset from data.eval_figures f where f.run_id = r.run_id order by 1) as datasets,
       r.pipeline, r.options, r.contexts_version
from data.eval_runs r;
comment on view api.eval_runs is 'Eval runs (contexts eval run, gate, replay): when, which pipeline (pipeline_version groups runs of the same one), which labelled sets, and the gate''s outcome.';

-- api.eval_figures: every figure of every run, long format for charting: one row per
-- run, set, stage, query scope and metric.
create or replace view api.eval_figures as
select f.run_id, r.command, r.finished_at as measured_at, r.pipeline_version,
       f.dataset, f.split, f.stage, f.scope, f.metric, f.value, f.queries,
       f.baseline, f.value - f.baseline as delta, f.status, f.waiver
from data.eval_figures f
join data.eval_runs r on r.run_id = f.run_id;
comment on view api.eval_figures is 'Golden-set figures per eval run, set, stage, query scope (null: all queries) and metric (ndcg@10, mrr@10, recall@10, recall@100); gate runs add baseline, delta and status. Chart value over measured_at.';

-- api.eval_replay_diffs: the replayed queries of `contexts eval replay` the caller may
-- read, as api.retrieval_traces shows traces: rows replayed for its own principal (its
-- org's with an audit grant), the query and scope ids withheld when they name a scope it
-- holds no grant on now (and then the error message too), each listed result reduced to
-- its score when the caller may not read its fragment now. Runs as its owner, who reads
-- the table; the caller's grants come from api.whoami().
create or replace view api.eval_replay_diffs with (security_barrier) as
select x.run_id, x.finished_at as replayed_at, x.pipeline_version, x.options -> 'candidate' as candidate_config,
       e.ordinal, e.org_id, e.principal_id, e.trace_id, e.origin, r.query, r.request,
       e.overlap, e.flagged, e.same_order,
       data._redact_candidates(e.org_id, e.current) as current,
       data._redact_candidates(e.org_id, e.candidate) as candidate,
       case when r.query is not null then e.error end as error,
       r.redacted || case when r.query is null and e.error is not null then array['error'] else '{}'::text[] end
           as redacted
from data.eval_replays e
join data.eval_runs x on x.run_id = e.run_id
cross join lateral data._redact_request(e.org_id, e.query, e.request,
                                        (select data.acl_org_wide()), (select data.acl_repos()),
                                        (select data.acl_personas()), (select data.acl_sessions())) r
where e.org_id = (select data.acl_org())
  and (e.principal_id = (select data.acl_principal()) or (select data.acl_audit()))
offset 0;  -- the fence (sql/views/10_traces.sql)
comment on view api.eval_replay_diffs is 'Queries replayed by contexts eval replay that you may read (replayed for you; your org''s with an audit grant): top results under the current and the candidate pipeline, their token overlap and whether it was flagged, redacted as api.retrieval_traces redacts traces.';
comment on column api.eval_replay_diffs.current is 'Top results under the current pipeline, best first: fragment_id, source, final_score, preview; a fragment you may not read keeps only its final_score ("redacted": true).';
comment on column api.eval_replay_diffs.candidate is 'Top results under the candidate pipeline, as current.';
comment on column api.eval_replay_diffs.redacted is 'Fields withheld from you (query, request.query, request.scope.session_id, error, ...); empty when none.';
