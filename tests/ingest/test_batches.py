"""The one batched-ingest loop (CLI, eval corpora, bench): groups of prepared documents,
each committed as the principal; refusals reported, not written; a caller may stop."""

from __future__ import annotations

import pytest

from app.access import ensure_admin_principal
from app.ingest.batches import ingest_groups
from app.ingest.normalize import SourceDocument
from app.scope import Scope

DOCS = {
    f"notes/n{i}.md": f"# Note {i}\n\nFinding number {i} about the journal and its checkpoints.\n" for i in range(5)
}
ITEMS = [
    ("notes/n0.md", DOCS["notes/n0.md"]),
    ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00"),
    *((p, t) for p, t in DOCS.items() if p != "notes/n0.md"),
    ("empty.md", ""),
]


def source(item) -> SourceDocument:
    path, content = item
    return SourceDocument(path=path, content=content.encode() if isinstance(content, str) else content)


@pytest.fixture
def org(conn, pipeline):
    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    pipeline.register_models(conn)
    conn.commit()
    return Scope("acme", "docs")


def documents(conn) -> list[str]:
    return [r[0] for r in conn.execute("select path from data.documents order by path")]


def test_groups_fill_with_prepared_documents_and_report_refusals(conn, pipeline, org):
    refused, written = [], []
    groups = list(
        ingest_groups(
            conn,
            pipeline,
            org,
            "admin",
            ITEMS,
            source,
            size=2,
            on_refused=lambda item, exc: refused.append(item[0]),
            on_document=lambda r: written.append(r.path),
        )
    )
    assert [len(g.prepared) for g in groups] == [2, 2, 1]
    assert [g.items for g in groups] == [3, 2, 2]  # a refusal does not shorten a group
    assert [item[0] for g in groups for item, _exc in g.refused] == refused == ["logo.png", "empty.md"]
    assert written == sorted(DOCS) and documents(conn) == sorted(DOCS)
    assert sum(g.changed for g in groups) == 5 and sum(g.fragments for g in groups) >= 5
    assert all(g.write_seconds > 0 for g in groups)
    # Once there, nothing changes; the principal wrote under row-level security.
    again = list(ingest_groups(conn, pipeline, org, "admin", ITEMS, source))
    assert len(again) == 1 and again[0].changed == 0 and again[0].items == len(ITEMS)


def test_a_caller_may_stop_between_groups_or_at_a_refusal(conn, pipeline, org):
    for _group in ingest_groups(conn, pipeline, org, "admin", ITEMS, source, size=2):
        break  # the first group is committed before it is handed back
    assert documents(conn) == ["notes/n0.md", "notes/n1.md"]

    class Stop(Exception):
        pass

    def stop(item, exc):
        raise Stop(item[0])

    with pytest.raises(Stop, match="logo.png"):
        list(ingest_groups(conn, pipeline, Scope("acme", "other"), "admin", ITEMS, source, size=2, on_refused=stop))
    assert documents(conn) == ["notes/n0.md", "notes/n1.md"]  # nothing of the stopped group


def test_a_principal_without_write_grant_writes_nothing(conn, pipeline, org):
    import psycopg

    conn.execute("select service.create_principal('acme', 'reader', 'agent', 'reader')")
    conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
    conn.commit()
    with pytest.raises(psycopg.Error):
        list(ingest_groups(conn, pipeline, org, "reader", ITEMS, source))
    assert documents(conn) == []


def test_an_unchanged_document_is_not_chunked_again(conn, pipeline, org, monkeypatch):
    list(ingest_groups(conn, pipeline, org, "admin", ITEMS, source))
    ids = dict(conn.execute("select path, doc_id from data.documents").fetchall())
    conn.execute("select service.bind_principal('acme', 'admin')")
    conn.execute("select service.delete_document(%s)", (ids["notes/n4.md"],))
    conn.commit()
    chunked: list[str] = []
    chunk = pipeline.chunk
    monkeypatch.setattr(pipeline, "chunk", lambda doc: chunked.append(doc.path) or chunk(doc))
    edited = [(p, t + "One more line.\n") if p == "notes/n2.md" else (p, t) for p, t in ITEMS]
    reported: dict[str, tuple[int, int, bool]] = {}
    groups = list(
        ingest_groups(
            conn,
            pipeline,
            org,
            "admin",
            edited,
            source,
            size=3,
            on_document=lambda r: reported.__setitem__(r.path, (r.doc_id, r.version, r.changed)),
        )
    )
    # Only the edited document and the deleted one (which comes back) are chunked.
    assert sorted(chunked) == ["notes/n2.md", "notes/n4.md"]
    assert sum(g.changed for g in groups) == 2 and sum(len(g.results) for g in groups) == 5
    assert reported == {
        "notes/n0.md": (ids["notes/n0.md"], 1, False),
        "notes/n1.md": (ids["notes/n1.md"], 1, False),
        "notes/n2.md": (ids["notes/n2.md"], 2, True),
        "notes/n3.md": (ids["notes/n3.md"], 1, False),
        "notes/n4.md": (ids["notes/n4.md"], 2, True),
    }
    # The same content in another scope is another document: chunked and written.
    chunked.clear()
    list(ingest_groups(conn, pipeline, Scope("acme", "elsewhere"), "admin", ITEMS[:1], source))
    assert chunked == ["notes/n0.md"]


def test_a_group_asks_for_duplicates_once(conn, pipeline, org, monkeypatch):
    """Every chunk of a group is matched against stored fragments in one call before the
    org's write lock (to embed the new ones outside it) and in one call under it; only
    the new ones are embedded, once."""
    import psycopg

    list(ingest_groups(conn, pipeline, org, "admin", ITEMS[:1], source))
    calls: list[str] = []
    execute = psycopg.Connection.execute

    def counting(self, query, params=None, **kwargs):
        calls.append(str(query))
        return execute(self, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counting)
    embedded: list[str] = []

    class Counting:
        def __init__(self, real):
            self.real = real

        def __getattr__(self, name):
            return getattr(self.real, name)

        def embed(self, texts):
            embedded.extend(texts)
            return self.real.embed(texts)

    monkeypatch.setitem(pipeline.embedders, "prose", Counting(pipeline.embedders["prose"]))
    copy = [(p.replace("notes/", "copies/"), t) for p, t in DOCS.items()]  # n0's text is stored already
    groups = list(ingest_groups(conn, pipeline, org, "admin", copy, source))
    assert sum(1 for q in calls if "service.match_fragments" in q) == 2
    assert sum(g.changed for g in groups) == len(DOCS) and sum(g.created for g in groups) == len(DOCS) - 1
    assert len(embedded) == len(DOCS) - 1 and not any("Note 0" in t for t in embedded)


def test_a_repeated_path_is_still_refused_when_unchanged(conn, pipeline, org):
    from app.ingest.pipeline import DuplicatePaths

    list(ingest_groups(conn, pipeline, org, "admin", ITEMS[:1], source))
    with pytest.raises(DuplicatePaths):
        list(ingest_groups(conn, pipeline, org, "admin", [ITEMS[0], ITEMS[0]], source))


def test_unchanged_documents_needs_write_grants(conn, pipeline, org):
    import psycopg

    list(ingest_groups(conn, pipeline, org, "admin", ITEMS[:1], source))
    conn.execute("select service.create_principal('acme', 'reader', 'agent', 'reader')")
    conn.execute("select service.grant_scope('acme', 'reader', 'org', null, false)")
    conn.execute("select service.bind_principal('acme', 'reader')")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "select * from service.unchanged_documents('acme', 'docs', null, null, %s::jsonb)",
            ('[{"path": "notes/n0.md", "content_hash": "whatever", "kind": "doc"}]',),
        )
