"""Row-level security as analysts and the service meet it: connected as login roles
that own nothing and are not superusers (tests as owners or superusers prove nothing)."""

from __future__ import annotations

import re

import psycopg
import pytest

from tests.conftest import login_url

JOURNAL = "# Journal\n\nRotate the write-ahead journal before the volume fills up.\n"


@pytest.fixture
def tenants(conn, ingest, logins):
    """acme: org-wide, repo platform, repo secret, persona sre, a session; globex: same text."""
    ingest("acme", {"org/policy.md": "# Policy\n\nEvery journal rotation is logged.\n"})
    ingest("acme", {"platform/journal.md": JOURNAL}, repo="platform")
    ingest("acme", {"secret/keys.md": "# Keys\n\nThe journal signing key lives in the vault.\n"}, repo="secret")
    ingest("acme", {"sre/oncall.md": "# On-call\n\nPage the journal owner.\n"}, persona="sre")
    ingest("acme", {"notes.md": "# Notes\n\nJournal rotation went fine today.\n"}, session="s-live")
    ingest("globex", {"platform/journal.md": JOURNAL}, repo="platform")
    conn.execute("select service.create_principal('acme', 'alice-agent', 'agent', '', %s)", (logins["analysts"][0],))
    conn.execute("select service.grant_scope('acme', 'alice-agent', 'repo', 'platform')")
    conn.commit()
    return conn


def analyst(db_url: str, login: str) -> psycopg.Connection:
    return psycopg.connect(login_url(db_url, login))


VISIBLE_TO_ALICE = {"org/policy.md", "platform/journal.md"}


def test_an_analyst_reads_exactly_its_principals_rows(tenants, db_url, logins):
    with analyst(db_url, logins["analysts"][0]) as alice:
        assert alice.execute("select org_id, principal_id from api.whoami()").fetchone() == ("acme", "alice-agent")
        paths = {r[0] for r in alice.execute("select path from data.documents")}
        assert paths == VISIBLE_TO_ALICE
        labels = set(alice.execute("select distinct org_id, repo_id, persona_id, session_id from data.fragments"))
        assert labels == {("acme", None, None, None), ("acme", "platform", None, None)}
        for table in ("embeddings", "bm25_blocks", "bm25_terms", "bm25_corpus"):
            rows = set(alice.execute(f"select distinct org_id, repo_id, persona_id, session_id from data.{table}"))
            assert rows <= labels and rows, table
        visible = {r[0] for r in alice.execute("select fragment_id from data.fragments")}
        assert {r[0] for r in alice.execute("select fragment_id from data.fragment_sources")} == visible
        assert alice.execute("select count(*) from data.document_versions").fetchone() == (2,)
        assert alice.execute("select array_agg(org_id) from data.orgs").fetchone() == (["acme"],)
        assert alice.execute("select count(*) from data.sessions").fetchone() == (0,)
        assert alice.execute("select principal_id from data.principals").fetchall() == [("alice-agent",)]
        # Statistics count only what alice may read: N = her two fragments.
        assert alice.execute("select sum(fragment_count) from data.bm25_corpus").fetchone() == (2,)
        # Searching through the api functions gives the same boundary.
        found = {r[0] for r in alice.execute("select fragment_id from api.search_lexical('acme', 'journal', 100)")}
        assert found and found <= visible


def test_documents_are_listed_and_read_within_the_principals_grants(tenants, db_url, logins):
    ids = dict(tenants.execute("select org_id || ':' || path, doc_id from data.documents"))
    with analyst(db_url, logins["analysts"][0]) as alice:
        listed = alice.execute("select path from api.list_documents('acme')").fetchall()
        assert {r[0] for r in listed} == VISIBLE_TO_ALICE
        by_repo = alice.execute("select path from api.list_documents('acme', 'platform', p_limit => 1)").fetchall()
        assert by_repo == [("org/policy.md",)]  # doc_id order, one page of one
        readable = alice.execute("select path, content from api.get_document(%s)", (ids["acme:platform/journal.md"],))
        assert readable.fetchone() == ("platform/journal.md", JOURNAL)
        for other in ("acme:secret/keys.md", "acme:sre/oncall.md", "acme:notes.md", "globex:platform/journal.md"):
            with pytest.raises(psycopg.errors.NoDataFound, match="unknown document"):
                alice.execute("select * from api.get_document(%s)", (ids[other],))
            alice.rollback()
        for scope in ("p_repo_id => 'secret'", "p_persona_id => 'sre'", "p_session_id => 's-live'"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                alice.execute(f"select * from api.list_documents('acme', {scope})")
            alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not read org globex"):
            alice.execute("select * from api.list_documents('globex')")


def test_an_unmapped_login_reads_nothing(tenants, db_url, logins):
    with analyst(db_url, logins["analysts"][1]) as bob:
        for table in (
            "orgs",
            "documents",
            "document_versions",
            "fragments",
            "fragment_sources",
            "embeddings",
            "bm25_blocks",
            "bm25_terms",
            "bm25_corpus",
            "principals",
            "grants",
        ):
            assert bob.execute(f"select count(*) from data.{table}").fetchone() == (0,), table
        assert bob.execute("select count(*) from api.retrieval_traces").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no principal is bound"):
            bob.execute("select * from api.search_lexical('acme', 'journal')")


def test_a_forged_binding_binds_nobody(tenants, db_url, logins):
    """A real, live binding nonce of another session is useless anywhere else."""
    tenants.execute("select service.bind_principal('acme', 'admin')")
    nonce = tenants.execute("select current_setting('contexts.binding')").fetchone()[0]
    assert tenants.execute("select principal_id from api.whoami()").fetchone() == ("admin",)
    with analyst(db_url, logins["analysts"][1]) as bob:
        for forged in (nonce, "admin", "acme/admin", "' or true --"):
            bob.execute("select set_config('contexts.binding', %s, false)", (forged,))
            assert bob.execute("select org_id from api.whoami()").fetchone() == (None,)
            assert bob.execute("select count(*) from data.fragments").fetchone() == (0,)
        bob.rollback()
    tenants.rollback()


def test_analysts_cannot_escalate(tenants, db_url, logins):
    partition = tenants.execute("select 'data.fragments_' || org_no from data.orgs where org_id = 'acme'").fetchone()[0]
    attempts = [
        "select service.bind_principal('acme', 'admin')",
        "select service.grant_scope('acme', 'alice-agent', 'org')",
        "select service.create_org('evil')",
        "select key_hash from data.api_keys",
        "select * from data.binding_keys",
        "select * from data.fragment_authority",
        f"select * from {partition}",
        "insert into data.grants values ('acme', 'alice-agent', 'org', 'acme', true, now())",
        "update data.fragments set text = 'x'",
        "delete from data.fragments",
        "select * from service.begin_document('acme', 'platform', null, null, 'x.md', 'doc', 'x', 'h')",
        "set role contexts_service",
    ]
    with analyst(db_url, logins["analysts"][0]) as alice:
        for sql in attempts:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                alice.execute(sql)
            alice.rollback()
    assert tenants.execute("select count(*) from data.grants where principal_id = 'alice-agent'").fetchone() == (1,)


def test_partitions_of_other_orgs_are_pruned(tenants, db_url, logins):
    numbers = dict(tenants.execute("select org_id, org_no from data.orgs"))
    with analyst(db_url, logins["analysts"][0]) as alice:
        plan = "\n".join(
            r[0]
            for r in alice.execute(
                "explain (costs off) select * from data.fragments where org_id = 'acme' and fragment_id > 0"
            )
        )
        assert f"fragments_{numbers['acme']}" in plan
        assert f"fragments_{numbers['globex']}" not in plan
        # The policy's grants are InitPlans, evaluated once: no per-row function call.
        assert "InitPlan" in plan and "SubPlan" not in plan
        assert not re.search(r"Filter: .*acl_\w+\(\)", plan)
        # Without naming the org, the policy's org (an InitPlan) prunes at run time.
        plan = "\n".join(
            r[0]
            for r in alice.execute("explain (analyze, costs off, timing off, summary off) select * from data.fragments")
        )
        other = [line for line in plan.splitlines() if f"on fragments_{numbers['globex']}" in line]
        assert other and all("(never executed)" in line for line in other), plan


def test_the_tsquery_trap(tenants, db_url, logins):
    """`@@` is not leakproof: under RLS an analyst's own full-text condition cannot use
    an index on `tsv` (measured, PostgreSQL 18), which is why BM25 reads its own blocks
    through leakproof `=` (api.search_lexical); so data.fragments keeps no GIN index on
    `tsv` at all (migration 0041: nothing searched it, and every write paid for it)."""
    assert (
        tenants.execute(
            "select count(*) from pg_index i join pg_class t on t.oid = i.indrelid"
            " join pg_namespace n on n.oid = t.relnamespace join pg_class x on x.oid = i.indexrelid"
            " join pg_am a on a.oid = x.relam where n.nspname = 'data' and t.relname like 'fragments%%'"
            " and a.amname = 'gin'"
        ).fetchone()[0]
        == 0
    )
    with analyst(db_url, logins["analysts"][0]) as alice:
        alice.execute("set enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in alice.execute(
                "explain (costs off) select fragment_id from data.fragments where tsv @@ 'journal'::tsquery"
            )
        )
        assert "tsv_idx" not in plan, plan


def test_expired_sessions_are_never_returned_and_are_purged(tenants, db_url, logins):
    tenants.execute("select service.create_principal('acme', 'sess-agent', 'agent', '', %s)", (logins["analysts"][1],))
    tenants.execute("select service.grant_scope('acme', 'sess-agent', 'session', 's-live')")
    tenants.commit()
    with analyst(db_url, logins["analysts"][1]) as agent:
        assert agent.execute("select count(*) from data.fragments where session_id = 's-live'").fetchone() == (1,)
        assert (
            agent.execute(
                "select count(*) from api.search_lexical('acme', 'rotation', 10, null, null, 's-live')"
            ).fetchone()[0]
            >= 1
        )
    tenants.execute("update data.sessions set expires_at = now() - interval '1 second' where session_id = 's-live'")
    tenants.commit()
    with analyst(db_url, logins["analysts"][1]) as agent:
        assert agent.execute("select count(*) from data.fragments where session_id = 's-live'").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="live session"):
            agent.execute("select * from api.search_lexical('acme', 'rotation', 10, null, null, 's-live')")
    purged = tenants.execute("select * from service.purge_expired_sessions()").fetchall()
    assert purged == [("acme", "s-live", 1, 1)]
    assert tenants.execute("select count(*) from data.fragments where session_id = 's-live'").fetchone() == (0,)
    assert tenants.execute("select count(*) from data.grants where scope_kind = 'session'").fetchone() == (0,)
    from tests.sql.test_bm25 import assert_statistics_match_active_fragments

    assert_statistics_match_active_fragments(tenants)


def test_org_grants_cover_repos_and_personas_but_not_sessions(tenants, db_url, logins):
    tenants.execute("update data.principals set db_role = null where db_role = %s", (logins["analysts"][0],))
    tenants.execute("select service.create_principal('acme', 'lead', 'human', '', %s)", (logins["analysts"][0],))
    tenants.execute("select service.grant_scope('acme', 'lead', 'org')")
    tenants.commit()
    with analyst(db_url, logins["analysts"][0]) as lead:
        paths = {r[0] for r in lead.execute("select path from data.documents")}
        assert paths == {"org/policy.md", "platform/journal.md", "secret/keys.md", "sre/oncall.md"}


def test_a_binding_lasts_one_transaction_and_follows_savepoints(tenants):
    conn = tenants
    conn.execute("select service.bind_principal('acme', 'alice-agent')")
    nonce = conn.execute("select current_setting('contexts.binding')").fetchone()[0]
    conn.commit()
    # Same backend (a pooled connection's next request), the old nonce set by hand.
    conn.execute("select set_config('contexts.binding', %s, false)", (nonce,))
    assert conn.execute("select principal_id from api.whoami()").fetchone() == (None,)
    conn.rollback()
    with conn.transaction():
        savepoint = conn.transaction()
        with pytest.raises(RuntimeError), savepoint:
            conn.execute("select service.bind_principal('acme', 'admin')")
            raise RuntimeError("roll the savepoint back")
        assert conn.execute("select principal_id from api.whoami()").fetchone() == (None,)


def test_another_orgs_document_id_is_unknown_to_a_writer(tenants):
    conn = tenants
    globex_doc = conn.execute("select doc_id from data.documents where org_id = 'globex'").fetchone()[0]
    secret_doc = conn.execute("select doc_id from data.documents where repo_id = 'secret'").fetchone()[0]
    conn.execute("select service.create_principal('acme', 'platform-writer')")
    conn.execute("select service.grant_scope('acme', 'platform-writer', 'repo', 'platform', true)")
    conn.commit()
    messages = []
    for doc_id in (globex_doc, secret_doc, 10**9):
        conn.execute("select service.bind_principal('acme', 'platform-writer')")
        with pytest.raises(psycopg.errors.NoDataFound) as error:
            conn.execute("select * from service.add_fragments(%s, 1, '[]')", (doc_id,))
        messages.append(error.value.diag.message_primary.replace(str(doc_id), "ID"))
        conn.rollback()
    assert len(set(messages)) == 1, messages


def test_metadata_scope_checks_and_deletion_stay_within_the_principals_grants(tenants, db_url, logins):
    versions = tenants.execute("select array_agg(doc_id), array_agg(current_version) from data.documents").fetchone()
    with analyst(db_url, logins["analysts"][0]) as alice:
        readable = alice.execute(
            "select d.path from api.version_metadata(%s, %s) m join data.documents d using (doc_id)", versions
        ).fetchall()
        assert {r[0] for r in readable} == VISIBLE_TO_ALICE
        # Grants are checked before existence: without an org grant, any other repo is a
        # refusal (existing or not), so its existence is not probed through this door.
        for repo in ("secret", "nope"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=f"no grant on repo {repo}"):
                alice.execute("select * from api.list_documents('acme', %s)", (repo,))
            alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # analysts never write
            alice.execute("select * from service.delete_document(%s)", (versions[0][0],))
    assert tenants.execute("select count(*) from data.documents where deleted_at is not null").fetchone() == (0,)
