-- Privileges of the Contexts roles. Re-applied on every migrate (after functions and
-- policies). Nothing is granted to PUBLIC; tables are read by the roles below through
-- row-level security, and written only through api functions (security definer, each
-- checking the bound principal's write grants).
--   contexts_service : the API service (HTTP, MCP) and the CLI when it acts for a principal
--   contexts_analyst : read-only SQL, filtered by the principal mapped to the login
--   contexts_auditor : reads retrieval traces (its principal needs an audit grant)
-- Retrieval traces are read through the redacting view api.retrieval_traces (and
-- api.get_trace); no caller role holds any privilege on data.retrieval_traces.
-- The owner/migrator is the role that runs `contexts migrate` (a superuser).

revoke all on schema data, api from public;
revoke all on all tables in schema data, api from public;
revoke all on all sequences in schema data from public;
revoke execute on all functions in schema data, api from public;

grant usage on schema data, api, extensions to contexts_service, contexts_analyst, contexts_auditor;

-- Reads: the parents only (a partition denies direct access).
do $$
declare
    t record;
begin
    for t in select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
             where n.nspname = 'data' and c.relkind in ('r', 'p') and not c.relispartition
               and c.relname not in ('principal_bindings', 'api_keys', 'retrieval_traces') loop
        execute format('revoke all on data.%I from contexts_service, contexts_analyst, contexts_auditor', t.relname);
        execute format('grant select on data.%I to contexts_service, contexts_analyst', t.relname);
    end loop;
end
$$;
revoke all on data.api_keys from contexts_service, contexts_analyst, contexts_auditor;
grant select (key_id, org_id, principal_id, label, created_at, last_used_at, revoked_at)
    on data.api_keys to contexts_service, contexts_analyst;
revoke all on data.retrieval_traces from contexts_service, contexts_analyst, contexts_auditor;
grant select on data.orgs, data.principals, data.grants to contexts_auditor;
grant select on api.retrieval_traces to contexts_service, contexts_analyst, contexts_auditor;

-- Policy helpers: every role evaluates them (they only ever describe the caller).
grant execute on function data.current_principal(), data.acl_org(), data.acl_principal(),
    data._acl(text, boolean), data.acl_org_wide(), data.acl_repos(), data.acl_personas(),
    data.acl_sessions(), data.acl_audit(), data._bypasses_rls(), data._in_scope(text, text, text, text, text, text),
    data._require_org(text), data._require_read(text, text, text, text), data._principal_or_raise()
    to contexts_service, contexts_analyst, contexts_auditor;
-- Redaction helpers of api.retrieval_traces (its callers evaluate them).
grant execute on function data._readable_fragments(text, bigint[]), data._redact_candidates(text, jsonb),
    data._redact_request(text, text, jsonb, boolean, text[], text[], text[])
    to contexts_service, contexts_analyst, contexts_auditor;
-- BM25 (sql/functions/20_bm25.sql) and fusion helpers (45_fusion.sql) of the searches.
grant execute on function data._bm25_scores(text, text, text, text, text, bigint[], float8, float8),
    data._check_fusion(jsonb),
    data._fuse(text, text, text, text, text, jsonb, bigint[], float8[], bigint[], float8[], boolean, boolean, jsonb, int)
    to contexts_service, contexts_analyst;

-- Reading and searching (invoker: row-level security applies).
grant execute on function api.whoami(), api.authenticate(text),
    api.lexical_tsvector(text), api.lexical_document(text, text),
    api.search_lexical(text, text, int, text, text, text, float8, float8),
    api.search_dense(text, jsonb, int, text, text, text),
    api.retrieve_candidates(text, text, jsonb, text, text, text, int, int, int, jsonb),
    api.score_lexical(text, text, bigint[], text, text, text, float8, float8),
    api.score_dense(text, jsonb, bigint[]),
    api.get_fragment(bigint), api.get_trace(uuid)
    to contexts_service, contexts_analyst;
grant execute on function api.whoami(), api.authenticate(text), api.get_trace(uuid) to contexts_auditor;

-- The service also writes (each function checks the bound principal's write grants).
grant execute on function api.active_model(text, text, int),
    api.begin_document(text, text, text, text, text, text, text, text, text, text, timestamptz, jsonb),
    api.match_fragments(text, text, text, text, text[], text[], bigint[]),
    api.add_fragments(bigint, int, jsonb), api.open_session(text), api.authorize_write(text, text, text, text),
    api.record_trace(text, text, jsonb, jsonb, jsonb, float8)
    to contexts_service;
-- Administration (create_org, principals, grants, keys, bind_principal, purge) is left
-- to the owner/migrator: no role is granted it.
