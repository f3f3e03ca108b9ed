-- Run by the `citus-init` service of compose.yaml's `citus` profile, on the coordinator:
-- the coordinator's own address (so workers can reach it for metadata) and both workers.
select citus_set_coordinator_host('citus-coordinator', 5432);
select citus_add_node('citus-worker-1', 5432);
select citus_add_node('citus-worker-2', 5432);
-- Every node needs pgvector before a distributed table with a vector column exists.
select run_command_on_workers('create schema if not exists extensions');
select run_command_on_workers('create extension if not exists vector schema extensions');
