-- Index sizes per org for GET /metrics (app/api/metrics.py): what a capacity planner
-- watches. Only the service may call it, and the service answers /metrics only with the
-- metrics token or to loopback clients: the sizes of every org are the operator's view,
-- not a tenant's. Counts come from the BM25 statistics and the planner's estimates, and
-- bytes from the catalog, so a scrape reads no tenant row and stays cheap at any scale.
create or replace function service.metrics_org_sizes()
returns table (
    org_id text, active_fragments bigint, embeddings_estimated bigint, hnsw_bytes bigint,
    bm25_blocks_estimated bigint, bm25_bytes bigint, fragment_bytes bigint)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    with parts as (
        select o.org_id,
               to_regclass(format('data.%I', 'fragments_' || o.org_no)) as fragments,
               to_regclass(format('data.%I', 'embeddings_' || o.org_no)) as embeddings,
               to_regclass(format('data.%I', 'bm25_blocks_' || o.org_no)) as postings
        from data.orgs o
    )
    select p.org_id,
           coalesce((select sum(c.fragment_count) from data.bm25_corpus c where c.org_id = p.org_id), 0)::bigint,
           coalesce((select greatest(c.reltuples, 0) from pg_class c where c.oid = p.embeddings), 0)::bigint,
           coalesce((select sum(pg_relation_size(i.indexrelid))
                     from pg_index i join pg_class ic on ic.oid = i.indexrelid join pg_am am on am.oid = ic.relam
                     where i.indrelid = p.embeddings and am.amname = 'hnsw'), 0)::bigint,
           coalesce((select greatest(c.reltuples, 0) from pg_class c where c.oid = p.postings), 0)::bigint,
           coalesce(pg_total_relation_size(p.postings), 0)::bigint,
           coalesce(pg_total_relation_size(p.fragments), 0)::bigint
    from parts p
    order by p.org_id
$$;
comment on function service.metrics_org_sizes() is
    'Per-org fragment counts and index sizes for GET /metrics (the service only).';
