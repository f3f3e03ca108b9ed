"""Upgrading a database that holds 0001-era data (the released schema) to head keeps
every row: fragments move into their org's partition, embeddings keep their vectors,
BM25 statistics are rebuilt per scope group, and search works on the result."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb
from pytest_postgresql.janitor import DatabaseJanitor

from app.db.migrate import migrate
from tests.conftest import ADMIN
from tests.sql.test_bm25 import assert_statistics_match_active_fragments

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def v1_db(pg_server):
    janitor = DatabaseJanitor(
        user="postgres", host=pg_server.socket_dir, port=5432, dbname="contexts_upgrade_v1", password=None
    )
    janitor.drop()
    with janitor:
        url = pg_server.url("contexts_upgrade_v1")
        migrate(url, revision="0001", reapply=False)
        yield url


def test_0001_data_survives_the_upgrade(v1_db):
    with psycopg.connect(v1_db) as conn:
        conn.execute("insert into data.orgs (org_id) values ('acme'), ('globex')")
        conn.execute("insert into data.repos values ('acme', 'platform', now())")
        model = conn.execute(
            "insert into data.embedding_models (namespace, name, dims, generation) "
            "values ('prose', 'v1-model', 3, 1) returning model_id"
        ).fetchone()[0]
        conn.execute(
            f"create index embeddings_hnsw_model_{model} on data.embeddings "
            f"using hnsw ((embedding::extensions.vector(3)) extensions.vector_cosine_ops) "
            f"where model_id = {model}"
        )
        for org, repo, path, text, vector in (
            ("acme", "platform", "a.md", "rotate the journal", "[1,0,0]"),
            ("acme", None, "b.md", "journal policy", "[0,1,0]"),
            ("globex", None, "c.md", "journal", "[0,0,1]"),
        ):
            doc = conn.execute(
                "insert into data.documents (org_id, repo_id, path, kind, current_version) "
                "values (%s, %s, %s, 'doc', 1) returning doc_id",
                (org, repo, path),
            ).fetchone()[0]
            conn.execute(
                "insert into data.document_versions (doc_id, version, content_hash, content) "
                "values (%s, 1, md5(%s), %s)",
                (doc, text, text),
            )
            fragment = conn.execute(
                "insert into data.fragments (org_id, repo_id, doc_id, doc_version, namespace, kind, owner, text, "
                "content_hash, token_count, chunker_version, simhash, tsv) values (%s, %s, %s, 1, 'prose', 'doc', "
                "'o', %s, md5(%s), 3, 'v1', 7, to_tsvector('english', %s)) returning fragment_id",
                (org, repo, doc, text, text, text),
            ).fetchone()[0]
            conn.execute(
                "insert into data.fragment_sources (fragment_id, doc_id, doc_version, ordinal, anchor, "
                "start_line, end_line, content_hash) values (%s, %s, 1, 1, '', 1, 1, md5(%s))",
                (fragment, doc, text),
            )
            conn.execute(
                "insert into data.embeddings (fragment_id, model_id, org_id, embedding) values (%s, %s, %s, %s)",
                (fragment, model, org, vector),
            )
        before = conn.execute("select fragment_id, org_id, repo_id, text from data.fragments order by 1").fetchall()

    migrate(v1_db)

    with psycopg.connect(v1_db) as conn:
        assert (
            conn.execute("select fragment_id, org_id, repo_id, text from data.fragments order by 1").fetchall()
            == before
        )
        partitions = dict(conn.execute("select tableoid::regclass::text, count(*) from data.fragments group by 1"))
        numbers = dict(conn.execute("select org_id, org_no from data.orgs"))
        assert partitions == {f"data.fragments_{numbers['acme']}": 2, f"data.fragments_{numbers['globex']}": 1}
        assert conn.execute("select count(*), count(distinct repo_id) from data.embeddings").fetchone() == (3, 1)
        assert conn.execute("select count(*) from data.fragment_sources where org_id is null").fetchone() == (0,)
        # Document versions name their document's org (migration 0028).
        assert conn.execute(
            "select count(*) from data.document_versions v join data.documents d "
            "on d.doc_id = v.doc_id and d.org_id = v.org_id"
        ).fetchone() == (3,)
        assert_statistics_match_active_fragments(conn)
        # New fragments continue the old id sequence.
        assert conn.execute("select nextval('data.fragment_id_seq') > %s", (before[-1][0],)).fetchone() == (True,)
        conn.execute("select service.create_principal('acme', 'reader')")
        conn.execute("select service.grant_scope('acme', 'reader', 'repo', 'platform')")
        conn.execute("select service.bind_principal('acme', 'reader')")
        conn.execute("set local role contexts_service")
        found = conn.execute(
            "select f.text from api.search_lexical('acme', 'journal') s "
            "join data.fragments f using (fragment_id) order by s.rank"
        ).fetchall()
        assert sorted(found) == [("journal policy",), ("rotate the journal",)]
        nearest = conn.execute(
            "select fragment_id from api.search_dense('acme', '{\"prose\": [1, 0, 0]}', 5)"
        ).fetchall()
        assert len(nearest) == 2


@pytest.fixture
def empty_db(pg_server):
    name = f"contexts_empty_{os.getpid()}"
    janitor = DatabaseJanitor(user="postgres", host=pg_server.socket_dir, port=5432, dbname=name, password=None)
    janitor.drop()
    with janitor:
        yield pg_server.url(name)


def test_contexts_migrate_says_which_migrations_it_applied(empty_db):
    """Not "schema is up to date" after applying migrations: what ran, from where to where."""
    from click.testing import CliRunner

    from app.cli import main

    heads = sorted(p.name.split("_")[0] for p in (ROOT / "alembic" / "versions").glob("[0-9]*.py"))
    head = heads[-1]

    def run() -> str:
        done = CliRunner().invoke(main, ["--db-url", empty_db, "migrate"])
        assert done.exit_code == 0, done.output
        return " ".join(done.output.split())

    created = run()
    assert f"applied {len(heads)} migration(s) ({', '.join(heads)}): schema at {head} (created)" in created
    assert "re-applied" in created
    assert run() == f"no migration to apply: schema already at {head}; functions, views, policies and grants re-applied"

    # A database some migrations behind names exactly the ones it was missing.
    with psycopg.connect(empty_db, autocommit=True) as conn:
        conn.execute("drop schema data, api, service, extensions cascade")
        conn.execute("drop table public.alembic_version, public.contexts_reapplied, public.contexts_due")
    migrate(empty_db, revision=heads[-3], reapply=False)
    upgraded = run()
    assert f"applied 2 migration(s) ({', '.join(heads[-2:])}): schema at {head};" in upgraded
    assert "(created)" not in upgraded


def test_0026_postings_are_packed_as_a_fresh_index_would_be(empty_db):
    """Migration 0027 packs the per-posting rows of a 0026 database into blocks: the
    packed postings are exactly the old rows, the blocks keep their layout, and every
    query's BM25 top k equals what a fresh index of the same fragments gives (the
    fragments retired and revived through the triggers afterwards)."""
    migrate(empty_db, revision="0026", reapply=False)
    with psycopg.connect(empty_db) as conn:
        conn.execute("insert into data.orgs (org_id) values ('acme'), ('globex')")
        conn.execute("select data._create_tenant_partitions(org_id) from data.orgs")
        conn.execute("insert into data.repos (org_id, repo_id) values ('acme', 'r1'), ('globex', 'r1')")
        # 3,000 fragments in four scope groups: common words make terms of several blocks.
        conn.execute("""
            insert into data.fragments (fragment_id, org_id, repo_id, session_id, namespace, kind, owner, text,
                                        content_hash, token_count, chunker_version, simhash, tsv)
            select nextval('data.fragment_id_seq'), o, case when i % 3 = 0 then 'r1' end, null, 'prose', 'doc',
                   'o', t, md5(t), 10, 'v', 1, to_tsvector('english', t)
            from generate_series(1, 3000) i,
                 lateral (select case when i % 4 = 0 then 'globex' else 'acme' end as o,
                                 'journal rotate ' || (i % 17) || ' word' || (i % 101) || ' ' ||
                                 repeat('common ', 1 + i % 5) || 'tail' || i as t) x
        """)
        conn.execute("""
            insert into data.bm25_postings (org_id, term, fragment_id, tf, dl, repo_id, persona_id, session_id)
            select f.org_id, t.lexeme, f.fragment_id, coalesce(array_length(t.positions, 1), 1),
                   sum(coalesce(array_length(t.positions, 1), 1)) over (partition by f.fragment_id),
                   f.repo_id, f.persona_id, f.session_id
            from data.fragments f, unnest(f.tsv) t
        """)
        conn.execute("""
            insert into data.bm25_terms (org_id, term, repo_id, persona_id, session_id, df)
            select org_id, term, repo_id, persona_id, session_id, count(*)
            from data.bm25_postings group by org_id, term, repo_id, persona_id, session_id
        """)
        conn.execute("""
            insert into data.bm25_corpus (org_id, repo_id, persona_id, session_id, fragment_count, total_length)
            select org_id, repo_id, persona_id, session_id, count(*), sum(dl)
            from (select distinct on (fragment_id) org_id, fragment_id, dl, repo_id, persona_id, session_id
                  from data.bm25_postings order by fragment_id) per_fragment
            group by org_id, repo_id, persona_id, session_id
        """)
        old = set(conn.execute("select org_id, term, fragment_id, tf, dl from data.bm25_postings").fetchall())
        conn.commit()

    migrate(empty_db)

    queries = ["journal", "common tail7", "word3 rotate 5", "common journal rotate word1 tail30 tail2999"]
    with psycopg.connect(empty_db) as conn:
        packed = set(
            conn.execute(
                "select b.org_id, b.term, p.fragment_id, p.tf, p.dl"
                " from data.bm25_blocks b, extensions.bm25_postings(b.postings) p"
            ).fetchall()
        )
        assert packed == old
        several = "select count(*) > count(distinct (org_id, term, scope_group)) from data.bm25_blocks"
        assert conn.execute(several).fetchone() == (True,)  # terms of more than one block
        assert_statistics_match_active_fragments(conn)

        def tops() -> list:
            return [
                conn.execute(
                    "select fragment_id, round(score::numeric, 9) from api.search_lexical(%s, %s, 50, %s)",
                    (org, q, repo),
                ).fetchall()
                for org in ("acme", "globex")
                for repo in (None, "r1")
                for q in queries
            ]

        upgraded = tops()
        assert all(upgraded)
        conn.execute("update data.fragments set active = false")
        assert conn.execute("select count(*) from data.bm25_blocks").fetchone() == (0,)
        conn.execute("update data.fragments set active = true")
        assert_statistics_match_active_fragments(conn)
        assert tops() == upgraded


def _undo_0046(conn: psycopg.Connection) -> None:
    """The subscriptions' table as it was before migration 0046 (its functions come back
    with the re-applied ones)."""
    conn.execute("alter table data.context_subscriptions drop column accepted_at, drop column accepted_by")


def test_0043_recomputes_every_stored_simhash_as_a_fresh_ingest_would(empty_db):
    """Migration 0043 gives every stored fragment the SimHash a fresh ingest of its text
    gives now (app/ingest/dedupe.py), over more than one batch and in every org, and the
    band columns the near-duplicate look-up probes follow."""
    from app.ingest.dedupe import simhash64, to_signed

    migrate(empty_db)
    with psycopg.connect(empty_db) as conn:
        conn.execute("insert into data.orgs (org_id) values ('acme'), ('globex')")
        conn.execute("select data._create_tenant_partitions(org_id) from data.orgs")
        conn.execute("""
            insert into data.fragments (fragment_id, org_id, namespace, kind, owner, text, content_hash,
                                        token_count, chunker_version, simhash, tsv, reading)
            select nextval('data.fragment_id_seq'), case when i % 1000 = 0 then 'globex' else 'acme' end,
                   'prose', 'doc', 'o', t, md5(t), 10, 'v', 1, to_tsvector('english', t), null
            from generate_series(1, 6100) i,
                 lateral (select 'Release ' || i || E'\n' || repeat('=', 20 + i % 7) || E'\n\n- fix ' || i as t) x
        """)
        # The schema as 0042 left it (0043 changes none; what 0044 to 0046 add, undone).
        conn.execute("alter table data.documents drop column rewrite_due")
        conn.execute("drop table public.contexts_due")
        _undo_0046(conn)
        conn.execute("update public.alembic_version set version_num = '0042'")
        conn.commit()

    migrate(empty_db)

    with psycopg.connect(empty_db) as conn:
        rows = conn.execute("select org_id, text, simhash, simhash_band0, simhash_band3 from data.fragments").fetchall()
    assert len(rows) == 6100 and {org for org, *_ in rows} == {"acme", "globex"}
    for _org, text, value, band0, band3 in rows:
        assert value == to_signed(simhash64(text))
        assert band0 == (value >> 48) & 65535 and band3 == value & 65535
    assert len({value for _org, _text, value, *_ in rows}) == 6100


def test_a_server_without_the_lexical_extension_stops_the_migrate_with_one_line(conn):
    """Migration 0027's guard, run as it is written but asking for an extension this
    server lacks: one error naming what is missing, and a hint saying how to install it."""
    sql = (ROOT / "sql" / "migrations" / "0027_lexical_blocks.sql").read_text()
    guard = sql[sql.index("do $$") : sql.index("$$;", sql.index("do $$")) + 3]
    assert "'contexts_bm25'" in guard
    with pytest.raises(psycopg.errors.UndefinedFile) as refused:
        conn.execute(guard.replace("'contexts_bm25'", "'contexts_bm25_absent'"))
    first_line = str(refused.value).splitlines()[0]
    assert first_line == "the contexts_bm25 extension is not installed on this PostgreSQL server"
    assert "ext/contexts_bm25" in (refused.value.diag.message_hint or "")
    conn.rollback()
    conn.execute(guard)  # installed here: passes


def test_0044_re_chunks_at_their_next_write_the_documents_old_near_copies_hid(db_url, conn, ingest, monkeypatch):
    """A section stored as a near-copy pointer of an unrelated one (what the SimHash
    before 0043 did to sections that shared only their markup) has its text in no index.
    After 0044 its document is marked; writing the same content again makes a new
    version that gives the section its own fragment, once, and leaves other documents
    alone."""
    import app.ingest.pipeline as lane

    install = "# Install\n\nRun pip install contexts, then contexts migrate to create the schema.\n"
    deploy = "# Deploy\n\nBuild the image with docker compose build and push it to the registry.\n"
    monkeypatch.setattr(lane, "_simhash", lambda _text: 7)  # every chunk a near copy of the first
    ingest("acme", {"docs/install.md": install}, repo="shop")
    ingest("acme", {"docs/deploy.md": deploy}, repo="shop")
    monkeypatch.undo()

    def holding(word: str) -> list[str]:
        return [path for (path,) in conn.execute(
            "select d.path from data.fragments f join data.documents d on d.org_id = f.org_id and d.doc_id = f.doc_id"
            " where f.active and f.text like %s order by 1", (f"%{word}%",))]  # fmt: skip

    def documents() -> dict[str, tuple[int, bool]]:
        rows = conn.execute("select path, current_version, rewrite_due from data.documents").fetchall()
        conn.commit()
        return {path: (version, due) for path, version, due in rows}

    assert holding("registry") == []  # the defect: deploy.md's section points at install.md's
    # The database as 0042 left it, then the upgrade.
    conn.execute("alter table data.documents drop column rewrite_due")
    conn.execute("drop table public.contexts_due")
    _undo_0046(conn)
    conn.execute("update public.alembic_version set version_num = '0042'")
    conn.commit()
    done = migrate(db_url)

    assert documents() == {"docs/install.md": (1, False), "docs/deploy.md": (1, True)}
    assert done.applied == ("0043", "0044", "0045", "0046") and done.rewrite_due == 1
    assert "; 1 document(s) to re-chunk under the new near-duplicate features: the next `contexts ingest`" in (
        done.describe()
    )
    stored = conn.execute(
        "select jsonb_agg(jsonb_build_object('path', d.path, 'content_hash', v.content_hash, 'kind', d.kind,"
        " 'metadata', v.metadata)) from data.documents d"
        " join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version"
    ).fetchone()
    conn.execute("select service.bind_principal('acme', %s)", (ADMIN,))
    unchanged = conn.execute(
        "select path from service.unchanged_documents('acme', 'shop', null, null, %s)", (Jsonb(stored[0]),)
    ).fetchall()
    conn.rollback()
    assert unchanged == [("docs/install.md",)]

    ingest("acme", {"docs/install.md": install, "docs/deploy.md": deploy}, repo="shop")
    assert documents() == {"docs/install.md": (1, False), "docs/deploy.md": (2, False)}
    assert holding("registry") == ["docs/deploy.md"]
    assert holding("pip install") == ["docs/install.md"]
    ingest("acme", {"docs/install.md": install, "docs/deploy.md": deploy}, repo="shop")
    assert documents() == {"docs/install.md": (1, False), "docs/deploy.md": (2, False)}


def test_0045_recomputes_the_windows_an_earlier_supersession_rule_stored(db_url, conn, ingest):
    """A repo document declaring that it supersedes one of that repo and a persona hid
    that document under the rule before ADR 0016's amendment of 2026-12-06. After 0045,
    migrate recomputes every supersession's windows with the current functions: the
    document is current again, and a supersession the rule keeps stays."""
    older = "# ADR 3: RabbitMQ\n\nStatus: accepted\n\nServices use RabbitMQ for events.\n"
    newer = "# ADR 7: Kafka\n\nStatus: accepted. Supersedes ADR-3.\n\nEvents go through Kafka.\n"
    ingest("acme", {"docs/adr/0003-rabbitmq.md": older}, repo="pay", persona="p2")
    ingest("acme", {"docs/adr/0007-kafka.md": newer}, repo="pay")
    ingest("acme", {"docs/adr/0013-nats.md": older.replace("ADR 3", "ADR 13")}, repo="pay")
    ingest("acme", {"docs/adr/0017-kafka.md": newer.replace("ADR-3", "ADR-13")}, repo="pay")

    def windows() -> dict[str, bool]:
        rows = conn.execute(
            "select d.path, bool_or(f.valid_until is not null) from data.fragments f"
            " join data.fragment_sources s on s.org_id = f.org_id and s.fragment_id = f.fragment_id"
            " join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id"
            " where s.retired_at is null group by d.path"
        ).fetchall()
        conn.commit()
        return dict(rows)

    assert windows() == {
        "docs/adr/0003-rabbitmq.md": False,
        "docs/adr/0007-kafka.md": False,
        "docs/adr/0013-nats.md": True,
        "docs/adr/0017-kafka.md": False,
    }
    # The database as 0044 left it under the earlier rule: ADR 3's fragments closed too.
    conn.execute(
        "update data.fragments f set valid_until = now() - interval '1 day' from data.fragment_sources s"
        " join data.documents d on d.org_id = s.org_id and d.doc_id = s.doc_id"
        " where s.org_id = f.org_id and s.fragment_id = f.fragment_id and d.path = 'docs/adr/0003-rabbitmq.md'"
    )
    conn.execute("drop table public.contexts_due")
    _undo_0046(conn)
    conn.execute("update public.alembic_version set version_num = '0044'")
    conn.commit()
    assert windows()["docs/adr/0003-rabbitmq.md"] is True

    done = migrate(db_url)

    assert done.applied == ("0045", "0046")
    assert windows() == {
        "docs/adr/0003-rabbitmq.md": False,
        "docs/adr/0007-kafka.md": False,
        "docs/adr/0013-nats.md": True,
        "docs/adr/0017-kafka.md": False,
    }
    assert conn.execute("select count(*) from public.contexts_due").fetchone() == (0,)


def test_0046_keeps_the_live_subscriptions_live_and_later_ones_wait_for_consent(db_url, conn, ingest):
    """Subscriptions live before consent existed were read by their subscribers already:
    they stay live, marked as accepted by the migration; a revoked one stays revoked and
    unaccepted; one made after the upgrade waits for a writer of the subscriber scope."""
    ingest("acme", {"stripe/refunds.md": "# Refunds\n\nRefunds above 500 EUR need a second approval.\n"}, repo="pay")
    conn.execute("select service.create_org('globex')")
    conn.execute("select service.bind_principal('acme', %s)", (ADMIN,))
    made = conn.execute("select context_id from service.context_create('acme', 'pay', null, null, 'runbook')")
    ctx = made.fetchone()[0]
    conn.execute("select service.context_add_version(%s, '{}', '{}', '{**}')", (ctx,))
    conn.commit()
    conn.execute("alter table data.context_subscriptions drop column accepted_at, drop column accepted_by")
    for version in (1, None):  # as 0045's functions wrote them: no consent
        conn.execute(
            "insert into data.context_subscriptions (context_id, org_id, version, subscriber_org_id, created_by)"
            " values (%s, 'acme', %s, 'globex', 'admin')",
            (ctx, version),
        )
    conn.execute("update data.context_subscriptions set revoked_at = clock_timestamp(), revoked_by = 'acme/admin'"
                 " where version is null")  # fmt: skip
    conn.execute("update public.alembic_version set version_num = '0045'")
    conn.commit()

    done = migrate(db_url)

    assert done.applied == ("0046",)
    rows = conn.execute(
        "select version, accepted_by, accepted_at = created_at, revoked_at is not null"
        " from data.context_subscriptions order by subscription_id"
    ).fetchall()
    assert rows == [(1, "migration 0046", True, False), (None, None, None, True)]
    conn.execute("select service.bind_principal('acme', %s)", (ADMIN,))
    later = conn.execute("select state from service.context_subscribe(%s, 'globex')", (ctx,)).fetchone()
    conn.rollback()
    assert later == ("pending",)
