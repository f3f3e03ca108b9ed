"""An ingestion group's versions written in one call (service.begin_documents,
service.add_documents) store exactly what the same versions written one at a time
(service.begin_document, service.add_fragments) store, and the group pays BM25,
references and validity once instead of once per document."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from app.access import ensure_admin_principal
from tests.sql.test_bm25 import assert_statistics_match_active_fragments

BASE = 0x0123456789ABCDEF


def chunk(text: str, simhash: int, refs: list[dict] | None = None, reading: bool = False, vector: int = 0) -> dict:
    digest = hashlib.sha256(text.encode()).digest()
    row = {
        "namespace": "prose",
        "owner": "tester",
        "heading_path": ["h"],
        "lexical_heading": "h",
        "symbol": None,
        "text": text,
        "content_hash": digest.hex(),
        "token_count": len(text.split()),
        "chunker_version": "test",
        "simhash": simhash - (1 << 64) if simhash >= 1 << 63 else simhash,
        "anchor": "",
        "start_line": 1,
        "end_line": 1,
        "embedding": [1.0, float(vector), 0.5],
    }
    if refs is not None:
        row["references"] = refs
    if reading:  # a reading is made of its text: bytes 9 to 12 are the text's SHA-256 prefix
        row["reading"] = base64.b64encode(b"\x01" * 8 + digest[:4] + text.encode()[:8]).decode()
    return row


def ref(path: str) -> dict:
    return {"type": "link", "target": path, "key": f"path:{path}", "name": None, "anchor": None, "repo": None}


# Rounds of (path, kind, chunks): versions across documents that collapse into each
# other's new fragments (exact and near), into retired fragments (revived, then near
# copies of those), within one document, and reference each other both ways.
ROUNDS = [
    [
        (
            "a.md",
            "doc",
            [
                chunk("shared words here", BASE, [ref("b.md")]),
                chunk("alpha one", BASE ^ 0xF0F0F0),
                chunk("alpha one", BASE ^ 0xF0F0F1),
                chunk("alpha uno", BASE ^ 0xF0F0F3),
            ],
        ),
        (
            "b.md",
            "doc",
            [
                chunk("shared words here", BASE ^ 0x1, [ref("a.md"), ref("c.md")]),
                chunk("shared word here", BASE ^ 0x3),  # 2 bits from a.md's new fragment
                chunk("beta words", BASE ^ 0xFF00000000, reading=True, vector=1),
            ],
        ),
        (
            "c.md",
            "anti-pattern",
            [
                chunk("gamma words", BASE ^ 0xFF00000003, [ref("b.md")]),  # 2 from beta
                chunk("delta words", BASE ^ 0xABCDEF000000),
            ],
        ),
    ],
    [
        (
            "a.md",
            "doc",
            [chunk("shared words here", BASE, [ref("d.md")]), chunk("alpha two", BASE ^ 0xF0F0F0 ^ 0x100000000)],
        ),
        (
            "d.md",
            "doc",
            [
                chunk("alpha one", BASE ^ 0xF0F0F0, reading=True),  # a.md's retired fragment: revived
                chunk("alpha one!", BASE ^ 0xF0F0F0 ^ 0x4, [ref("a.md")]),  # 1 bit from the revived one
                chunk("epsilon", BASE ^ 0x7777777700000000, vector=2),
            ],
        ),
        (
            "b.md",
            "doc",
            [
                chunk("shared words here", BASE ^ 0x1),
                chunk("beta words", BASE ^ 0xFF00000000),
                chunk("beta words again", BASE ^ 0xFF00000001),
            ],
        ),
        ("c.md", "doc", [chunk("gamma words", BASE ^ 0xFF00000003), chunk("delta words", BASE ^ 0xABCDEF000000)]),
    ],
]


def write(conn, org: str, at_once: bool, rounds: list = ROUNDS, announce: bool = False) -> None:
    """`announce`: at once, with each version's chunk hashes given to begin_documents
    (as the pipeline gives them), so the fragments those texts hold stay active."""
    conn.execute("select service.create_org(%s)", (org,))
    ensure_admin_principal(conn, org, "admin")
    conn.execute("select service.bind_principal(%s, 'admin')", (org,))
    for versions in rounds:
        docs = [
            {"path": path, "kind": kind, "content": path + json.dumps(chunks), "owner": "tester"}
            for path, kind, chunks in versions
        ]
        for d, (_path, _kind, chunks) in zip(docs, versions):
            d["content_hash"] = hashlib.sha256(d["content"].encode()).hexdigest()
            if announce:
                d["namespace"] = "prose"
                d["chunk_hashes"] = [c["content_hash"] for c in chunks]
        if at_once:
            begun = conn.execute(
                "select doc_id, version from service.begin_documents(%s, null, null, null, %s)",
                (org, json.dumps(docs)),
            ).fetchall()
            payload = [
                {"doc_id": doc_id, "version": version, "chunks": chunks}
                for (doc_id, version), (_path, _kind, chunks) in zip(begun, versions)
            ]
            conn.execute("select * from service.add_documents(%s)", (json.dumps(payload),))
        else:
            begun = [
                conn.execute(
                    "select doc_id, version from service.begin_document(%s, null, null, null, %s, %s, %s, %s,"
                    " p_owner => %s, p_owner_source => 'document')",
                    (org, d["path"], d["kind"], d["content"], d["content_hash"], d["owner"]),
                ).fetchone()
                for d in docs
            ]
            for (doc_id, version), (_path, _kind, chunks) in zip(begun, versions):
                conn.execute("select * from service.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps(chunks)))


def stored(conn, org: str) -> dict[str, list]:
    """Everything a write leaves, with fragment ids as their rank in the org (both
    writers take ids in the same order) and documents by path."""
    rank = "(select count(*) from data.fragments r where r.org_id = %(org)s and r.fragment_id <= {id})"
    queries = {
        "fragments": f"""
            select {rank.format(id="f.fragment_id")}, d.path, f.doc_version, f.namespace, f.kind, f.owner,
                   f.heading_path, f.text, f.content_hash, f.simhash, f.tsv::text, f.active, f.negative, f.reading,
                   f.token_count, f.valid_from, f.valid_until
            from data.fragments f join data.documents d on d.doc_id = f.doc_id
            where f.org_id = %(org)s order by 1""",
        "sources": f"""
            select {rank.format(id="s.fragment_id")}, d.path, s.doc_version, s.ordinal, s.anchor, s.content_hash,
                   s.retired_at is null
            from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id
            where s.org_id = %(org)s order by 2, 3, 4, 1""",
        "embeddings": f"""
            select {rank.format(id="e.fragment_id")}, e.model_id, e.embedding::text
            from data.embeddings e where e.org_id = %(org)s order by 1, 2""",
        "links": f"""
            select {rank.format(id="l.fragment_id")}, d.path, l.link_type, l.target_key, t.path,
                   {rank.format(id="l.target_fragment_id")}, l.resolved_at is not null,
                   (select count(*) from data.fragment_links x where x.org_id = l.org_id and x.link_id <= l.link_id)
            from data.fragment_links l join data.documents d on d.doc_id = l.doc_id
            left join data.documents t on t.doc_id = l.target_doc_id
            where l.org_id = %(org)s order by 8""",
        "documents": """
            select d.path, d.kind, d.current_version, d.owner, d.owner_source, v.version, v.content_hash
            from data.documents d join data.document_versions v on v.doc_id = d.doc_id
            where d.org_id = %(org)s order by 1, 6""",
        "terms": """
            select t.term, t.repo_id, t.df from data.bm25_terms t where t.org_id = %(org)s order by 1, 2""",
        "corpus": """
            select c.repo_id, c.fragment_count, c.total_length from data.bm25_corpus c
            where c.org_id = %(org)s and c.fragment_count > 0 order by 1""",
        "postings": f"""
            select b.term, {rank.format(id="p.fragment_id")}, p.tf, p.dl
            from data.bm25_blocks b, extensions.bm25_postings(b.postings) p where b.org_id = %(org)s
            order by 1, 2""",
    }
    return {name: conn.execute(query, {"org": org}).fetchall() for name, query in queries.items()}


@pytest.mark.parametrize("announce", [False, True], ids=["plain", "chunk-hashes"])
def test_versions_written_at_once_store_what_versions_written_one_by_one_store(conn, announce):
    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    write(conn, "one-by-one", at_once=False)
    write(conn, "at-once", at_once=True, announce=announce)
    one, once = stored(conn, "one-by-one"), stored(conn, "at-once")
    for name in one:
        assert once[name] == one[name], name
    # The scenario exercises what it means to: collapses across versions (exact and
    # near) and within one, a fragment retired by its document's new version and revived
    # by another document (which gives it its reading), a near copy of the revived
    # fragment, a flag decided again by a new version, references resolved both ways.
    fragments = once["fragments"]
    assert len(fragments) == 6 and all(f[11] for f in fragments)
    assert len(once["sources"]) == 18  # c.md v1's near copy of beta was detached when b.md retired it
    d_sources = [s for s in once["sources"] if s[1] == "d.md"]
    revived = d_sources[0][0]
    assert d_sources[1][0] == revived and fragments[revived - 1][1] == "a.md" and fragments[revived - 1][13]
    assert [s[6] for s in once["sources"] if s[0] == revived and s[1] == "a.md"] == [False, False, False]
    assert [link[6] for link in once["links"]] == [True] * 5
    assert_statistics_match_active_fragments(conn)


@pytest.mark.parametrize("announce", [False, True], ids=["plain", "chunk-hashes"])
def test_a_revived_fragment_is_matched_by_its_stored_simhash_within_the_group(conn, announce):
    """A fragment stored under another SimHash than its text's today (an older writer's),
    revived by an exact copy early in a group, is a near match for a later chunk by its
    stored SimHash, as when the versions were written one at a time."""
    stored_hash = BASE ^ 0xFF
    rounds = [
        [("x.md", "doc", [chunk("kappa words", stored_hash)])],
        [("x.md", "doc", [chunk("other words", BASE ^ 0xFFFFFFFF00000000)])],
        [
            ("y.md", "doc", [chunk("kappa words", stored_hash ^ 0xFFFF0000FFFF0000)]),
            ("z.md", "doc", [chunk("kappa wordz", stored_hash ^ 0x1)]),
        ],
    ]
    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    write(conn, "one-by-one", at_once=False, rounds=rounds)
    write(conn, "at-once", at_once=True, rounds=rounds, announce=announce)
    one, once = stored(conn, "one-by-one"), stored(conn, "at-once")
    for name in one:
        assert once[name] == one[name], name
    assert [(s[0], s[1]) for s in once["sources"] if s[6]] == [(2, "x.md"), (1, "y.md"), (1, "z.md")]


def test_announced_texts_keep_their_fragments_active_and_the_rest_follow_the_rule(conn):
    """A new version whose begin_documents names its chunks' texts leaves the fragments
    holding them untouched (no trip out of BM25 and back: the row is not rewritten);
    a named text no chunk then writes does not keep its fragment: add_documents
    deactivates it, as the rule says, and BM25 drops it."""
    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    write(
        conn,
        "acme",
        at_once=True,
        rounds=[[("a.md", "doc", [chunk("kept words", BASE), chunk("lost words", BASE ^ 0xFFFF00000000)])]],
    )
    ids = dict(conn.execute("select text, fragment_id from data.fragments where org_id = 'acme'").fetchall())
    before = conn.execute(
        "select xmin::text from data.fragments where fragment_id = %s", (ids["kept words"],)
    ).fetchone()
    doc = {"path": "a.md", "kind": "doc", "content": "a.md v2", "owner": "tester", "namespace": "prose"}
    doc["content_hash"] = hashlib.sha256(doc["content"].encode()).hexdigest()
    # Both texts announced; only one is written again, with a new one.
    doc["chunk_hashes"] = [hashlib.sha256(t.encode()).hexdigest() for t in ("kept words", "lost words")]
    ((doc_id, version),) = conn.execute(
        "select doc_id, version from service.begin_documents('acme', null, null, null, %s)", (json.dumps([doc]),)
    ).fetchall()
    assert conn.execute(
        "select bool_and(active) from data.fragments where fragment_id = any(%s)", (list(ids.values()),)
    ).fetchone() == (True,)
    chunks = [chunk("kept words", BASE), chunk("new words", BASE ^ 0xFFFFFFFF00000000)]
    conn.execute(
        "select * from service.add_documents(%s)",
        (json.dumps([{"doc_id": doc_id, "version": version, "chunks": chunks}]),),
    )
    active = dict(conn.execute("select text, active from data.fragments where org_id = 'acme'").fetchall())
    assert active == {"kept words": True, "lost words": False, "new words": True}
    after = conn.execute(
        "select xmin::text from data.fragments where fragment_id = %s", (ids["kept words"],)
    ).fetchone()
    assert after == before
    indexed = {
        row[0]
        for row in conn.execute(
            "select distinct p.fragment_id from data.bm25_blocks b, extensions.bm25_postings(b.postings) p"
            " where b.org_id = 'acme'"
        )
    }
    assert ids["kept words"] in indexed and ids["lost words"] not in indexed
    assert_statistics_match_active_fragments(conn)


def test_chunk_hashes_need_their_namespace(conn):
    import psycopg

    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    doc = {"path": "a.md", "kind": "doc", "content": "x", "content_hash": hashlib.sha256(b"x").hexdigest()}
    doc["chunk_hashes"] = ["00"]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="namespace of their chunks"):
        conn.execute("select * from service.begin_documents('acme', null, null, null, %s)", (json.dumps([doc]),))


def test_a_bad_version_in_a_group_writes_nothing(conn):
    """A chunk that cannot be written fails the whole call with the same error as alone:
    no fragment, pointer or vector of the group's other versions is left behind."""
    import psycopg
    import pytest

    conn.execute("select service.register_embedding_model('prose', 'test-model', 3)")
    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    docs = [
        {"path": p, "kind": "doc", "content": p, "content_hash": hashlib.sha256(p.encode()).hexdigest()}
        for p in ("good.md", "bad.md")
    ]
    begun = conn.execute(
        "select doc_id, version from service.begin_documents('acme', null, null, null, %s)", (json.dumps(docs),)
    ).fetchall()
    bad = chunk("bad words", BASE ^ 0xFFFF00000000)
    bad["embedding"] = [1.0, 0.0]  # two dimensions for a three-dimension model
    payload = [
        {"doc_id": begun[0][0], "version": begun[0][1], "chunks": [chunk("good words", BASE)]},
        {"doc_id": begun[1][0], "version": begun[1][1], "chunks": [bad]},
    ]
    conn.execute("savepoint before")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="chunk 1 is new and needs a 3 -dimension"):
        conn.execute("select * from service.add_documents(%s)", (json.dumps(payload),))
    conn.execute("rollback to savepoint before")
    counts = conn.execute(
        "select (select count(*) from data.fragments), (select count(*) from data.fragment_sources),"
        " (select count(*) from data.embeddings), (select count(*) from data.bm25_blocks)"
    ).fetchone()
    assert counts == (0, 0, 0, 0)


def test_a_group_is_indexed_and_linked_once_not_per_document(conn, pipeline):
    """Through the real lane: writing six documents runs BM25's index, the references'
    resolution and the validity refresh once for the group (they ran once per document,
    and BM25 once more per revived chunk)."""
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope

    conn.execute("set track_functions = 'all'")
    conn.execute("select service.create_org('acme')")
    pipeline.register_models(conn)
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    files = {
        f"docs/topic{i}.md": f"# Topic {i}\n\nSee [the next one](topic{i + 1}.md) about subject {i}.\n"
        f"\n## Details\n\nDetails of topic {i}: words {i} and more words {i * 7}.\n"
        for i in range(6)
    }
    prepared = [pipeline.prepare(SourceDocument(path=p, content=c)) for p, c in files.items()]
    results = pipeline.write(conn, Scope("acme"), prepared)
    assert sum(r.created for r in results) >= 6

    def calls(name: str) -> int:
        row = conn.execute(
            "select coalesce(sum(pg_stat_get_xact_function_calls(p.oid)), 0) from pg_proc p"
            " join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'data' and p.proname = %s",
            (name,),
        ).fetchone()
        return int(row[0])

    assert calls("_bm25_index") == 1
    assert calls("_resolve_links") == 1
    assert calls("_refresh_validity") == 1
    assert conn.execute("select count(*) from data.fragment_links where resolved_at is not null").fetchone()[0] >= 5
    assert_statistics_match_active_fragments(conn)


def test_a_case_variant_of_a_kept_text_written_first_is_new(conn, ingest):
    """A chunk whose SimHash equals a kept fragment's (SimHash ignores case and spacing)
    but whose text differs is no match for it while it counts as retired: the chunk is
    written new with its vector (it once failed the group: 'needs an embedding')."""
    from app.ingest.dedupe import simhash64

    text = "# Notes\n\nRotate the journal when the storage volume is full and keep it.\n"
    assert simhash64(text) == simhash64(text.upper())
    ingest("acme", {"z.md": text})
    results = ingest("acme", {"a.md": text.upper(), "z.md": text + "\n## More\n\nAnother section entirely.\n"})
    assert {r.path: r.changed for r in results} == {"a.md": True, "z.md": True}
    rows = conn.execute(
        "select d.path, f.text, f.active from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id"
        " join data.fragments f on f.fragment_id = s.fragment_id where s.retired_at is null order by 1, s.ordinal"
    ).fetchall()
    assert [(path, active) for path, _text, active in rows] == [("a.md", True), ("z.md", True), ("z.md", True)]
    assert rows[0][1] != rows[1][1]  # a.md's text has a fragment of its own
    assert_statistics_match_active_fragments(conn)


@pytest.mark.parametrize("seed", range(6))
def test_announcing_chunks_stores_what_not_announcing_stores(conn, pipeline, monkeypatch, seed):
    """Random groups of edits (paragraphs kept, dropped, reordered, re-cased, respaced,
    moved between documents) through the real lane: a writer that tells begin_documents
    its chunks' hashes stores exactly what one that does not stores."""
    import random

    from app.ingest import pipeline as lane
    from app.ingest.normalize import SourceDocument
    from app.scope import Scope

    rng = random.Random(seed)
    words = "journal volume rotate storage keep full index block merge term list scope write read".split()
    pool = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 14))).capitalize() + "." for _ in range(4)]

    def variant(paragraph: str) -> str:
        roll = rng.random()
        if roll < 0.25:
            return paragraph.upper()
        if roll < 0.4:
            return paragraph.replace(" ", "  ", 1)
        if roll < 0.5:
            return paragraph.replace(rng.choice(paragraph.split()), rng.choice(words), 1)
        return paragraph

    rounds = []
    for _ in range(6):
        group = {}
        for path in rng.sample([f"d{i}.md" for i in range(5)], rng.randint(2, 5)):
            sections = [f"## S{j}\n\n{variant(rng.choice(pool))}\n" for j in range(rng.randint(1, 4))]
            group[path] = f"# {path}\n\n" + "\n".join(sections)
        rounds.append(group)
    plain_versions = lane._versions_json

    def unannounced(documents, owners):
        versions = json.loads(plain_versions(documents, owners))
        for v in versions:
            v.pop("chunk_hashes"), v.pop("namespace")
        return json.dumps(versions)

    # Both orgs embed the same texts: each is embedded once, by the real model (the vectors
    # are what it gives; only the second org's repeat of the computation is saved).
    embedded: dict[tuple[str, str], list[float]] = {}
    for embedder in {type(e) for e in pipeline.embedders.values()}:
        real = embedder.embed

        def once(self, texts: list[str], real=real) -> list[list[float]]:
            todo = [t for t in dict.fromkeys(texts) if (self.name, t) not in embedded]
            embedded.update(((self.name, t), v) for t, v in zip(todo, real(self, todo)))
            return [embedded[(self.name, t)] for t in texts]

        monkeypatch.setattr(embedder, "embed", once)
    for org, announce in (("plain", False), ("announced", True)):
        conn.execute("select service.create_org(%s)", (org,))
        pipeline.register_models(conn)
        ensure_admin_principal(conn, org, "admin")
        conn.execute("select service.bind_principal(%s, 'admin')", (org,))
        monkeypatch.setattr(lane, "_versions_json", plain_versions if announce else unannounced)
        for group in rounds:
            prepared = [pipeline.prepare(SourceDocument(path=p, content=t)) for p, t in group.items()]
            pipeline.write(conn, Scope(org), prepared)
    plain, announced = stored(conn, "plain"), stored(conn, "announced")
    for name in plain:
        assert announced[name] == plain[name], name
    assert any(not f[11] for f in announced["fragments"]), "the edits retire some fragment for good"
    assert_statistics_match_active_fragments(conn)
