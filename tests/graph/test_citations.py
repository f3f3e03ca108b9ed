"""The citation graph in the database: references recorded at ingest, resolved now or
when their target arrives, dropped with retired fragments; authority from PageRank."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from tests.conftest import login_url

ADR_12 = "# ADR 12: Pins\n\nPins win over relevance.\n"


def links(conn) -> set[tuple[str, str, str | None]]:
    """(citing path, target key, cited path or None) of every live reference."""
    rows = conn.execute("""
        select d.path, l.target_key, td.path
        from data.fragment_links l join data.documents d on d.doc_id = l.doc_id
        left join data.documents td on td.doc_id = l.target_doc_id
    """).fetchall()
    return set(rows)


def authority(conn) -> dict[str, float]:
    """Authority per document path (its best fragment), after a refresh."""
    conn.execute("select service.refresh_authority()")
    rows = conn.execute("""
        select d.path, max(a.authority) from data.fragment_authority a
        join data.fragment_sources s on s.fragment_id = a.fragment_id and s.retired_at is null
        join data.documents d on d.doc_id = s.doc_id
        group by d.path
    """).fetchall()
    return dict(rows)


def test_a_reference_waits_for_its_target_and_resolves_when_it_arrives(conn, ingest):
    ingest("acme", {"docs/guide.md": "# Guide\n\nSee [the pins ADR](adr/0012-pins.md) and ADR-7.\n"})
    assert links(conn) == {
        ("docs/guide.md", "path:docs/adr/0012-pins.md", None),
        ("docs/guide.md", "adr:7", None),
    }
    ingest("acme", {"docs/adr/0012-pins.md": ADR_12})
    assert ("docs/guide.md", "path:docs/adr/0012-pins.md", "docs/adr/0012-pins.md") in links(conn)
    ingest("acme", {"docs/adr/0007-old.md": "# ADR 7\n\nOld. Superseded by ADR-12.\n"})
    assert links(conn) >= {
        ("docs/guide.md", "adr:7", "docs/adr/0007-old.md"),
        ("docs/adr/0007-old.md", "adr:12", "docs/adr/0012-pins.md"),
    }
    scores = authority(conn)
    assert scores["docs/adr/0012-pins.md"] == 1.0
    assert 0 < scores["docs/adr/0007-old.md"] < 1.0


def test_code_names_resolve_to_their_definition_by_module(conn, ingest):
    ingest(
        "acme",
        {
            "pkg/core.py": "class Command:\n    def run(self):\n        return 1\n\n\ndef helper():\n    return 2\n",
            "other/core.py": "class Command:\n    pass\n",
            "pkg/cli.py": "from .core import Command\n\n\ndef main():\n    return Command().run()\n",
        },
        repo="tool",
    )
    found = links(conn)
    assert ("pkg/cli.py", "module:pkg.core", "pkg/core.py") in found
    cited = conn.execute(
        "select f.symbol from data.fragment_links l join data.fragments f on f.fragment_id = l.target_fragment_id"
        " where l.target_name is not null"
    ).fetchall()
    assert cited and {s for (s,) in cited} <= {"Command", "Command.run"}


def test_resolution_reads_the_named_documents_once(conn, ingest):
    """However many references name a document, resolving them reads the documents and
    their fragments once, not once per reference."""
    import re

    modules = {
        f"pkg/user{i}.py": f"from pkg.core import Command\n\n\ndef run{i}():\n    return Command().run()\n"
        for i in range(12)
    }
    core = "class Command:\n    def run(self):\n        return 1\n"
    ingest("acme", {"pkg/core.py": core, **modules}, repo="tool")
    assert sum(1 for _citing, key, cited in links(conn) if key == "module:pkg.core" and cited) >= 12
    conn.execute("update data.fragment_links set target_doc_id = null, target_fragment_id = null")
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    conn.execute("load 'auto_explain'")
    for setting in ("log_min_duration = 0", "log_nested_statements = on", "log_analyze = on", "log_level = notice"):
        conn.execute(f"set auto_explain.{setting}")
    resolved = conn.execute("select data._resolve_links(array(select link_id from data.fragment_links))").fetchone()
    conn.execute("reset auto_explain.log_min_duration")
    assert resolved[0] >= 12
    plans = "\n".join(notices)
    scans = re.findall(r"Scan[^\n]* on (?:documents|fragment_sources|fragments_\d+) [^\n]*loops=(\d+)", plans)
    assert scans and all(int(loops) == 1 for loops in scans), plans


def test_retired_fragments_drop_out(conn, ingest):
    ingest("acme", {"a.md": "# A\n\nSee [b](b.md).\n", "b.md": "# B\n\nThe target.\n"})
    assert authority(conn)["b.md"] == 1.0
    ingest("acme", {"a.md": "# A\n\nNo link any more.\n"})
    assert "b.md" not in authority(conn)


def test_pagerank_matches_a_hand_computed_graph(conn):
    """a -> b, a -> c, b -> c, c -> d, d -> c: PR = 0.15 + 0.85 * sum PR(y)/out(y),
    30 Jacobi iterations from PR = 1, as numpy computes it."""
    conn.execute("select service.create_org('g')")
    conn.execute("insert into data.documents (org_id, path, kind) values ('g', 'x.md', 'doc')")
    doc = conn.execute("select doc_id from data.documents where org_id = 'g'").fetchone()[0]
    conn.execute(
        "insert into data.document_versions (doc_id, version, content_hash, content) values (%s, 1, 'h', 'x')", (doc,)
    )
    ids = {}
    for name in "abcd":
        ids[name] = conn.execute(
            "insert into data.fragments (org_id, namespace, kind, owner, text, content_hash, token_count,"
            " chunker_version, simhash, tsv) values ('g', 'prose', 'doc', 'o', %s, %s, 1, 'v', 0, ''::tsvector)"
            " returning fragment_id",
            (name, name),
        ).fetchone()[0]
    edges = [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("d", "c")]
    for citing, cited in edges:
        conn.execute(
            "insert into data.fragment_links (org_id, fragment_id, doc_id, link_type, target, target_key,"
            " target_fragment_id) values ('g', %s, %s, 'link', %s, %s, %s)",
            (ids[citing], doc, cited, f"path:{cited}", ids[cited]),
        )
    got = {
        f: (pr, auth)
        for f, pr, auth in conn.execute("select fragment_id, pagerank, authority from data._citation_pagerank()")
    }
    names = "abcd"
    m = np.zeros((4, 4))
    for citing, cited in edges:
        m[names.index(cited), names.index(citing)] = 1.0 / sum(1 for c, _ in edges if c == citing)
    pr = np.ones(4)
    for _ in range(30):
        pr = 0.15 + 0.85 * m @ pr
    gain = pr - 0.15
    for i, name in enumerate(names):
        assert got[ids[name]][0] == pytest.approx(pr[i], abs=1e-9)
        assert got[ids[name]][1] == pytest.approx(gain[i] / gain.max(), abs=1e-9)
    # By hand: a is cited by nobody; b only by a (half of a's 0.15).
    assert got[ids["a"]][0] == pytest.approx(0.15, abs=1e-12)
    assert got[ids["b"]][0] == pytest.approx(0.15 + 0.85 * 0.15 / 2, abs=1e-12)


def test_links_are_under_row_level_security(conn, ingest, db_url, logins):
    """As an analyst login (neither owner nor superuser) mapped to a principal granted
    repo platform: links whose citing or cited fragment it may not read are invisible,
    writes are refused, and the authority view is not selectable."""
    ingest("acme", {"org/policy.md": "# Policy\n\nSee [journal](../platform/journal.md).\n"})
    ingest(
        "acme",
        {"platform/journal.md": "# Journal\n\nSee [policy](../org/policy.md) and [keys](../secret/keys.md).\n"},
        repo="platform",
    )
    ingest("acme", {"secret/keys.md": "# Keys\n\nSee [journal](../platform/journal.md).\n"}, repo="secret")
    ingest("globex", {"a.md": "# A\n\nSee [b](b.md).\n", "b.md": "# B\n\nTarget.\n"})
    conn.execute("select service.create_principal('acme', 'alice-agent', 'agent', '', %s)", (logins["analysts"][0],))
    conn.execute("select service.grant_scope('acme', 'alice-agent', 'repo', 'platform')")
    conn.commit()
    assert len(links(conn)) == 5 and all(cited for _p, _k, cited in links(conn))  # the owner: all, resolved
    with psycopg.connect(login_url(db_url, logins["analysts"][0])) as alice:
        seen = set(
            alice.execute("""
                select d.path, l.target_key from data.fragment_links l join data.documents d on d.doc_id = l.doc_id
            """).fetchall()
        )
        assert seen == {
            ("org/policy.md", "path:platform/journal.md"),
            ("platform/journal.md", "path:org/policy.md"),
        }
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute(
                "insert into data.fragment_links (org_id, fragment_id, doc_id, link_type, target, target_key)"
                " select org_id, fragment_id, doc_id, 'link', 'x', 'path:x' from data.fragments limit 1"
            )
        alice.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("select * from data.fragment_authority")
