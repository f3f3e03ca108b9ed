-- 0007_query_vectors: traces keep their query vectors, so a query the service has
-- embedded once can be retrieved again from SQL (api.retrieve).

-- Query vectors: one per distinct embedding model (namespaces sharing a model share
-- the vector), keyed by the model's name as data.embedding_models records it. Null
-- when the retrieval embedded nothing (k_dense = 0).
alter table data.retrieval_traces
    add column query_models text[],
    add column query_vectors extensions.vector[],
    add constraint retrieval_traces_query_vectors_match
        check (cardinality(query_models) = cardinality(query_vectors));
comment on column data.retrieval_traces.query_models is 'Embedding model of each query vector (data.embedding_models.name).';
comment on column data.retrieval_traces.query_vectors is 'The query''s vector for each model of query_models, as the service computed it.';

-- api.record_trace gains p_query_vectors. A signature change cannot be made by
-- `create or replace`: the previous signature is dropped here and
-- sql/functions/50_traces.sql creates the new one.
drop function if exists api.record_trace(text, text, jsonb, jsonb, jsonb, float8);
