"""The catalog says every table with tenant data is under forced row-level security,
the roles callers use can neither bypass it nor own what it protects, and each migrate
makes their function privileges exactly what sql/grants/10_roles.sql's rule says."""

from __future__ import annotations

import psycopg
import pytest

from app.db.migrate import SQL_DIR, migrate
from tests.conftest import login_url
from tests.sql.snapshot import privilege_matrix, schema_dump, unified_diff

NON_TENANT = {"embedding_namespaces", "embedding_models", "eval_runs", "eval_figures", "authority_refreshes"}
"""Tables of the data schema that hold no tenant data (shared model registry, eval
history of the pipeline: figures on labelled sets, no tenant's rows; when citation
authority was last refreshed)."""
ROLES = ("contexts_service", "contexts_analyst", "contexts_auditor")


def test_every_tenant_table_has_forced_rls_and_a_policy(conn):
    rows = conn.execute("""
        select c.relname, c.relrowsecurity, c.relforcerowsecurity,
               (select count(*) from pg_policy p where p.polrelid = c.oid)
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p')
    """).fetchall()
    tenant = [r for r in rows if r[0] not in NON_TENANT]
    names = {r[0] for r in tenant}
    assert {
        "documents",
        "document_versions",
        "fragments",
        "fragment_sources",
        "embeddings",
        "bm25_blocks",
        "bm25_terms",
        "bm25_corpus",
        "retrieval_traces",
        "eval_replays",
        "principals",
        "grants",
        "api_keys",
        "pins",
        "ranking_profiles",
        "fragment_links",
        "persona_vectors",
        "git_syncs",
        "contexts",
        "context_versions",
        "context_members",
        "context_subscriptions",
        "context_rules",
        "model_replays",
    } <= names
    unprotected = [name for name, enabled, forced, policies in tenant if not (enabled and forced and policies >= 1)]
    assert unprotected == []


def test_no_caller_role_may_select_a_materialized_view_or_citation_authority(conn, db_url, logins):
    """Materialized views have no row-level security, and citation authority (a table
    refreshed per org, computed over every reader's links) is read only through
    data._authority, which applies the read rule of fragments: no caller role may
    select either."""
    views = [r[0] for r in conn.execute("select oid::regclass::text from pg_class where relkind = 'm'")]
    for relation in (*views, "data.fragment_authority"):
        for role in (*ROLES, "public"):
            held = conn.execute("select has_table_privilege(%s, %s, 'select')", (role, relation)).fetchone()[0]
            assert not held, (role, relation)
    with psycopg.connect(login_url(db_url, logins["analysts"][0])) as analyst:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            analyst.execute("select * from data.fragment_authority")


def test_org_partitions_deny_direct_access(conn):
    conn.execute("select service.create_org('acme')")
    rows = conn.execute("""
        select c.relname, c.relrowsecurity, c.relforcerowsecurity,
               (select array_agg(pg_get_expr(p.polqual, p.polrelid)) from pg_policy p where p.polrelid = c.oid),
               has_table_privilege('contexts_service', c.oid, 'select'),
               has_table_privilege('contexts_analyst', c.oid, 'select')
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relispartition and c.relkind = 'r'
    """).fetchall()
    assert {r[0].rsplit("_", 1)[0] for r in rows} == {"fragments", "embeddings", "bm25_blocks"}
    for name, enabled, forced, quals, service_reads, analyst_reads in rows:
        assert enabled and forced and quals == ["false"], name
        assert not service_reads and not analyst_reads, name


def test_caller_roles_cannot_bypass_or_own(conn):
    for role in ROLES:
        superuser, bypass, owned = conn.execute(
            """
            select r.rolsuper, r.rolbypassrls,
                   (select count(*) from pg_class c where c.relowner = r.oid)
            from pg_roles r where r.rolname = %s""",
            (role,),
        ).fetchone()
        assert (superuser, bypass, owned) == (False, False, 0), role


def test_definer_functions_pin_their_search_path_and_policy_helpers_are_stable(conn):
    unpinned = conn.execute("""
        select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ('api', 'service', 'data') and p.prosecdef
          and not exists (select 1 from unnest(p.proconfig) c where c like 'search_path=%%')
    """).fetchall()
    assert unpinned == []
    helpers = dict(
        conn.execute("""
        select p.proname, p.provolatile from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'data' and (p.proname like 'acl%%' or p.proname = 'current_principal')
    """).fetchall()
    )
    assert set(helpers) >= {
        "acl_org",
        "acl_principal",
        "acl_org_wide",
        "acl_repos",
        "acl_personas",
        "acl_sessions",
        "acl_audit",
        "current_principal",
    }
    assert set(helpers.values()) == {"s"}


def test_no_caller_may_create_temporary_tables(db_url, logins):
    """TEMP on the Contexts database is nobody's but its owner's: a migrate revokes
    PostgreSQL's default grant to PUBLIC (a database cloned from a template gets it
    back, and `contexts migrate` takes it away again)."""
    migrate(db_url, force=True)
    with psycopg.connect(db_url) as conn:
        for role in (*ROLES, "public", logins["service"], *logins["analysts"]):
            held = conn.execute("select has_database_privilege(%s, current_database(), 'temporary')", (role,))
            assert held.fetchone() == (False,), role
    with psycopg.connect(login_url(db_url, logins["analysts"][0])) as analyst:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            analyst.execute("create temporary table scratch (x int)")
        analyst.rollback()
        # Connecting is still everyone's: the analysts' door is this database.
        assert analyst.execute("select has_database_privilege(current_database(), 'connect')").fetchone() == (True,)
    with psycopg.connect(login_url(db_url, logins["service"])) as service:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            service.execute("create temporary table scratch (x int)")


def test_an_analyst_cannot_authenticate_a_key_in_sql(db_url, logins):
    """Holding another org's key, an analyst cannot bind its principal in SQL (nor try
    keys there, out of reach of the HTTP throttle): service.authenticate is the service's."""
    from app.access import create_api_key

    with psycopg.connect(db_url) as conn:
        for org in ("acme", "globex"):
            conn.execute("select service.create_org(%s)", (org,))
            conn.execute("select service.create_principal(%s, 'admin')", (org,))
            conn.execute("select service.grant_scope(%s, 'admin', 'org', null, true)", (org,))
        conn.execute("select service.create_principal('acme', 'alice', 'human', '', %s)", (logins["analysts"][0],))
        token = create_api_key(conn, "globex", "admin").token
    with psycopg.connect(login_url(db_url, logins["analysts"][0])) as analyst:
        for call in (
            "select * from service.authenticate(%s)",
            "select * from service.authenticate('ctx_000000000000_x')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                analyst.execute(call, (token,) if "%s" in call else None)
            analyst.rollback()
        assert analyst.execute("select org_id, principal_id from api.whoami()").fetchone() == ("acme", "alice")
    with psycopg.connect(login_url(db_url, logins["service"])) as service:
        assert service.execute("select org_id from service.authenticate(%s)", (token,)).fetchone() == ("globex",)


EXECUTABLE = {
    "contexts_service": {
        "service.active_model",
        "service.add_documents",
        "service.add_fragments",
        "service.authenticate",
        "service.authorize_write",
        "service.begin_document",
        "service.begin_documents",
        "service.context_add_version",
        "service.context_candidates",
        "service.context_create",
        "api.context_get",
        "api.context_resolve",
        "service.context_retire",
        "service.context_subscribe",
        "api.context_subscriptions",
        "service.context_unsubscribe",
        "service.context_accept",
        "api.context_versions",
        "api.contexts_list",
        "service.delete_document",
        "service.fold_usage",
        "api.get_document",
        "api.get_fragment",
        "api.get_trace",
        "api.lexical_document",
        "api.lexical_tsvector",
        "api.lexical_query_terms",
        "api.list_documents",
        "service.match_fragments",
        "service.metrics_org_sizes",
        "api.model_generations",
        "service.open_session",
        "service.pin_add",
        "service.persona_vectors_set",
        "service.pin_remove",
        "api.pins_list",
        "api.validity_left_out",
        "api.ranking_profile",
        "service.ranking_profile_delete",
        "service.ranking_profile_set",
        "api.ranking_profiles",
        "api.fragment_links",
        "api.linked_fragments",
        "service.record_trace",
        "service.refresh_authority",
        "api.retrieve_candidates",
        "api.score_dense",
        "api.score_lexical",
        "api.search_dense",
        "api.search_lexical",
        "service.secondary_models",
        "service.serving_models",
        "service.previous_models",
        "api.sync_documents",
        "service.sync_record",
        "api.sync_state",
        "service.unchanged_documents",
        "api.version_metadata",
        "api.whoami",
        # Owners and nudges (sql/functions/56_owners.sql).
        "api.codeowners_file",
        "api.owner_settings",
        "service.owner_settings_set",
        "service.owners_reassign",
        "service.owners_resolve",
        "service.owners_unnamed",
        "api.stale_fragments",
        "service.webhook_delete",
        "service.webhook_get",
        "service.webhook_set",
        "service.nudges_enqueue",
        "service.nudge_claim",
        "service.nudge_attempted",
        # Workflow rules (sql/functions/46_workflow_rules.sql).
        "service.rule_create",
        "service.rule_delete",
        "api.rule_matches",
        "api.rules_list",
        # Idempotent writes (sql/functions/37_idempotency.sql): the service's own keys.
        "service.idempotent_response",
        "service.idempotent_record",
    },
    "contexts_analyst": {
        "api.rule_matches",
        "api.rules_list",
        "api.context_get",
        "api.context_resolve",
        "api.context_subscriptions",
        "api.context_versions",
        "api.contexts_list",
        "api.get_document",
        "api.get_fragment",
        "api.list_documents",
        "api.get_trace",
        "api.lexical_document",
        "api.model_generations",
        "api.lexical_tsvector",
        "api.lexical_query_terms",
        "api.pins_list",
        "api.validity_left_out",
        "api.ranking_profile",
        "api.ranking_profiles",
        "api.fragment_links",
        "api.linked_fragments",
        "api.retrieve",
        "api.retrieve_candidates",
        "api.score_dense",
        "api.score_lexical",
        "api.search_dense",
        "api.search_lexical",
        "api.sync_documents",
        "api.sync_state",
        "api.version_metadata",
        "api.whoami",
        "api.codeowners_file",
        "api.owner_settings",
        "api.stale_fragments",
    },
    "contexts_auditor": {"api.get_trace", "api.whoami", "api.fragment_readers"},
    "public": set(),
}
"""Exactly what each role may call in `api` and `service` (administration is nobody's but the migrator's)."""
POLICY_HELPERS = {
    "data.current_principal",
    "data.acl_org",
    "data.acl_principal",
    "data._acl",
    "data.acl_org_wide",
    "data.acl_repos",
    "data.acl_personas",
    "data.acl_sessions",
    "data.acl_audit",
    "data._bypasses_rls",
    "data._in_scope",
    "data._require_org",
    "data._require_read",
    "data._principal_or_raise",
    "data._require_scope",
}
FUSION_HELPERS = {
    "data._fuse",
    "data._check_fusion",
    "data._bm25_statistics",
    "data._bm25_scores",
    "data._bm25_top",
    "data._bm25_kept",
    "data._query_vectors",
    "data._dense_hits",
    "data._ranking_profile",
    "data._authority",
    "data._serving_models",
    "data._superseders",
}
"""Helpers of the searches (BM25, fusion, the ranking profile in effect, citation authority), for
those who may call them."""
CONTEXT_HELPERS = {
    "data._readable_context_versions",
    "data._context_versions",
    "data._context_rows",
    "data._resolve_context_refs",
    "data._subscription_state",
    "data._principal_of_org",
    "data._rule_rows",
    "data._glob_regex",
}
"""The read rule of Contexts (policies of the four context tables) and what their listing
reads; the rows of workflow rules and their glob matcher (api.rules_list, api.rule_matches)."""
TRACE_HELPERS = {
    "data._readable_fragments",
    "data._redact_candidates",
    "data._redact_pipeline",
    "data._redact_request",
    "data._trace",
}
"""Redaction helpers of api.retrieval_traces, which every caller role reads, and the
definer function that reads one trace the caller may read by id (api.get_trace)."""
RETRIEVE_HELPERS = {"data._stored_query_vector"}
"""The stored query vector of a text, for those who may call api.retrieve."""
OWNER_HELPERS = {"data._stale_readable"}
"""Staleness kept to what the caller may read, for those who may call api.stale_fragments."""
AUDIT_HELPERS = {"data._fragment_readers"}
"""Who may read a fragment and why, for those who may call api.fragment_readers."""
LINK_HELPERS = {"data._links_to_hidden"}
"""A fragment's references to what the caller may not read (shown unresolved), for those
who may call api.fragment_links."""
VIEW_HELPERS = {
    "data._json_number",
    "data._usage_latency",
    "data._usage_p95",
    "data._usage_concat",
    # What the usage views add of the traces not yet counted into the roll-ups.
    "data._usage_summary",
    "data._usage_trace",
    "data._usage_candidates",
}
"""Read by the usage views, which analysts and auditors select (the p95 of a roll-up's
latency histograms, ADR 0028)."""


def test_each_role_may_call_exactly_its_functions(conn):
    for role, expected in EXECUTABLE.items():
        callable_ = {
            f"{schema}.{name}"
            for schema, name in conn.execute(
                """
            select n.nspname, p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('api', 'service', 'data') and has_function_privilege(%s, p.oid, 'execute')""",
                (role,),
            )
        }
        assert {f for f in callable_ if not f.startswith("data.")} == expected, role
        helpers = (
            POLICY_HELPERS
            | TRACE_HELPERS
            | (FUSION_HELPERS if "api.retrieve_candidates" in expected else set())
            | (RETRIEVE_HELPERS if "api.retrieve" in expected else set())
            | (OWNER_HELPERS if "api.stale_fragments" in expected else set())
            | (CONTEXT_HELPERS if "api.contexts_list" in expected else set())
            | (AUDIT_HELPERS if "api.fragment_readers" in expected else set())
            | (LINK_HELPERS if "api.fragment_links" in expected else set())
            | (VIEW_HELPERS if role in ("contexts_analyst", "contexts_auditor") else set())
        )
        assert {f for f in callable_ if f.startswith("data.")} == (helpers if role != "public" else set()), role


TRACE_VIEWS = {
    "api.query_vectors",
    "api.retrieval_summaries",
    "api.retrievals_per_day",
    "api.retrievals_below_floor",
    "api.fragment_retrievals",
    "api.eval_runs",
    "api.eval_figures",
    "api.eval_replay_diffs",
}
"""Views that read only traces (through api.retrieval_traces or its helpers) and eval
history: auditors, who read no data table, may select them too."""
TABLE_VIEWS = {
    "api.document_retrievals",
    "api.fragment_authority",
    "api.fragments_never_retrieved",
    "api.fragments_by_owner",
    "api.near_duplicate_clusters",
    "api.near_duplicate_pairs",
    "api.document_version_counts",
}
"""Views that also read data tables under the caller's row-level security."""
SELECTABLE = {
    "contexts_service": {"api.retrieval_traces"},
    "contexts_analyst": {"api.retrieval_traces"} | TRACE_VIEWS | TABLE_VIEWS,
    "contexts_auditor": {"api.retrieval_traces"} | TRACE_VIEWS,
    "public": set(),
}
"""Exactly what each role may select in `api` (the view rule of sql/grants/10_roles.sql)."""


USAGE_VIEWS = {
    "api.retrievals_per_day",
    "api.retrievals_below_floor",
    "api.fragment_retrievals",
}
"""The usage views: they read the roll-ups as their owner and redact per reader."""


def test_each_role_may_select_exactly_its_views_and_nothing_else_of_them(conn):
    views = {
        r[0]
        for r in conn.execute(
            "select c.oid::regclass::text from pg_class c where c.relnamespace = 'api'::regnamespace "
            "and c.relkind in ('v', 'm')"
        )
    }
    assert views == SELECTABLE["contexts_analyst"]  # a new view is named here, and in the rule
    for role, expected in SELECTABLE.items():
        rows = conn.execute(
            """
            select c.oid::regclass::text, has_table_privilege(%(role)s, c.oid, 'select'),
                   has_table_privilege(%(role)s, c.oid, 'insert, update, delete, truncate, references, trigger')
            from pg_class c where c.relnamespace = 'api'::regnamespace and c.relkind in ('v', 'm')""",
            {"role": role},
        ).fetchall()
        assert {name for name, select, _ in rows if select} == expected, role
        assert [name for name, _, other in rows if other] == [], role
    options = dict(
        conn.execute(
            "select c.oid::regclass::text, c.reloptions from pg_class c "
            "where c.relnamespace = 'api'::regnamespace and c.relkind = 'v'"
        ).fetchall()
    )
    # A view that reads what its caller may not is a barrier that filters itself; every
    # other one reads as its caller (row-level security applies), or reads global data.
    # Either way a fence (a subquery with OFFSET 0) keeps the caller's own conditions out
    # of what it filters (ADR 0010, amendment of 2026-12-06). The traces' two views are
    # that fence over data.readable_traces with every column redacted on top: they need
    # no barrier above it.
    barriers = {"api.eval_replay_diffs", "api.fragment_authority"}
    barriers |= USAGE_VIEWS  # they read the roll-ups, which deny every caller (ADR 0028)
    fenced = {"api.retrieval_traces", "api.query_vectors"}
    for name, opts in options.items():
        definition = conn.execute("select pg_get_viewdef(%s::regclass)", (name,)).fetchone()[0]
        if name in barriers | fenced:
            assert "OFFSET 0" in definition, name
            assert ("security_barrier=true" in (opts or [])) == (name in barriers), name
        elif name not in ("api.eval_runs", "api.eval_figures"):
            assert "security_invoker=true" in (opts or []), name


def test_view_grants_outside_the_rule_are_revoked_by_migrate(db_url):
    fresh = privilege_matrix(db_url)
    with psycopg.connect(db_url, autocommit=True) as c:
        c.execute("grant select on api.fragments_by_owner to contexts_auditor, contexts_service")
        c.execute("grant insert on api.eval_runs to contexts_analyst")
        c.execute("revoke select on api.retrieval_summaries from contexts_analyst")
    migrate(db_url, force=True)  # what `contexts migrate` does
    assert privilege_matrix(db_url) == fresh


def test_the_view_rule_refuses_a_name_that_is_no_view(conn):
    rule = (SQL_DIR / "grants" / "10_roles.sql").read_text(encoding="utf-8")
    assert "'api.fragments_by_owner'" in rule
    with pytest.raises(psycopg.errors.UndefinedTable, match="api.fragments_by_owners"):
        conn.execute(rule.replace("'api.fragments_by_owner'", "'api.fragments_by_owners'"))


def test_nothing_is_granted_to_public(conn):
    public_tables = conn.execute("""
        select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'data' and c.relkind in ('r', 'p') and has_table_privilege('public', c.oid, 'select')
    """).fetchall()
    assert public_tables == []


def test_traces_are_read_only_through_the_redacting_view(conn):
    """No caller role reads data.retrieval_traces itself (it would see raw queries and
    candidates), nor data.eval_replays (replayed queries and results), nor the usage
    views' lookup of traces not yet counted (data.usage_pending_traces, unredacted); all
    of them read api.retrieval_traces, which redacts per reader."""
    for role in ROLES:
        for table in ("data.retrieval_traces", "data.eval_replays", "data.usage_pending_traces"):
            assert not conn.execute("select has_table_privilege(%s, %s, 'select')", (role, table)).fetchone()[0], (
                role,
                table,
            )
        assert conn.execute("select has_table_privilege(%s, 'api.retrieval_traces', 'select')", (role,)).fetchone()[0]
    assert "OFFSET 0" in conn.execute("select pg_get_viewdef('api.retrieval_traces'::regclass)").fetchone()[0]
    assert not conn.execute("select has_table_privilege(%s, 'data.readable_traces', 'select')", (role,)).fetchone()[0]
    assert not conn.execute("select has_table_privilege('public', 'api.retrieval_traces', 'select')").fetchone()[0]


# -- function grants follow the rule in sql/grants/10_roles.sql on every migrate -------


def _executors(url: str, function: str) -> set[str]:
    with psycopg.connect(url) as c:
        return {
            role
            for role in (*ROLES, "public")
            if c.execute("select has_function_privilege(%s, %s, 'execute')", (role, function)).fetchone()[0]
        }


def test_migrate_twice_changes_nothing(db_url):
    """A fresh install (a clone of the migrated template) migrated twice more: the same
    schema, grants and policies (no privilege is dropped and granted again, which
    would reorder the ACLs pg_dump prints)."""
    before = {"schema": schema_dump(db_url), "privileges": privilege_matrix(db_url)}
    migrate(db_url, force=True)
    migrate(db_url, force=True)
    after = {"schema": schema_dump(db_url), "privileges": privilege_matrix(db_url)}
    for kind in before:
        assert after[kind] == before[kind], (
            kind + ":\n" + unified_diff(before[kind], after[kind], "fresh", "migrated twice")
        )


def test_function_grants_outside_the_rule_are_revoked_by_migrate(db_url):
    """A grant the rule does not make (by hand, or left by an older rule) is gone after
    migrate, and one the rule makes but that was revoked is back: the function
    privileges are exactly the fresh install's again."""
    fresh = privilege_matrix(db_url)
    with psycopg.connect(db_url, autocommit=True) as c:
        c.execute("grant execute on function service.create_org(text, text, interval) to contexts_service")
        c.execute("grant execute on function data._bind(text, text, text) to contexts_analyst, contexts_auditor")
        c.execute("revoke execute on function api.whoami() from contexts_auditor")
    assert "contexts_service" in _executors(db_url, "service.create_org(text, text, interval)")
    assert _executors(db_url, "data._bind(text, text, text)") == {"contexts_analyst", "contexts_auditor"}
    assert "contexts_auditor" not in _executors(db_url, "api.whoami()")

    migrate(db_url)  # the files did not change: hand-made privileges stay until forced
    assert "contexts_service" in _executors(db_url, "service.create_org(text, text, interval)")
    migrate(db_url, force=True)  # what `contexts migrate` does

    assert _executors(db_url, "service.create_org(text, text, interval)") == set()
    assert _executors(db_url, "data._bind(text, text, text)") == set()
    assert _executors(db_url, "api.whoami()") == set(ROLES)
    assert privilege_matrix(db_url) == fresh


def test_a_function_the_rule_does_not_name_is_the_owners_alone(db_url):
    """New functions need no line to stay closed: migrate leaves them to the owner."""
    with psycopg.connect(db_url, autocommit=True) as c:
        c.execute("create function api.probe() returns int language sql as 'select 1'")
        c.execute("grant execute on function api.probe() to contexts_service")
    migrate(db_url, force=True)
    assert _executors(db_url, "api.probe()") == set()


def test_the_rule_refuses_a_name_that_is_no_function(conn):
    """A function renamed or dropped but still named by the rule fails the migrate,
    instead of silently granting nothing."""
    rule = (SQL_DIR / "grants" / "10_roles.sql").read_text(encoding="utf-8")
    assert "'api.get_fragment'" in rule
    with pytest.raises(psycopg.errors.UndefinedFunction, match="api.get_fragments"):
        conn.execute(rule.replace("'api.get_fragment'", "'api.get_fragments'"))
