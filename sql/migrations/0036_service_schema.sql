-- 0036_service_schema: the functions no analyst or auditor may execute (the service's
-- writes, ingest, authentication, trace writing, administration, internal helpers) move
-- out of schema api into schema service, on which only contexts_service holds USAGE
-- (docs/adr/0010, "Two schemas"). Schema api keeps what an analyst at psql may use, so
-- `\df api.*` lists only that. The re-applied sql/functions files create these
-- functions in schema service; this moves the copies an existing database holds (with
-- their owner, grants and comments), so that no stale one stays in api and an upgraded
-- database equals a fresh one. (A fresh database has none yet: the loop finds nothing.)
create schema if not exists service;
comment on schema service is 'Functions of the service and the migrator: writes, ingest, authentication, trace writing, administration and their helpers. No analyst or auditor holds USAGE on it (sql/grants).';
revoke all on schema service from public;

do $$
declare
    f regprocedure;
begin
    for f in
        select p.oid::regprocedure from pg_proc p
        where p.pronamespace = 'api'::regnamespace and p.proname in (
        'authenticate', 'active_model', 'begin_document', 'unchanged_documents', 'match_fragments',
        'add_fragments', 'open_session', 'authorize_write', 'record_trace', 'delete_document',
        'pin_add', 'pin_remove', 'ranking_profile_set', 'ranking_profile_delete',
        'persona_vectors_set', 'sync_record', 'context_create', 'context_add_version',
        'context_retire', 'context_subscribe', 'context_unsubscribe', 'context_candidates',
        'secondary_models', 'serving_models', 'previous_models', 'rule_create', 'rule_delete',
        'idempotent_response', 'idempotent_record', 'metrics_org_sizes', 'refresh_authority',
        'owners_unnamed', 'owners_resolve', 'owners_reassign', 'owner_settings_set', 'webhook_set',
        'webhook_get', 'webhook_delete', 'nudges_enqueue', 'nudge_claim', 'nudge_attempted',
        'add_model_vectors', 'add_persona_vector', 'begin_model_upgrade', 'bind_principal',
        'create_analyst', 'create_api_key', 'create_login', 'create_org', 'create_principal',
        'disable_principal', 'drop_model_generation', 'drop_retired_models', 'ensure_scope',
        'grant_scope', 'list_analysts', 'list_api_keys', 'list_grants', 'model_backlog',
        'persona_backlog', 'policy_bypass', 'policy_report', 'promote_model', 'purge_expired_sessions',
        'reading_backlog', 'reading_backlog_size', 'record_eval_run', 'record_model_replay',
        'register_embedding_model', 'revoke_analyst', 'revoke_api_key', 'revoke_scope',
        'set_login_password', 'set_readings')
        order by p.oid::regprocedure::text
    loop
        execute format('alter routine %s set schema service', f);
    end loop;
end
$$;
