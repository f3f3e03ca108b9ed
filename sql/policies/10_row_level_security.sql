-- Row-level security: which rows of tenant data the current principal may read.
-- Re-applied on every migrate. Every data.acl_* call sits in a scalar subquery, so it
-- is evaluated once per statement (an InitPlan) and the comparisons left per row are
-- plain leakproof `=` and `= any`, which keep the indexes usable. Superusers and roles
-- with BYPASSRLS are not filtered; the service and analyst roles are neither.
--
-- A row labelled with scopes is visible when the principal is of its org and holds:
--   repo label    -> an org grant or a grant on that repo,
--   persona label -> an org grant or a grant on that persona,
--   session label -> a grant on that session, while the session has not expired;
-- unlabelled (org-wide) rows are visible to every principal of the org.

do $$
declare
    t text;
    -- The scope rule on one set of labels: %1$s prefixes their column names (a row's
    -- own labels, or the labels a link's target carries). Written once, here.
    rule constant text := $p$
        (%1$srepo_id is null or (select data.acl_org_wide()) or %1$srepo_id = any ((select data.acl_repos())::text[]))
        and (%1$spersona_id is null or (select data.acl_org_wide())
             or %1$spersona_id = any ((select data.acl_personas())::text[]))
        and (%1$ssession_id is null or %1$ssession_id = any ((select data.acl_sessions())::text[]))
    $p$;
    labelled constant text := 'org_id = (select data.acl_org()) and ' || format(rule, '');
begin
    foreach t in array array['documents', 'fragments', 'embeddings', 'bm25_blocks', 'bm25_terms', 'bm25_corpus', 'pins'] loop
        execute format('drop policy if exists scope_read on data.%I', t);
        execute format('create policy scope_read on data.%I for select using (%s)', t, labelled);
    end loop;
    -- A reference: visible with its citing fragment, and, once resolved, with the
    -- fragment it cites (the same rule on the target's labels), so no row names a
    -- fragment, or says one exists, to a reader who may not read it.
    drop policy if exists scope_read on data.fragment_links;
    execute format('create policy scope_read on data.fragment_links for select using (%s and %s)',
                   labelled, format(rule, 'target_'));
end
$$;

-- A document version, a source pointer: visible with its document. Written as EXISTS,
-- so the planner chooses per statement between probing the documents' primary key for
-- each row (a retrieval reads a few hundred sources) and hashing every document the
-- principal may read (a scan of the whole table); `(org_id, doc_id) in (...)` always
-- hashed them all: 3 of the 9 ms of citing 200 candidates in an org of 5,183 documents,
-- growing with the org.
drop policy if exists scope_read on data.document_versions;
create policy scope_read on data.document_versions for select
    using (org_id = (select data.acl_org())
           and exists (select 1 from data.documents d
                       where d.org_id = document_versions.org_id and d.doc_id = document_versions.doc_id));

drop policy if exists scope_read on data.fragment_sources;
create policy scope_read on data.fragment_sources for select
    using (org_id = (select data.acl_org())
           and exists (select 1 from data.documents d
                       where d.org_id = fragment_sources.org_id and d.doc_id = fragment_sources.doc_id));

-- The org, its repos and personas: visible to its principals. Sessions: to those granted.
drop policy if exists member_read on data.orgs;
create policy member_read on data.orgs for select using (org_id = (select data.acl_org()));
drop policy if exists member_read on data.repos;
create policy member_read on data.repos for select using (org_id = (select data.acl_org()));
drop policy if exists member_read on data.personas;
create policy member_read on data.personas for select using (org_id = (select data.acl_org()));
drop policy if exists granted_read on data.sessions;
create policy granted_read on data.sessions for select
    using (org_id = (select data.acl_org()) and session_id = any ((select data.acl_sessions())::text[]));

-- A principal sees itself, its own grants and its own keys (the key hash column is
-- not granted to any role; see sql/grants).
drop policy if exists self_read on data.principals;
create policy self_read on data.principals for select
    using (org_id = (select data.acl_org()) and principal_id = (select data.acl_principal()));
drop policy if exists self_read on data.grants;
create policy self_read on data.grants for select
    using (org_id = (select data.acl_org()) and principal_id = (select data.acl_principal()));
drop policy if exists self_read on data.api_keys;
create policy self_read on data.api_keys for select
    using (org_id = (select data.acl_org()) and principal_id = (select data.acl_principal()));

-- The key that signs bindings is read only by data._binding_mac (security
-- definer): deny everyone.
drop policy if exists no_direct_access on data.binding_keys;
create policy no_direct_access on data.binding_keys using (false);
-- Citation authority is read only through data._authority (security definer), which
-- restates the fragments' read rule: deny everyone.
drop policy if exists no_direct_access on data.fragment_authority;
create policy no_direct_access on data.fragment_authority using (false);

-- Traces are read through api.retrieval_traces (sql/views), which redacts what the
-- reader's grants do not cover; no caller role may select the table. Should one ever be
-- granted it, a principal sees its own rows only (auditors never the raw ones).
drop policy if exists own_or_audited on data.retrieval_traces;
drop policy if exists own_only on data.retrieval_traces;
create policy own_only on data.retrieval_traces for select
    using (org_id = (select data.acl_org()) and principal_id = (select data.acl_principal()));

-- Replay diffs carry tenants' queries and fragments: read through api.eval_replay_diffs
-- (sql/views), which redacts them as api.retrieval_traces redacts traces; no caller role
-- may select the table. Should one ever be granted it: the principal's own rows only.
drop policy if exists own_only on data.eval_replays;
create policy own_only on data.eval_replays for select
    using (org_id = (select data.acl_org()) and principal_id = (select data.acl_principal()));

-- A ranking profile: the org default visible to the org's principals, a persona's to
-- those who may read that persona (as its fragments are).
drop policy if exists scope_read on data.ranking_profiles;
create policy scope_read on data.ranking_profiles for select
    using (org_id = (select data.acl_org())
           and (persona_id is null or (select data.acl_org_wide())
                or persona_id = any ((select data.acl_personas())::text[])));

-- A persona's description vectors: to those who may read that persona (as its profile).
drop policy if exists scope_read on data.persona_vectors;
create policy scope_read on data.persona_vectors for select
    using (org_id = (select data.acl_org())
           and ((select data.acl_org_wide()) or persona_id = any ((select data.acl_personas())::text[])));
-- A repo's sync state: visible to those who may read the repo (as its documents are).
drop policy if exists scope_read on data.git_syncs;
create policy scope_read on data.git_syncs for select
    using (org_id = (select data.acl_org())
           and ((select data.acl_org_wide()) or repo_id = any ((select data.acl_repos())::text[])));

-- Owners and nudges (sql/functions/56_owners.sql). The returns behind staleness come
-- from traces and the webhook holds its secret: no caller role may select either
-- (both are read by definer functions only). The nudge queue, its delivery attempts
-- and the reassignment audit concern the whole org: visible to its org-wide readers.
drop policy if exists no_direct_access on data.fragment_returns;
create policy no_direct_access on data.fragment_returns using (false);
drop policy if exists no_direct_access on data.org_webhooks;
create policy no_direct_access on data.org_webhooks using (false);
do $$
declare
    t text;
begin
    foreach t in array array['nudge_outbox', 'nudge_deliveries', 'owner_reassignments'] loop
        execute format('drop policy if exists org_wide_read on data.%I', t);
        execute format('create policy org_wide_read on data.%I for select using (
            org_id = (select data.acl_org()) and (select data.acl_org_wide()))', t);
    end loop;
end
$$;
-- Contexts (docs/adr/0018). Which versions a principal may read is one definition,
-- data._readable_context_versions (sql/functions/44_contexts.sql): every version of a
-- Context whose scope labels its grants cover (the rule of fragments, on the Context's
-- labels), and the version each live subscription of its org (or one of its repos)
-- gives it. A Context row is visible with any version it may read, or by its scope
-- alone; a version and its members with that version; a subscription to its publisher
-- (who may read the Context by its scope) and to its subscriber scope. No policy of
-- data.fragments changes: subscribed fragments are read through the bundle.
drop policy if exists scope_read on data.contexts;
create policy scope_read on data.contexts for select using (
    (org_id = (select data.acl_org())
     and (repo_id is null or (select data.acl_org_wide()) or repo_id = any ((select data.acl_repos())::text[]))
     and (persona_id is null or (select data.acl_org_wide()) or persona_id = any ((select data.acl_personas())::text[]))
     and (session_id is null or session_id = any ((select data.acl_sessions())::text[])))
    or context_id in (select r.context_id from data._readable_context_versions() r));
drop policy if exists version_read on data.context_versions;
create policy version_read on data.context_versions for select
    using ((context_id, version) in (select r.context_id, r.version from data._readable_context_versions() r));
drop policy if exists version_read on data.context_members;
create policy version_read on data.context_members for select
    using ((context_id, version) in (select r.context_id, r.version from data._readable_context_versions() r));
drop policy if exists party_read on data.context_subscriptions;
create policy party_read on data.context_subscriptions for select using (
    (org_id = (select data.acl_org()) and context_id in (
            select c.context_id from data.contexts c
            where c.org_id = (select data.acl_org())
              and (c.repo_id is null or (select data.acl_org_wide()) or c.repo_id = any ((select data.acl_repos())::text[]))
              and (c.persona_id is null or (select data.acl_org_wide())
                   or c.persona_id = any ((select data.acl_personas())::text[]))
              and (c.session_id is null or c.session_id = any ((select data.acl_sessions())::text[]))))
    or (subscriber_org_id = (select data.acl_org())
        and (subscriber_repo_id is null or (select data.acl_org_wide())
             or subscriber_repo_id = any ((select data.acl_repos())::text[]))));
-- Replays of a shadow model generation (sql/functions/31_model_generations.sql): to the
-- org's principals with an org grant, who administer its models. They hold no query text.
drop policy if exists org_admin_read on data.model_replays;
create policy org_admin_read on data.model_replays for select
    using (org_id = (select data.acl_org()) and (select data.acl_org_wide()));
-- Workflow rules (sql/functions/46_workflow_rules.sql): seen by the principals whose
-- grants cover their scope (an org rule by all of the org, a repo rule by that repo's
-- readers), like a fragment of that scope. Which Context a rule brings is checked again
-- for each caller when it matches (data._readable_context_versions).
drop policy if exists scope_read on data.context_rules;
create policy scope_read on data.context_rules for select using (
    org_id = (select data.acl_org())
    and (repo_id is null or (select data.acl_org_wide()) or repo_id = any ((select data.acl_repos())::text[])));
