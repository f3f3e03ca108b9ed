"""Ingestion against real Postgres: near-copies collapse, versions replace fragments,
unchanged files change nothing, refusals store nothing."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app.ingest.normalize import RejectedDocument, SourceDocument
from app.scope import Scope
from tests.conftest import ADMIN

INVENTORY = (Path(__file__).parents[1] / "fixtures" / "code" / "inventory.py").read_text()


def counts(conn):
    return conn.execute(
        "select (select count(*) from data.fragments), (select count(*) from data.fragment_sources),"
        " (select count(*) from data.embeddings)"
    ).fetchone()


def test_near_copy_collapses_into_one_fragment_with_two_sources(conn, ingest):
    ingest("acme", {"svc/inventory.py": INVENTORY}, repo="shop")
    fragments_before, sources_before, embeddings_before = counts(conn)
    near = INVENTORY.replace(
        '"""Stock levels and the reservations held against them."""',
        '"""Stock levels and the reservations held against it."""',
    )
    results = ingest("acme", {"vendored/inventory_copy.py": near}, repo="shop")
    assert results[0].created == 0 and results[0].fragments > 0
    fragments, sources, embeddings = counts(conn)
    assert fragments == fragments_before and embeddings == embeddings_before
    assert sources == sources_before * 2
    paths = conn.execute("""select array_agg(distinct d.path order by d.path) from data.fragment_sources s
                            join data.documents d using (doc_id) join data.fragments f using (fragment_id)
                            where f.symbol = 'Inventory'""").fetchone()[0]
    assert paths == ["svc/inventory.py", "vendored/inventory_copy.py"]


def test_different_scopes_do_not_collapse(conn, ingest):
    ingest("acme", {"inventory.py": INVENTORY}, repo="shop")
    n = counts(conn)[0]
    ingest("acme", {"inventory.py": INVENTORY}, repo="warehouse")
    assert counts(conn)[0] == 2 * n


def nested_plans(conn, sql: str, params=(), principal: tuple[str, str] | None = None) -> str:
    """Plans of every statement run inside functions, via auto_explain notices; with
    `principal` (org, principal id), run as that principal under row-level security."""
    from app.access import act_as

    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    conn.execute("load 'auto_explain'")  # superuser-only settings: before dropping the role
    for setting in (
        "auto_explain.log_min_duration = 0",
        "auto_explain.log_nested_statements = on",
        "auto_explain.log_level = notice",
    ):
        conn.execute(f"set {setting}")
    if principal:
        act_as(conn, *principal)
    conn.execute(sql, params)
    if principal:
        conn.execute("reset role")
    conn.execute("reset auto_explain.log_min_duration")
    return "\n".join(notices)


def test_near_duplicate_lookup_uses_band_indexes(conn, ingest):
    ingest("acme", {"inventory.py": INVENTORY})
    # Enough fragments that a scan would be the wrong plan; then ask the real function.
    conn.execute("""insert into data.fragments (org_id, doc_id, doc_version, namespace, kind, owner, text,
                        content_hash, token_count, chunker_version, simhash, tsv, active)
                    select 'acme', d.doc_id, 1, 'code', 'code', 'x', 'filler ' || g, md5(g::text), 2, 'test',
                           (random() * 9.2e18)::bigint, ''::tsvector, true
                    from data.documents d, generate_series(1, 20000) g""")
    conn.execute("analyze data.fragments")
    conn.execute("select service.bind_principal('acme', 'admin')")
    plans = nested_plans(
        conn,
        "select * from service.match_fragments('acme', null, null, null, %s, %s, %s)",
        (["code"], ["nohash"], [123456789]),
    )
    assert "BitmapOr" in plans
    for band in range(4):
        assert f"simhash_band{band}" in plans
    assert "Seq Scan on fragments" not in plans


def test_a_new_tenants_partitions_are_analyzed_once_they_fill(conn, ingest):
    """Until its partitions have statistics the planner takes org_id for selective and
    may read the whole tenant per primary-key probe: the write that finds a never
    analyzed partition holding 100 rows analyzes it."""
    ingest("acme", {"a.md": "# A\n\nFirst words.\n"})
    (no,) = conn.execute("select org_no from data.orgs where org_id = 'acme'").fetchone()

    def analyzed() -> dict[str, bool]:
        rows = conn.execute(
            "select t, exists (select 1 from pg_stats s where s.schemaname = 'data'"
            " and s.tablename = t || '_' || %s and s.attname = 'org_id') from unnest(%s::text[]) t",
            (no, ["fragments", "embeddings"]),
        ).fetchall()
        return dict(rows)

    # A vacuum sets a partition's size, not its column statistics: still unanalyzed.
    conn.commit()
    with psycopg.connect(conn.info.dsn, autocommit=True) as other:
        other.execute(f"vacuum data.fragments_{no}")
    assert analyzed() == {"fragments": False, "embeddings": False}
    conn.execute("""insert into data.fragments (org_id, doc_id, doc_version, namespace, kind, owner, text,
                        content_hash, token_count, chunker_version, simhash, tsv, active)
                    select 'acme', d.doc_id, 1, 'prose', 'doc', 'x', 'filler ' || g, md5(g::text), 2, 'test',
                           g, ''::tsvector, true
                    from data.documents d, generate_series(1, 100) g""")
    conn.commit()
    ingest("acme", {"b.md": "# B\n\nSecond words.\n"})
    assert analyzed() == {"fragments": True, "embeddings": False}


def test_unchanged_file_changes_nothing(conn, ingest):
    first = ingest("acme", {"inventory.py": INVENTORY}, repo="shop")
    state = counts(conn)
    again = ingest("acme", {"inventory.py": INVENTORY.replace("\n", "\r\n")}, repo="shop")
    assert first[0].changed and not again[0].changed
    assert again[0].version == first[0].version == 1
    assert counts(conn) == state


def _prefiltered_as_unchanged(conn, pipeline, org, repo, path, text, **fields) -> bool:
    """Whether the pre-chunking filter (service.unchanged_documents) skips this document."""
    from app.access import act_as

    act_as(conn, org, ADMIN)
    doc = pipeline.prepare(SourceDocument(path=path, content=text, **fields)).doc
    found = path in pipeline.unchanged(conn, Scope(org, repo, None, None), [doc])
    conn.rollback()
    return found


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"kind": "doc"}, {"kind": "anti-pattern"}),
        ({"metadata": {"status": "draft"}}, {"metadata": {"status": "final"}}),
        ({"metadata": {"status": "draft"}}, {}),
        ({"owner": "Ada"}, {"owner": "Grace"}),
        ({}, {"owner": "Grace"}),
    ],
)
def test_the_same_text_with_another_kind_metadata_or_owner_is_a_new_version(conn, ingest, pipeline, before, after):
    text = "# Failover\n\nPromote the replica, then repoint DNS to it.\n"
    first = ingest("acme", {"runbooks/failover.md": text}, repo="ops", **before)[0]
    assert not _prefiltered_as_unchanged(conn, pipeline, "acme", "ops", "runbooks/failover.md", text, **after)
    assert _prefiltered_as_unchanged(conn, pipeline, "acme", "ops", "runbooks/failover.md", text, **before)
    again = ingest("acme", {"runbooks/failover.md": text}, repo="ops", **after)[0]
    assert again.changed and again.version == first.version + 1
    assert again.created == 0  # the same chunks: no new fragment, no new embedding
    kind, metadata, owner = conn.execute(
        """select d.kind, v.metadata, d.owner from data.documents d
           join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version""",
    ).fetchone()
    assert metadata == after.get("metadata", {})
    if "kind" in after:
        assert kind == after["kind"]
    if "owner" in after:
        assert owner == after["owner"]
    live = conn.execute("select kind, owner, negative from data.fragments where active").fetchall()
    assert live and all(row == (kind, owner, kind == "anti-pattern") for row in live)
    assert _prefiltered_as_unchanged(conn, pipeline, "acme", "ops", "runbooks/failover.md", text, **after)
    assert not ingest("acme", {"runbooks/failover.md": text}, repo="ops", **after)[0].changed


def test_author_and_timestamp_alone_make_no_version(conn, ingest, pipeline):
    from datetime import UTC, datetime

    text = "# Failover\n\nPromote the replica, then repoint DNS to it.\n"
    ingest("acme", {"runbooks/failover.md": text}, repo="ops", author="Ada", timestamp=datetime(2025, 1, 1, tzinfo=UTC))
    later = {"author": "Grace", "timestamp": datetime(2026, 6, 1, tzinfo=UTC)}
    assert _prefiltered_as_unchanged(conn, pipeline, "acme", "ops", "runbooks/failover.md", text, **later)
    again = ingest("acme", {"runbooks/failover.md": text}, repo="ops", **later)[0]
    assert not again.changed and again.version == 1


def test_a_reassigned_owner_stays_when_the_same_text_names_the_old_one(conn, ingest, pipeline, as_principal):
    text = "# Failover\n\nPromote the replica, then repoint DNS to it.\n"
    ingest("acme", {"runbooks/failover.md": text}, repo="ops", owner="Ada")
    as_principal("acme")
    conn.execute("select * from service.owners_reassign('acme', 'Ada', 'Grace', 'ops')")
    conn.commit()
    assert _prefiltered_as_unchanged(conn, pipeline, "acme", "ops", "runbooks/failover.md", text, owner="Ada")
    assert not ingest("acme", {"runbooks/failover.md": text}, repo="ops", owner="Ada")[0].changed
    assert conn.execute("select owner, owner_source from data.documents").fetchone() == ("Grace", "reassigned")
    # Another kind is a new version; the same text keeps the reassignment on it.
    again = ingest("acme", {"runbooks/failover.md": text}, repo="ops", owner="Ada", kind="policy")[0]
    assert again.changed and again.version == 2
    assert conn.execute("select owner, owner_source from data.documents").fetchone() == ("Grace", "reassigned")
    assert conn.execute("select distinct owner from data.fragments where active").fetchall() == [("Grace",)]


@pytest.mark.parametrize(
    ("sent", "stored", "same"),
    [
        # What a git sync records is its own: a writer that sends none of it is compared without it.
        (({}, None, None), ({"git_commit": "c1", "git_blob": "b1"}, "Ada", "document"), True),
        (({"status": "draft"}, None, None), ({"git_commit": "c1", "status": "draft"}, "Ada", "document"), True),
        (({"status": "final"}, None, None), ({"git_commit": "c1", "status": "draft"}, "Ada", "document"), False),
        # A sync, which sends it, takes over what another writer stored.
        (({"git_commit": "c2"}, None, None), ({}, "Ada", "document"), False),
        (({"git_commit": "c2"}, None, None), ({"git_commit": "c1"}, "Ada", "document"), False),
        # An owner the document names is recorded as the document's, not as CODEOWNERS' or the default's.
        (({}, "Ada", "document"), ({}, "Ada", "codeowners"), False),
        (({}, "Ada", "document"), ({}, "Ada", "default"), False),
        (({}, "Ada", "document"), ({}, "Ada", "document"), True),
        (({}, "Ada", "codeowners"), ({}, "Bob", "codeowners"), True),  # CODEOWNERS moves are resolve_owners'
        (({}, "Ada", "document"), ({}, "Grace", "reassigned"), True),
    ],
)
def test_the_rule_of_a_same_document(conn, sent, stored, same):
    (metadata, owner, source), (stored_metadata, stored_owner, stored_source) = sent, stored
    got = conn.execute(
        "select data._same_document('h', 'doc', %s, %s, %s, 'h', 'doc', %s, %s, %s)",
        (Jsonb(metadata), owner, source, Jsonb(stored_metadata), stored_owner, stored_source),
    ).fetchone()[0]
    assert got is same


def test_changed_file_makes_a_new_version_that_replaces_fragments(conn, ingest):
    ingest("acme", {"inventory.py": INVENTORY}, repo="shop")
    edited = INVENTORY.replace(
        "def purge_expired(inventory: Inventory) -> int:", "def purge_stale_reservations(inventory: Inventory) -> int:"
    )
    result = ingest("acme", {"inventory.py": edited}, repo="shop")[0]
    assert result.version == 2 and result.changed
    # Unchanged units are reused (no new embedding), only the edited one is new.
    assert result.created == 1
    live = [r[0] for r in conn.execute("select symbol from data.fragments where active order by fragment_id")]
    assert "purge_stale_reservations" in live and "purge_expired" not in live
    versions = conn.execute("select version from data.document_versions order by version").fetchall()
    assert versions == [(1,), (2,)]
    hits = conn.execute(
        "select f.symbol from api.search_lexical('acme', 'purge_expired') s join data.fragments f using (fragment_id)"
    ).fetchall()
    assert ("purge_expired",) not in hits


def test_chunks_of_one_document_collapse_as_if_written_one_by_one(conn):
    """Each chunk is matched against the stored fragments and the earlier chunks of its
    own document alike: exact text first, then the nearest SimHash, the older fragment
    at equal distance."""
    import hashlib
    import json

    from app.access import ensure_admin_principal
    from tests.sql.test_bm25 import assert_statistics_match_active_fragments

    conn.execute("select service.create_org('acme')")
    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")

    def write(path: str, chunks: list[tuple[str, int]]) -> list[tuple]:
        doc_id, version, _changed, _rehome = conn.execute(
            "select * from service.begin_document('acme', null, null, null, %s, 'doc', %s, %s)",
            (path, path, hashlib.sha256(path.encode()).hexdigest()),
        ).fetchone()
        rows = [
            {
                "namespace": "prose",
                "owner": "tester",
                "heading_path": [],
                "lexical_heading": "",
                "symbol": None,
                "text": text,
                "content_hash": hashlib.sha256(text.encode()).hexdigest(),
                "token_count": 1,
                "chunker_version": "test",
                "simhash": simhash,
                "anchor": f"#{n}",
                "start_line": n,
                "end_line": n,
                "embedding": [1.0, 0.0, 0.0],
            }
            for n, (text, simhash) in enumerate(chunks, start=1)
        ]
        return conn.execute(
            "select * from service.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps(rows))
        ).fetchall()

    base = 0x0123456789ABCDEF
    [(_, stored, _)] = write("stored.md", [("stored words", base)])
    far = base ^ 0b1111  # 4 bits from the stored fragment: a new one
    written = write(
        "new.md",
        [
            ("alpha words", far),  # new
            ("alpha words", base ^ (1 << 60)),  # exact text of the new one above
            ("alpha word", far ^ (1 << 30)),  # 1 bit from the new one, 5 from the stored one
            ("beta words", base ^ (1 << 50)),  # 1 bit from the stored one
            ("gamma words", base ^ 0b0111),  # 3 bits from the stored one, 1 from the new one
            ("delta words", base ^ 0b0011),  # 2 bits from each: the older, stored one
            ("echo words", base ^ 0xFFFF0000),  # new
            ("echo words", base ^ 0xFF00FF00),  # exact text of the one above
            ("stored words", base ^ 0xFFFF),  # exact text of the stored one
        ],
    )
    alpha, echo = written[0][1], written[6][1]
    assert stored < alpha < echo
    assert written == [
        (1, alpha, True),
        (2, alpha, False),
        (3, alpha, False),
        (4, stored, False),
        (5, alpha, False),
        (6, stored, False),
        (7, echo, True),
        (8, echo, False),
        (9, stored, False),
    ]
    assert conn.execute("select count(*) from data.fragment_sources").fetchone() == (10,)
    assert conn.execute("select count(*) from data.embeddings").fetchone() == (3,)
    assert_statistics_match_active_fragments(conn)


def test_refused_documents_store_nothing(conn, pipeline):
    conn.execute("select service.create_org('acme')")
    with pytest.raises(RejectedDocument, match="binary"):
        pipeline.prepare(SourceDocument(path="logo.png", content=b"\x89PNG\x00\x00"))
    assert counts(conn) == (0, 0, 0)


def test_writing_needs_a_principal_of_that_org(conn, ingest, pipeline):
    import psycopg

    prepared = [pipeline.prepare(SourceDocument(path="a.md", content="hello there"))]
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no principal is bound"):
        pipeline.write(conn, Scope("acme"), prepared)
    conn.rollback()
    ingest("acme", {"b.md": "first"})
    conn.execute("select service.bind_principal('acme', 'admin')")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not write to org nobody"):
        pipeline.write(conn, Scope("nobody"), prepared)


def live_citation(conn, symbol: str):
    return conn.execute(
        """select c.path, c.doc_version, c.text from api.retrieve_candidates('acme', %s, '{}'::jsonb,
               p_k_dense => 0) c where c.symbol = %s""",
        (symbol, symbol),
    ).fetchone()


def test_exact_text_is_revived_without_a_new_embedding(conn, ingest):
    first = ingest("acme", {"inventory.py": INVENTORY})[0]
    ingest("acme", {"inventory.py": INVENTORY.replace("purge_expired", "purge_old")})
    third = ingest("acme", {"inventory.py": INVENTORY})[0]
    assert third.version == 3 and third.created == 0 and first.created == third.fragments
    assert live_citation(conn, "purge_expired")[:2] == ("inventory.py", 3)
    from tests.sql.test_bm25 import assert_statistics_match_active_fragments

    assert_statistics_match_active_fragments(conn)


def test_shared_fragment_stays_live_through_the_other_source(conn, ingest):
    ingest("acme", {"a/inventory.py": INVENTORY, "b/inventory.py": INVENTORY})
    fragments = counts(conn)[0]
    ingest("acme", {"a/inventory.py": "def unrelated():\n    return 42\n"})
    assert counts(conn)[0] == fragments + 1
    assert live_citation(conn, "purge_expired")[:2] == ("b/inventory.py", 1)
    conn.execute("delete from data.documents where path = 'a/inventory.py'")
    assert live_citation(conn, "purge_expired")[:2] == ("b/inventory.py", 1), "origin deleted, text kept"
    conn.execute("delete from data.documents where path = 'b/inventory.py'")
    assert live_citation(conn, "purge_expired") is None
    from tests.sql.test_bm25 import assert_statistics_match_active_fragments

    assert_statistics_match_active_fragments(conn)


def test_near_duplicate_pointer_is_rehomed_when_the_original_changes(conn, ingest):
    near = INVENTORY.replace(
        '"""Stock levels and the reservations held against them."""',
        '"""Stock levels and the reservations held against it."""',
    )
    ingest("acme", {"a/inventory.py": INVENTORY})
    assert ingest("acme", {"b/inventory.py": near})[0].created == 0, "the near copy collapses at first"
    ingest("acme", {"a/inventory.py": "def unrelated():\n    return 42\n"})
    path, version, text = live_citation(conn, "Inventory")
    assert path == "b/inventory.py" and version == 1
    assert "held against it." in text, "the cited source holds exactly the returned text"
    exact = conn.execute("""select bool_and(s.content_hash = f.content_hash) from data.fragments f
                            join data.fragment_sources s using (fragment_id)
                            where f.active and s.retired_at is null""").fetchone()[0]
    assert exact, "every live pointer of an active fragment is exact after re-homing"
    from tests.sql.test_bm25 import assert_statistics_match_active_fragments

    assert_statistics_match_active_fragments(conn)


def test_persona_fragments_only_for_that_persona(conn, ingest, retriever):
    import msgspec

    from app.wire.retrieve import RetrieveRequest

    ingest(
        "acme",
        {"review.md": "# Accessibility review\n\nEvery icon button needs an aria-label.\n"},
        persona="a11y-reviewer",
    )

    def paths(scope):
        request = msgspec.convert({"query": "icon button aria-label", "scope": scope}, RetrieveRequest)
        return {c.path for c in retriever.candidates(conn, request)}

    assert "review.md" not in paths({"org_id": "acme"})
    with pytest.raises(psycopg.errors.NoDataFound, match="unknown persona backend-sre"):
        paths({"org_id": "acme", "persona_id": "backend-sre"})  # a misspelled persona is no empty answer
    conn.rollback()
    conn.execute("select service.ensure_scope('acme', null, 'backend-sre')")
    assert "review.md" not in paths({"org_id": "acme", "persona_id": "backend-sre"})
    assert "review.md" in paths({"org_id": "acme", "persona_id": "a11y-reviewer"})
