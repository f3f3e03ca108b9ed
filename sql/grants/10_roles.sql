-- Privileges of the Contexts roles. Re-applied on every migrate (after functions and
-- policies). Nothing is granted to PUBLIC; tables are read by the roles below through
-- row-level security, and written only through api functions (security definer, each
-- checking the bound principal's write grants).
--   contexts_service : the API service (HTTP, MCP) and the CLI when it acts for a principal
--   contexts_analyst : read-only SQL, filtered by the principal mapped to the login
--   contexts_auditor : reads retrieval traces (its principal needs an audit grant)
-- Retrieval traces are read through the redacting view api.retrieval_traces (and
-- api.get_trace), replay diffs through api.eval_replay_diffs; no caller role holds any
-- privilege on data.retrieval_traces or data.eval_replays.
-- The owner/migrator is the role that runs `contexts migrate` (a superuser).
--
-- Tables: every parent table of schema data is readable by the service and analysts,
-- but for the few named below (read from the catalog: a new table needs no line here).
-- Views: a rule like the functions' one (below) names, for each set of roles, the views
-- of schema api they may select; a view it does not name is the owner's alone.
-- Functions: the rule at the end names, for each set of roles, the functions (schema
-- and name, never a signature) they may execute. A name covers every overload, so a
-- signature change touches only the function's file and its migration. Each migrate
-- makes the catalog match the rule for every function of schemas api, service and data: a role
-- the rule names gets execute, a caller role it does not name loses it (a grant taken
-- out of the rule, or made by hand, is revoked). A function the rule does not name is
-- the owner's alone: administration and internal helpers need no line. A name that
-- matches no function, or a role that is not a caller role, fails the migrate.

revoke all on schema data, api, service from public;
revoke all on all tables in schema data, api from public;
revoke all on all sequences in schema data from public;
revoke execute on all functions in schema data, api, service from public;

grant usage on schema data, api, extensions to contexts_service, contexts_analyst, contexts_auditor;
-- Schema service holds what only the service (and the owner/migrator) runs: analysts and
-- auditors get no USAGE on it, so `\df api.*` at psql lists only what they may use.
revoke all on schema service from contexts_analyst, contexts_auditor;
grant usage on schema service to contexts_service;

-- Temporary tables: no caller role makes any, so nobody but the database's owner (and
-- superusers) may (PostgreSQL grants TEMP on a new database to PUBLIC). Only the owner
-- or a superuser can revoke it; a migrator that is neither leaves it to the DBA
-- (docs/dba.md, "Other databases and temporary tables").
do $$
begin
    if exists (select 1 from pg_database d where d.datname = current_database()
               and (pg_has_role(current_user, d.datdba, 'member')
                    or (select r.rolsuper from pg_roles r where r.rolname = current_user))) then
        execute format('revoke temporary on database %I from public', current_database());
    end if;
end
$$;

-- Advisory locks and large objects: PostgreSQL lets every role take any advisory lock
-- and create large objects. The product serialises each org's writes on an advisory lock
-- whose key anyone can compute (hashtextextended('contexts.ingest:' || org, 0)): an
-- analyst holding it stopped every write of another org, and one holding
-- contexts.authority or contexts.usage_fold stopped refreshes and roll-ups for all. Only
-- the functions of this schema take these locks (security definer: as the owner), and
-- nothing here uses large objects, so PUBLIC loses both in this database. Only a
-- superuser may revoke from PUBLIC what pg_catalog's functions grant it: a migrator that
-- is none says so and changes nothing (docs/dba.md, "Advisory locks and large objects").
do $$
declare
    f record;
begin
    if not (select r.rolsuper from pg_roles r where r.rolname = current_user) then
        raise warning 'contexts migrate: not a superuser, so every role may still take advisory locks and create large objects in this database; a superuser should run sql/grants/10_roles.sql (docs/dba.md)';
        return;
    end if;
    for f in
        select p.oid::regprocedure as fn
        from pg_proc p
        where p.pronamespace = 'pg_catalog'::regnamespace
          and (p.proname like 'pg%advisory%'
               or p.proname in ('lo_creat', 'lo_create', 'lo_from_bytea', 'lo_import', 'lo_open', 'lo_put',
                                'lowrite', 'lo_truncate', 'lo_truncate64', 'lo_unlink'))
    loop
        execute format('revoke execute on function %s from public', f.fn);
    end loop;
end
$$;

-- Reads: the parents only (a partition denies direct access).
do $$
declare
    t record;
begin
    for t in select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
             where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition
               and c.relname not in ('fragment_authority', 'binding_keys', 'api_keys', 'retrieval_traces',
                                     'eval_replays', 'fragment_returns', 'org_webhooks', 'usage_fragments',
                                     'usage_days', 'usage_below_floor', 'usage_pending') loop
        execute format('revoke all on data.%I from contexts_service, contexts_analyst, contexts_auditor', t.relname);
        execute format('grant select on data.%I to contexts_service, contexts_analyst', t.relname);
    end loop;
end
$$;
revoke all on data.api_keys from contexts_service, contexts_analyst, contexts_auditor;
grant select (key_id, org_id, principal_id, label, created_at, last_used_at, revoked_at)
    on data.api_keys to contexts_service, contexts_analyst;
revoke all on data.retrieval_traces, data.eval_replays, data.binding_keys, data.fragment_authority
    from contexts_service, contexts_analyst, contexts_auditor;
-- Retrieval counts behind staleness and the org's webhook secret: definer functions only.
revoke all on data.fragment_returns, data.org_webhooks from contexts_service, contexts_analyst, contexts_auditor;
-- Usage roll-ups: read through the usage views (sql/views/20_usage.sql) only.
revoke all on data.usage_fragments, data.usage_days, data.usage_below_floor, data.usage_pending
    from contexts_service, contexts_analyst, contexts_auditor;
grant select on data.orgs, data.principals, data.grants to contexts_auditor;

-- Views: who may select which view of schema api, by name. Each migrate makes the catalog
-- match: a role the rule names gets select, a caller role it does not name loses every
-- privilege on the view; a name that matches no view fails the migrate (42P01).
do $$
declare
    callers constant text[] := array['contexts_service', 'contexts_analyst', 'contexts_auditor'];
    v record;
    grant_to text[];
    revoke_from text[];
begin
    for v in
        with rule (roles, views) as (values
            -- Traces, redacted per reader (sql/views/10_traces.sql).
            (array['contexts_service', 'contexts_analyst', 'contexts_auditor'], array['api.retrieval_traces']),
            -- Read only api.retrieval_traces and eval history, or redact as it does: what an
            -- auditor (who reads no data table) may read too.
            (array['contexts_analyst', 'contexts_auditor'], array[
                'api.query_vectors', 'api.retrieval_summaries', 'api.retrievals_per_day',
                'api.retrievals_below_floor', 'api.fragment_retrievals',
                'api.eval_runs', 'api.eval_figures', 'api.eval_replay_diffs']),
            -- Read data tables under row-level security as well (security invoker).
            (array['contexts_analyst'], array[
                'api.fragment_authority', 'api.document_retrievals', 'api.fragments_never_retrieved', 'api.fragments_by_owner',
                'api.near_duplicate_clusters', 'api.near_duplicate_pairs', 'api.document_version_counts'])
        ), wanted (name, roles) as (
            select vw, array_agg(distinct role)
            from rule, unnest(rule.views) vw, unnest(rule.roles) role
            group by vw
        ), catalog (rel, name, held, anything) as (
            select c.oid::regclass, n.nspname || '.' || c.relname,
                   array(select r.rolname::text from aclexplode(c.relacl) a join pg_roles r on r.oid = a.grantee
                         where a.privilege_type = 'SELECT'),
                   array(select distinct r.rolname::text from aclexplode(c.relacl) a
                         join pg_roles r on r.oid = a.grantee where a.privilege_type <> 'SELECT')
            from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'api' and c.relkind in ('v', 'm')
        )
        select c.rel, coalesce(c.name, w.name) as name, coalesce(w.roles, '{}') as roles,
               coalesce(c.held, '{}') as held, coalesce(c.anything, '{}') as anything
        from catalog c full join wanted w on w.name = c.name
    loop
        if v.rel is null then
            raise exception 'sql/grants: the view rule names %, which is no view of schema api', v.name
                using errcode = '42P01';
        end if;
        if not v.roles <@ callers then
            raise exception 'sql/grants: the view rule names a role that is not a caller role: %', v.roles
                using errcode = '22023';
        end if;
        grant_to := array(select r from unnest(callers) with ordinality c(r, i)
                          where r = any(v.roles) and not r = any(v.held) order by i);
        revoke_from := array(select r from unnest(callers) with ordinality c(r, i)
                             where (r = any(v.held) and not r = any(v.roles)) or r = any(v.anything) order by i);
        if cardinality(revoke_from) > 0 then
            execute format('revoke all on %s from %s', v.rel,
                           (select string_agg(quote_ident(r), ', ' order by i) from unnest(revoke_from) with ordinality g(r, i)));
            -- A revoke of everything takes select too: grant it again where the rule wants it.
            grant_to := array(select r from unnest(callers) with ordinality c(r, i)
                              where r = any(v.roles) and (r = any(grant_to) or r = any(revoke_from)) order by i);
        end if;
        if cardinality(grant_to) > 0 then
            execute format('grant select on %s to %s', v.rel,
                           (select string_agg(quote_ident(r), ', ' order by i) from unnest(grant_to) with ordinality g(r, i)));
        end if;
    end loop;
end
$$;

-- Functions: who may execute what, by name (see the header). Each row gives a set of
-- roles and the functions they may execute.
do $$
declare
    callers constant text[] := array['contexts_service', 'contexts_analyst', 'contexts_auditor'];
    f record;
    grant_to text[];
    revoke_from text[];
begin
    for f in
        with rule (roles, functions) as (values
            -- Policy helpers: every role evaluates them (they only ever describe the caller).
            (array['contexts_service', 'contexts_analyst', 'contexts_auditor'], array[
                'data.current_principal', 'data.acl_org', 'data.acl_principal', 'data._acl', 'data.acl_org_wide',
                'data.acl_repos', 'data.acl_personas', 'data.acl_sessions', 'data.acl_audit', 'data._bypasses_rls',
                'data._in_scope', 'data._require_org', 'data._require_read', 'data._principal_or_raise',
                'data._require_scope']),
            -- Redaction helpers of api.retrieval_traces (its callers evaluate them).
            (array['contexts_service', 'contexts_analyst', 'contexts_auditor'], array[
                'data._readable_fragments', 'data._redact_candidates', 'data._redact_pipeline', 'data._redact_request',
                'data._trace']),
            -- Read by the usage views (security invoker) of analysts and auditors.
            (array['contexts_analyst', 'contexts_auditor'], array[
                'data._json_number', 'data._usage_latency', 'data._usage_p95', 'data._usage_concat',
                'data._usage_summary', 'data._usage_trace', 'data._usage_candidates']),
            -- Who am I, and traces (invoker: row-level security applies).
            (array['contexts_service', 'contexts_analyst', 'contexts_auditor'], array['api.whoami', 'api.get_trace']),
            -- Binding the principal of an API key: the service only. A login acts as the
            -- principal mapped to it; one holding another's key must not become it in SQL,
            -- nor try keys there, out of reach of the service's throttle (app/api/throttle.py).
            (array['contexts_service'], array['service.authenticate']),
            -- Who may read a fragment, and why (57_access_report.sql): auditors (it checks the
            -- audit grant) and the DBA.
            (array['contexts_auditor'], array['api.fragment_readers', 'data._fragment_readers']),
            -- BM25 (20_bm25.sql, 21_bm25_top.sql), dense (40_retrieve.sql) and fusion (45_fusion.sql) helpers of the searches.
            (array['contexts_service', 'contexts_analyst'], array[
                'data._bm25_statistics', 'data._bm25_scores', 'data._bm25_top', 'data._bm25_kept', 'data._check_fusion', 'data._fuse', 'data._query_vectors', 'data._dense_hits',
                'data._ranking_profile', 'data._authority', 'data._serving_models']),
            -- Model generations and their coverage (31_model_generations.sql): org-wide principals.
            (array['contexts_service', 'contexts_analyst'], array['api.model_generations']),
            -- Reading and searching (invoker: row-level security applies).
            (array['contexts_service', 'contexts_analyst'], array[
                'api.lexical_tsvector', 'api.lexical_query_terms', 'api.lexical_document', 'api.search_lexical', 'api.search_dense',
                'api.retrieve_candidates', 'api.score_lexical', 'api.score_dense', 'api.get_fragment',
                'api.list_documents', 'api.get_document', 'api.version_metadata', 'api.pins_list',
                'api.ranking_profile', 'api.ranking_profiles', 'api.sync_state', 'api.sync_documents',
                'api.fragment_links', 'api.linked_fragments', 'api.contexts_list', 'api.context_resolve',
                'api.context_versions', 'api.context_subscriptions', 'api.context_get', 'api.rules_list',
                'api.rule_matches', 'api.validity_left_out']),
            -- A fragment's references to what the caller may not read, shown unresolved by
            -- api.fragment_links (49_links.sql).
            (array['contexts_service', 'contexts_analyst'], array['data._links_to_hidden']),
            -- Validity (48_validity.sql): what superseded a fragment, for the pin listing and
            -- api.validity_left_out (invoker: row-level security applies).
            (array['contexts_service', 'contexts_analyst'], array['data._superseders']),
            -- Contexts (44_contexts.sql): policy helper, and what the listing and resolution read.
            (array['contexts_service', 'contexts_analyst'], array[
                'data._readable_context_versions', 'data._context_versions', 'data._context_rows',
                'data._resolve_context_refs', 'data._subscription_state', 'data._principal_of_org']),
            -- Workflow rules (46_workflow_rules.sql): the listing's row helper.
            (array['contexts_service', 'contexts_analyst'], array['data._rule_rows', 'data._glob_regex']),
            -- Retrieval from SQL (sql/functions/55_sql_retrieval.sql): analysts at psql.
            (array['contexts_analyst'], array['api.retrieve', 'data._stored_query_vector']),
            -- The service also writes (each function checks the bound principal's write grants).
            (array['contexts_service'], array[
                'service.active_model', 'service.begin_document', 'service.begin_documents', 'service.unchanged_documents', 'service.match_fragments',
                'service.add_fragments', 'service.add_documents', 'service.open_session', 'service.authorize_write', 'service.record_trace',
                'service.delete_document', 'service.pin_add', 'service.pin_remove', 'service.ranking_profile_set',
                'service.ranking_profile_delete', 'service.persona_vectors_set', 'service.sync_record', 'service.context_create',
                'service.context_add_version', 'service.context_retire', 'service.context_subscribe', 'service.context_unsubscribe',
                'service.context_accept',
                'service.context_candidates', 'service.secondary_models', 'service.serving_models', 'service.previous_models',
                'service.rule_create', 'service.rule_delete', 'service.idempotent_response', 'service.idempotent_record']),
            -- Index sizes of every org for GET /metrics (sql/functions/70_metrics.sql).
            (array['contexts_service'], array['service.metrics_org_sizes']),
            -- Citation authority, refreshed after ingestion (sql/functions/47_authority.sql).
            (array['contexts_service'], array['service.refresh_authority']),
            -- Usage roll-ups folded after the answer, by the service's folder (51_usage.sql).
            (array['contexts_service'], array['service.fold_usage']),
            -- Owners and staleness (sql/functions/56_owners.sql): reading (invoker, and the
            -- definer helper that keeps staleness to what the caller may read).
            (array['contexts_service', 'contexts_analyst'], array[
                'api.stale_fragments', 'data._stale_readable', 'api.owner_settings', 'api.codeowners_file']),
            -- ... writing (each checks the bound principal's write grants).
            (array['contexts_service'], array[
                'service.owners_unnamed', 'service.owners_resolve', 'service.owners_reassign', 'service.owner_settings_set',
                'service.webhook_set', 'service.webhook_get', 'service.webhook_delete']),
            -- ... and the nudge delivery worker the service runs in the background: it
            -- reads each org's webhook secret to sign, so no other caller role may.
            (array['contexts_service'], array['service.nudges_enqueue', 'service.nudge_claim', 'service.nudge_attempted'])
            -- Administration (create_org, principals, grants, keys, bind_principal, purge) is
            -- left to the owner/migrator: it is named nowhere above.
        ), wanted (name, roles) as (
            select fn, array_agg(distinct role)
            from rule, unnest(rule.functions) fn, unnest(rule.roles) role
            group by fn
        ), catalog (fn, name, held) as (
            select p.oid::regprocedure, n.nspname || '.' || p.proname,
                   array(select r.rolname::text from aclexplode(p.proacl) a join pg_roles r on r.oid = a.grantee
                         where a.privilege_type = 'EXECUTE')
            from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('api', 'service', 'data')
        )
        select c.fn, coalesce(c.name, w.name) as name, coalesce(w.roles, '{}') as roles, coalesce(c.held, '{}') as held
        from catalog c full join wanted w on w.name = c.name
    loop
        if f.fn is null then
            raise exception 'sql/grants: the function rule names %, which is no function of schema api, service or data', f.name
                using errcode = '42883';
        end if;
        if not f.roles <@ callers then
            raise exception 'sql/grants: the function rule names a role that is not a caller role: %', f.roles
                using errcode = '22023';
        end if;
        -- In the order of `callers` (the order of the ACL, hence of pg_dump's GRANT lines).
        grant_to := array(select r from unnest(callers) with ordinality c(r, i)
                          where r = any(f.roles) and not r = any(f.held) order by i);
        revoke_from := array(select r from unnest(callers) with ordinality c(r, i)
                             where r = any(f.held) and not r = any(f.roles) order by i);
        if cardinality(grant_to) > 0 then
            execute format('grant execute on routine %s to %s', f.fn,
                           (select string_agg(quote_ident(r), ', ' order by i) from unnest(grant_to) with ordinality g(r, i)));
        end if;
        if cardinality(revoke_from) > 0 then
            execute format('revoke execute on routine %s from %s', f.fn,
                           (select string_agg(quote_ident(r), ', ' order by i) from unnest(revoke_from) with ordinality g(r, i)));
        end if;
    end loop;
end
$$;
