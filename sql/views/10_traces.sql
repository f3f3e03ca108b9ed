-- Views callers read instead of tables. Re-applied on every migrate (after functions,
-- before policies and grants). A view runs with its owner's table privileges (the
-- migrator, who bypasses row-level security), so each one filters its rows itself;
-- security_barrier keeps a caller's own conditions from seeing rows it filters out.
--
-- A caller's own condition on such a view must never be evaluated on a row the view
-- drops. A security barrier stops conditions built of leaky functions, but lets
-- leakproof ones (=, <, starts_with on text or ids) through to the scan of the table, and
-- EXPLAIN ANALYZE prints how many rows each step found: a condition met by rows the view
-- then filtered out was counted all the same, which told another org's query texts and
-- paths one prefix at a time. So every view of this kind is fenced: its rows are made
-- in a subquery with OFFSET 0 (PostgreSQL pushes no condition into a subquery with a
-- LIMIT or an OFFSET), and the caller's conditions only ever meet rows it may read,
-- as the view shows them (redacted). Inside the
-- fence each table is read by the org as a scalar subquery, `t.org_id = (select
-- data.acl_org())`, computed once: the org's rows, by index, and nothing of any other.
-- The price: a view computes every row the caller may read before its conditions apply
-- (api.get_trace looks one trace up by id without it). tests/security/
-- test_plan_side_channels.py proves it for every view of this kind: what EXPLAIN ANALYZE
-- reports is the same whether or not another org, or a session the reader holds no
-- grant on, holds the value a condition looks for.

-- data.readable_traces: the stored rows of the traces the caller may read (api.whoami()'s
-- principal: its own, all of its org's with an audit grant; nobody bound, nothing), each
-- with the caller's read grants that redaction takes (computed once per query). Stored
-- text, unredacted: no caller role may select it. api.retrieval_traces and
-- api.query_vectors read it behind the fence and redact on top; api.get_trace
-- (data._trace) and api.retrieve (data._stored_query_vector) by id and by text.
create or replace view data.readable_traces with (security_barrier) as
select t.*, (select data.acl_org_wide()) as org_wide, (select data.acl_repos()) as repos,
       (select data.acl_personas()) as personas, (select data.acl_sessions()) as sessions
from data.retrieval_traces t
where t.org_id = (select data.acl_org())
  and (t.principal_id = (select data.acl_principal()) or (select data.acl_audit()));
comment on view data.readable_traces is 'The stored rows of the traces the caller may read, with its read grants; read behind a fence (api.retrieval_traces) or by id (api.get_trace).';

-- api.retrieval_traces: every retrieval trace the caller may see, as it may see it now
-- (sql/functions/50_traces.sql has the redaction). No security barrier on this outer
-- level: the fence keeps every condition of the caller out of data.readable_traces, and
-- every column the view shows is redacted, so the view may be merged into the caller's
-- query: a column is computed only when selected, and a sort with a LIMIT on created_at
-- redacts the rows it keeps only. The request's three parts are fields of one redaction
-- (data._redact_request), evaluated for each field a caller selects.
create or replace view api.retrieval_traces as
select t.trace_id, t.org_id, t.principal_id,
       (data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos, t.personas, t.sessions)).query,
       (data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos, t.personas, t.sessions)).request,
       (data._redact_pipeline(t.pipeline, (data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos,
                                                                t.personas, t.sessions)).redacted)).pipeline,
       data._redact_candidates(t.org_id, t.candidates) as candidates, t.duration_ms, t.created_at,
       (data._redact_pipeline(t.pipeline, (data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos,
                                                                t.personas, t.sessions)).redacted)).redacted,
       data._redact_candidates(t.org_id, coalesce(t.left_out, '[]')) as left_out
from (select * from data.readable_traces offset 0) t;  -- the fence (above)
comment on view api.retrieval_traces is 'Retrieval traces the caller may read (its own; its org''s with an audit grant), each redacted to what its grants let it read now: see redacted, and candidates[].redacted.';
comment on column api.retrieval_traces.query is 'The query; null when withheld (then listed in redacted).';
comment on column api.retrieval_traces.request is 'The request body; a scope id the caller holds no grant on is null and listed in redacted, with the query.';
comment on column api.retrieval_traces.candidates is 'Each candidate''s ranks, scores and fate; one whose fragment the caller may not read has "redacted": true and nothing that identifies it.';
comment on column api.retrieval_traces.left_out is 'What validity windows kept out that would otherwise have ranked, and the pins the retrieval could not serve, each with its reason and the documents superseding it; redacted like the candidates.';
comment on column api.retrieval_traces.redacted is 'Fields withheld from this caller (query, request.query, request.scope.session_id, pipeline.profile, ...); empty when none.';
comment on column api.retrieval_traces.pipeline is 'Versions and knobs the retrieval ran with; the ranking profile of a persona the caller holds no grant on is null (listed in redacted).';

-- api.query_vectors: the query vectors of the traces in api.retrieval_traces whose query
-- the caller may read there (a vector stands for its query text, so it is withheld
-- exactly when the query is), one row per trace and model, behind the same fence.
-- api.retrieve looks a query text up without the fence (data._stored_query_vector).
create or replace view api.query_vectors as
select t.trace_id, t.org_id, t.principal_id, t.created_at, r.query, v.model, v.embedding
from (select * from data.readable_traces offset 0) t  -- the fence (above)
cross join lateral data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos, t.personas, t.sessions) r
cross join lateral unnest(t.query_models, t.query_vectors) as v(model, embedding)
where r.query is not null;
comment on view api.query_vectors is 'Query vectors of the traces whose query the caller may read (api.retrieval_traces), one row per trace and embedding model; api.retrieve uses the newest of a query text.';
comment on column api.query_vectors.model is 'The embedding model (data.embedding_models.name) that computed the vector.';
comment on column api.query_vectors.embedding is 'The query''s vector as the service searched with it.';
