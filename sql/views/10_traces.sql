-- Views callers read instead of tables. Re-applied on every migrate (after functions,
-- before policies and grants). A view runs with its owner's table privileges (the
-- migrator, who bypasses row-level security), so each one filters its rows itself;
-- security_barrier keeps a caller's own conditions from seeing rows it filters out.

-- api.retrieval_traces: every retrieval trace the caller may see, as it may see it now
-- (sql/functions/50_traces.sql has the rule). The caller is the principal of api.whoami():
-- its own traces, and all of its org's with an audit grant. Nobody bound, nothing shown
-- (a DBA reads data.retrieval_traces itself, or binds a principal to see what it sees).
create or replace view api.retrieval_traces with (security_barrier) as
select t.trace_id, t.org_id, t.principal_id, r.query, r.request, t.pipeline,
       data._redact_candidates(t.org_id, t.candidates) as candidates,
       t.duration_ms, t.created_at, r.redacted,
       data._redact_candidates(t.org_id, coalesce(t.left_out, '[]')) as left_out
from api.whoami() me
join data.retrieval_traces t
  on t.org_id = me.org_id and (t.principal_id = me.principal_id or me.audit)
cross join lateral data._redact_request(t.org_id, t.query, t.request,
                                        me.org_wide, me.repos, me.personas, me.sessions) r;
comment on view api.retrieval_traces is 'Retrieval traces the caller may read (its own; its org''s with an audit grant), each redacted to what its grants let it read now: see redacted, and candidates[].redacted.';
comment on column api.retrieval_traces.query is 'The query; null when withheld (then listed in redacted).';
comment on column api.retrieval_traces.request is 'The request body; a scope id the caller holds no grant on is null and listed in redacted, with the query.';
comment on column api.retrieval_traces.candidates is 'Each candidate''s ranks, scores and fate; one whose fragment the caller may not read has "redacted": true and nothing that identifies it.';
comment on column api.retrieval_traces.left_out is 'What validity windows kept out that would otherwise have ranked, and the pins the retrieval could not serve, each with its reason and the documents superseding it; redacted like the candidates.';
comment on column api.retrieval_traces.redacted is 'Fields withheld from this caller (query, request.query, request.scope.session_id, ...); empty when none.';

-- api.query_vectors: the query vectors of the traces in api.retrieval_traces whose query
-- the caller may read there (a vector stands for its query text, so it is withheld
-- exactly when the query is), one row per trace and model. The rows and the redaction
-- are api.retrieval_traces' own (its org and own-or-audit rule, data._redact_request
-- with the caller's grants); the table supplies only the vectors of those rows. Written
-- on the helpers rather than on the view so that a filter on the query text (texteq is
-- leakproof) reaches the table scan before any redaction runs: api.retrieve looks a
-- query up this way.
create or replace view api.query_vectors with (security_barrier) as
select t.trace_id, t.org_id, t.principal_id, t.created_at, t.query, v.model, v.embedding
from api.whoami() me
join data.retrieval_traces t
  on t.org_id = me.org_id and (t.principal_id = me.principal_id or me.audit)
cross join lateral data._redact_request(t.org_id, t.query, t.request,
                                        me.org_wide, me.repos, me.personas, me.sessions) r
cross join lateral unnest(t.query_models, t.query_vectors) as v(model, embedding)
where r.query is not null;
comment on view api.query_vectors is 'Query vectors of the traces whose query the caller may read (api.retrieval_traces), one row per trace and embedding model; api.retrieve uses the newest of a query text.';
comment on column api.query_vectors.model is 'The embedding model (data.embedding_models.name) that computed the vector.';
comment on column api.query_vectors.embedding is 'The query''s vector as the service searched with it.';
