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
-- LIMIT or an OFFSET), or a per-row part comes from a security definer function (never
-- inlined), and the caller's conditions only ever meet rows it may read. Inside the
-- fence each table is read by the org as a scalar subquery, `t.org_id = (select
-- data.acl_org())`, computed once: the org's rows, by index, and nothing of any other.
-- The price: a view computes every row the caller may read before its conditions apply
-- (api.get_trace looks one trace up by id without it). tests/security/
-- test_plan_side_channels.py proves it for every view of this kind: what EXPLAIN ANALYZE
-- reports is the same whether or not another org, or a session the reader holds no
-- grant on, holds the value a condition looks for.

-- data.trace_heads: the traces the caller may read (api.whoami()'s principal: its own,
-- all of its org's with an audit grant; nobody bound, nothing): their ids, times and
-- makers, none of which is redacted. The fenced part of api.retrieval_traces and
-- api.query_vectors; no caller role may select it.
create or replace view data.trace_heads with (security_barrier) as
select t.trace_id, t.org_id, t.principal_id, t.duration_ms, t.created_at
from data.retrieval_traces t
where t.org_id = (select data.acl_org())
  and (t.principal_id = (select data.acl_principal()) or (select data.acl_audit()));
comment on view data.trace_heads is 'The ids, times and makers of the traces the caller may read; the fenced part of api.retrieval_traces.';

-- api.retrieval_traces: every retrieval trace the caller may see, as it may see it now
-- (sql/functions/50_traces.sql has the rule). The caller is the principal of api.whoami():
-- its own traces, and all of its org's with an audit grant. Nobody bound, nothing shown
-- (a DBA reads data.retrieval_traces itself, or binds a principal to see what it sees).
-- No security barrier on this outer level: the fence keeps every condition of the caller
-- out of data.trace_heads, and what the functions return is what the caller may read, so
-- the view may be merged into the caller's query, and a sort with a LIMIT on created_at
-- computes the redacted columns of the rows it keeps only.
create or replace view api.retrieval_traces as
select h.trace_id, h.org_id, h.principal_id, (data._trace_request_redacted(h.trace_id)).query,
       (data._trace_request_redacted(h.trace_id)).request, data._trace_pipeline(h.trace_id) as pipeline,
       data._trace_candidates(h.trace_id) as candidates, h.duration_ms, h.created_at,
       (data._trace_request_redacted(h.trace_id)).redacted, data._trace_left_out(h.trace_id) as left_out
from (select * from data.trace_heads offset 0) h;  -- the fence (above)
comment on view api.retrieval_traces is 'Retrieval traces the caller may read (its own; its org''s with an audit grant), each redacted to what its grants let it read now: see redacted, and candidates[].redacted.';
comment on column api.retrieval_traces.query is 'The query; null when withheld (then listed in redacted).';
comment on column api.retrieval_traces.request is 'The request body; a scope id the caller holds no grant on is null and listed in redacted, with the query.';
comment on column api.retrieval_traces.candidates is 'Each candidate''s ranks, scores and fate; one whose fragment the caller may not read has "redacted": true and nothing that identifies it.';
comment on column api.retrieval_traces.left_out is 'What validity windows kept out that would otherwise have ranked, and the pins the retrieval could not serve, each with its reason and the documents superseding it; redacted like the candidates.';
comment on column api.retrieval_traces.redacted is 'Fields withheld from this caller (query, request.query, request.scope.session_id, ...); empty when none.';

-- api.query_vectors: the query vectors of the traces in api.retrieval_traces whose query
-- the caller may read there (a vector stands for its query text, so it is withheld
-- exactly when the query is), one row per trace and model: data.trace_heads behind the
-- fence, each trace's vectors from data._trace_query_vectors (none when its query is
-- withheld). api.retrieve looks a query text up without the fence
-- (data._stored_query_vector).
create or replace view api.query_vectors as
select h.trace_id, h.org_id, h.principal_id, h.created_at, (data._trace_request_redacted(h.trace_id)).query,
       v.model, v.embedding
from (select * from data.trace_heads offset 0) h  -- the fence (above)
cross join lateral data._trace_query_vectors(h.trace_id) v;
comment on view api.query_vectors is 'Query vectors of the traces whose query the caller may read (api.retrieval_traces), one row per trace and embedding model; api.retrieve uses the newest of a query text.';
comment on column api.query_vectors.model is 'The embedding model (data.embedding_models.name) that computed the vector.';
comment on column api.query_vectors.embedding is 'The query''s vector as the service searched with it.';
