-- Contexts on Citus: distribute tenant tables by org_id, replicate the rest.
-- Run once on the coordinator as the migrator, after `contexts migrate` and BEFORE the
-- first org is created (the tables must be empty), with psql -v ON_ERROR_STOP=1.
-- docs/scale.md explains each step and the traps, and says exactly what was and was not
-- run: Citus cannot be installed here, so steps 0, 3, 4 and 7 never ran; the test suite
-- (tests/scale/test_citus_layout.py) runs steps 1, 2 and 5, which are plain PostgreSQL,
-- against the schema. Written for Citus 13 / PostgreSQL 17.

create extension if not exists citus;

-- 0. Settings the schema relies on, for every session of this database:
--    * principal bindings are signed settings made with SET LOCAL (data._bind), which
--      the coordinator forwards to the workers running a transaction's shard queries
--      only with propagate_set_commands = 'local'; a worker then verifies the binding
--      itself (data.current_principal) before row-level security reads any row;
--    * the triggers of tenant tables (BM25 statistics, a document version's org) touch
--      only the same org's colocated shards: safe, but Citus asks to be told.
do $$
begin
    execute format('alter database %I set citus.propagate_set_commands = %L', current_database(), 'local');
    execute format('alter database %I set citus.enable_unsafe_triggers = on', current_database());
end
$$;
set citus.enable_unsafe_triggers = on;  -- this session too: step 4 distributes tables with triggers

begin;

-- 1. Shards, not partitions, separate tenants: one DEFAULT partition per partitioned
--    tenant table, which data._create_tenant_partitions then leaves every org in (a
--    partition per org would become shard_count shards per org, all but one empty).
--    Each shard of it gets every index of its parent: GIN, SimHash bands, and one HNSW
--    index per embedding model, built and searched per shard.
do $$
declare
    t text;
begin
    foreach t in array array['fragments', 'embeddings', 'bm25_blocks'] loop
        execute format('create table data.%I partition of data.%I default', t || '_shared', t);
        execute format('alter table data.%I enable row level security', t || '_shared');
        execute format('alter table data.%I force row level security', t || '_shared');
        execute format('create policy direct_access_denied on data.%I using (false)', t || '_shared');
    end loop;
end
$$;

-- 2. Keys and foreign keys of distributed tables must contain the distribution column
--    (every tenant table has org_id: document_versions since migration 0028).
alter table data.fragments drop constraint fragments_doc_id_doc_version_fkey1;
alter table data.fragment_sources drop constraint fragment_sources_doc_id_doc_version_fkey;
alter table data.document_versions drop constraint document_versions_doc_id_fkey;
alter table data.fragment_links drop constraint fragment_links_doc_id_fkey;
alter table data.fragment_links drop constraint fragment_links_target_doc_id_fkey;
alter table data.fragment_returns drop constraint fragment_returns_trace_id_fkey;
alter table data.usage_below_floor drop constraint usage_below_floor_trace_id_fkey;
alter table data.nudge_deliveries drop constraint nudge_deliveries_nudge_id_fkey;
alter table data.documents drop constraint documents_pkey, add primary key (org_id, doc_id);
alter table data.document_versions drop constraint document_versions_pkey, add primary key (org_id, doc_id, version);
alter table data.fragment_sources drop constraint fragment_sources_pkey,
    add primary key (org_id, doc_id, doc_version, ordinal);
alter table data.fragment_links drop constraint fragment_links_pkey, add primary key (org_id, link_id);
-- A reference made twice is recorded once (data._record_links: on conflict do nothing):
-- the same identity, led by org_id.
drop index data.fragment_links_identity;
create unique index fragment_links_identity on data.fragment_links
    (org_id, fragment_id, doc_id, link_type, target_key, coalesce(target_name, ''), coalesce(target_anchor, ''),
     coalesce(target_repo, ''));
alter table data.pins drop constraint pins_pkey, add primary key (org_id, pin_id);
alter table data.retrieval_traces drop constraint retrieval_traces_pkey, add primary key (org_id, trace_id);
alter table data.usage_below_floor drop constraint usage_below_floor_pkey, add primary key (org_id, trace_id);
alter table data.eval_replays drop constraint eval_replays_pkey, add primary key (org_id, run_id, ordinal);
alter table data.owner_reassignments drop constraint owner_reassignments_pkey, add primary key (org_id, reassignment_id);
alter table data.nudge_outbox drop constraint nudge_outbox_pkey, add primary key (org_id, nudge_id);
alter table data.nudge_deliveries drop constraint nudge_deliveries_pkey, add primary key (org_id, delivery_id);
alter table data.model_replays drop constraint model_replays_pkey, add primary key (org_id, replay_id);
alter table data.usage_pending drop constraint usage_pending_pkey, add primary key (org_id, pending_id);

-- 3. Reference tables: small, read by every policy helper (data.current_principal,
--    data._acl) and by authentication, so each worker must hold them to evaluate
--    row-level security locally. Copied to every node; writes go to all of them.
select create_reference_table('data.orgs');
select create_reference_table('data.repos');
select create_reference_table('data.personas');
select create_reference_table('data.sessions');
select create_reference_table('data.principals');
select create_reference_table('data.grants');
select create_reference_table('data.api_keys');
select create_reference_table('data.binding_keys');
select create_reference_table('data.embedding_namespaces');
select create_reference_table('data.embedding_models');
select create_reference_table('data.eval_runs');
select create_reference_table('data.eval_figures');
select create_reference_table('data.authority_refreshes');
-- Contexts (bundles) and their subscriptions: small (lists of fragment ids), and read by
-- the row-level predicate of a subscriber in another org (data._readable_context_versions),
-- so every node holds them, as it holds grants.
select create_reference_table('data.contexts');
select create_reference_table('data.context_versions');
select create_reference_table('data.context_members');
select create_reference_table('data.context_subscriptions');
select create_reference_table('data.context_rules');

-- 4. Tenant tables, hash-distributed by org_id in one colocation group: every row of an
--    org (documents, fragments, vectors, postings, its BM25 statistics, links, pins,
--    traces) lives in the same shard group on the same worker, so a retrieval for one
--    org is a single-shard (router) query and BM25 statistics stay with their tenant.
select create_distributed_table('data.documents', 'org_id', shard_count => 32);
select create_distributed_table('data.document_versions', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.fragments', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.fragment_sources', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.embeddings', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.bm25_blocks', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.bm25_terms', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.bm25_corpus', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.fragment_links', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.pins', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.ranking_profiles', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.persona_vectors', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.git_syncs', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.retrieval_traces', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.eval_replays', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.fragment_returns', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.owner_reassignments', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.org_webhooks', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.nudge_outbox', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.nudge_deliveries', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.model_replays', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.idempotent_writes', 'org_id', colocate_with => 'data.documents');
-- Citation authority, refreshed per org (service.refresh_authority(org)) on the org's worker.
select create_distributed_table('data.fragment_authority', 'org_id', colocate_with => 'data.documents');
-- The usage roll-ups (ADR 0028) live beside the traces they count.
select create_distributed_table('data.usage_fragments', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.usage_days', 'org_id', colocate_with => 'data.documents');
select create_distributed_table('data.usage_below_floor', 'org_id', colocate_with => 'data.documents');
-- Traces written but not yet counted (migration 0040), beside the traces they list.
select create_distributed_table('data.usage_pending', 'org_id', colocate_with => 'data.documents');

-- 5. Foreign keys again, now with org_id (distributed -> distributed must be colocated
--    and name the distribution column; distributed -> reference is allowed).
alter table data.document_versions add foreign key (org_id, doc_id)
    references data.documents (org_id, doc_id) on delete cascade;
alter table data.fragments add foreign key (org_id, doc_id, doc_version)
    references data.document_versions (org_id, doc_id, version) on delete set null (doc_id, doc_version);
alter table data.fragment_sources add foreign key (org_id, doc_id, doc_version)
    references data.document_versions (org_id, doc_id, version) on delete cascade;
alter table data.fragment_links add foreign key (org_id, doc_id)
    references data.documents (org_id, doc_id) on delete cascade;
alter table data.fragment_links add foreign key (org_id, target_doc_id)
    references data.documents (org_id, doc_id) on delete set null (target_doc_id);
alter table data.fragment_returns add foreign key (org_id, trace_id)
    references data.retrieval_traces (org_id, trace_id) on delete cascade;
alter table data.usage_below_floor add foreign key (org_id, trace_id)
    references data.retrieval_traces (org_id, trace_id) on delete cascade;
alter table data.nudge_deliveries add foreign key (org_id, nudge_id)
    references data.nudge_outbox (org_id, nudge_id) on delete cascade;

commit;

-- 6. Policies, functions and grants on every node: Citus propagates CREATE POLICY and
--    GRANT on distributed tables to their shards, and functions created on the
--    coordinator to the workers. Re-running `contexts migrate` after this script
--    re-applies sql/functions, sql/policies and sql/grants through the coordinator, so
--    the workers get them too; check with:
--      select run_command_on_workers($$select count(*) from pg_policy$$);
--      select run_command_on_workers($$select count(*) from pg_proc where pronamespace = 'data'::regnamespace$$);
-- 7. The hot path runs where its tenant lives: delegate the retrieval call to the worker
--    holding the org's shard group (its first argument is the org).
--      select create_distributed_function(
--          'api.retrieve_candidates(text,text,jsonb,text,text,text,integer,integer,integer,jsonb,text,text[],timestamp with time zone,timestamp with time zone,text,timestamp with time zone,boolean)',
--          '$1', colocate_with => 'data.documents');
--    (check the exact signature with \df api.retrieve_candidates; a delegated function's
--    own queries then run on that worker, whose shards of data.fragment_authority hold
--    the org's scores. Not run: see docs/scale.md.)
