"""Front matter (YAML `---` or TOML `+++`) is metadata, never fragments: through the
pipeline, POST /documents, `contexts ingest` and `contexts sync`. Unreadable front matter
is refused with its reason; a block that holds no keys is text."""

from __future__ import annotations

import shutil

import psycopg
import pytest

from app.ingest.chunk_prose import ProseChunker
from app.ingest.normalize import RejectedDocument, SourceDocument, normalize
from tests.api.test_api import problem
from tests.cli.test_sync import commit, git, write
from tests.cli.test_sync import run as cli

YAML = "---\nowner: Ada\nkind: runbook\nstatus: draft\ntags: [dns, oncall]\n---\n# Title\n\nRestart the resolver.\n"
TOML = '+++\nowner = "Ada"\nkind = "runbook"\nvalid_from = 2026-01-02\n+++\n# Title\n\nRestart the resolver.\n'


def fragment_texts(conn: psycopg.Connection, path: str) -> list[str]:
    rows = conn.execute(
        "select f.text from data.fragment_sources s join data.documents d on d.doc_id = s.doc_id"
        " join data.fragments f on f.fragment_id = s.fragment_id"
        " where d.path = %s and s.retired_at is null order by s.ordinal",
        (path,),
    ).fetchall()
    return [r[0] for r in rows]


def stored(conn: psycopg.Connection, path: str) -> tuple:
    return conn.execute(
        "select d.kind, d.owner, v.metadata from data.documents d"
        " join data.document_versions v on v.doc_id = d.doc_id and v.version = d.current_version where d.path = %s",
        (path,),
    ).fetchone()


@pytest.mark.parametrize(("text", "title_line"), [(YAML, 7), (TOML, 6)], ids=["yaml", "toml"])
def test_front_matter_is_metadata_and_no_fragment(text, title_line):
    doc = normalize(SourceDocument(path="notes/dns.md", content=text))
    assert (doc.kind, doc.owner) == ("runbook", "Ada")
    assert doc.metadata == ({"status": "draft"} if text is YAML else {"valid_from": "2026-01-02T00:00:00+00:00"})
    assert doc.text == text  # stored as written: citations keep the file's line numbers
    chunks = ProseChunker(400, 64).chunk(doc.text, doc.syntax)
    assert [(c.text, c.start_line, c.heading_path) for c in chunks] == [
        ("# Title\n\nRestart the resolver.", title_line, ("Title",))
    ]


def test_what_the_caller_says_wins_over_front_matter():
    doc = normalize(SourceDocument(path="a.md", content=YAML, kind="adr", owner="Grace", metadata={"status": "final"}))
    assert (doc.kind, doc.owner, doc.metadata) == ("adr", "Grace", {"status": "final"})


@pytest.mark.parametrize(
    "text",
    [
        "---\nJust a rule above a paragraph.\n---\n\n# Title\n\nBody.\n",  # not a mapping: Markdown
        "---\nowner: Ada\n# never closed\n\nBody.\n",
        "----\nowner: Ada\n----\n\nBody.\n",
    ],
)
def test_a_block_that_is_not_front_matter_stays_text(text):
    doc = normalize(SourceDocument(path="a.md", content=text))
    assert doc.owner is None and doc.metadata == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("---\nowner: Ada: Lovelace\n---\n# T\n", "not valid YAML: mapping values are not allowed here at line 2"),
        ("+++\nowner = Ada\n+++\n# T\n", "not valid TOML"),
        ("---\nowner: [Ada, Grace]\n---\n# T\n", "owner must be"),
        ("---\nvalid_from: soon\n---\n# T\n", "not an ISO 8601"),
        ("---\nsupersedes: {a: 1}\n---\n# T\n", "supersedes must be a path"),
        ("---\nnegative: maybe\n---\n# T\n", "negative must be true or false"),
    ],
)
def test_unreadable_front_matter_is_refused_with_its_reason(text, says):
    with pytest.raises(RejectedDocument, match="a.md: ") as refused:
        normalize(SourceDocument(path="a.md", content=text))
    assert says in str(refused.value)


def test_front_matter_is_never_a_fragment_shared_between_documents(conn, ingest):
    ingest(
        "acme",
        {
            "runbooks/dns.md": "---\nowner: Ada\nkind: runbook\n---\n# DNS\n\nRestart the resolver.\n",
            "policies/keys.md": "---\nowner: Grace\nkind: policy\n---\n# Keys\n\nRotate keys yearly.\n",
        },
    )
    assert fragment_texts(conn, "runbooks/dns.md") == ["# DNS\n\nRestart the resolver."]
    assert fragment_texts(conn, "policies/keys.md") == ["# Keys\n\nRotate keys yearly."]
    kinds_and_owners = conn.execute("select distinct kind, owner from data.fragments order by 1").fetchall()
    assert kinds_and_owners == [("policy", "Grace"), ("runbook", "Ada")]


def test_front_matter_over_http(client, db_url):
    body = {"scope": {"org_id": "acme"}, "documents": [{"path": "runbooks/dns.md", "content": YAML}]}
    assert client.post("/documents", json=body).status_code == 201
    with psycopg.connect(db_url) as conn:
        assert fragment_texts(conn, "runbooks/dns.md") == ["# Title\n\nRestart the resolver."]
        assert stored(conn, "runbooks/dns.md") == ("runbook", "Ada", {"status": "draft"})
    bad = {"scope": {"org_id": "acme"}, "documents": [{"path": "b.md", "content": "---\nowner: a: b\n---\n# B\n"}]}
    assert "front matter (lines 1-3) is not valid YAML" in problem(client.post("/documents", json=bad), 422)["detail"]


def test_front_matter_through_contexts_ingest(db_url, tmp_path, monkeypatch):
    (tmp_path / "dns.md").write_text(TOML)
    (tmp_path / "bad.md").write_text("---\nowner: a: b\n---\n# Bad\n\nText.\n")
    monkeypatch.chdir(tmp_path)
    result = cli(db_url, "ingest", ".", "--org", "acme")
    assert result.exit_code == 0, result.output
    assert "bad.md" in result.output and "not valid YAML" in result.output  # skipped, said why
    with psycopg.connect(db_url) as conn:
        assert fragment_texts(conn, "dns.md") == ["# Title\n\nRestart the resolver."]
        kind, owner, metadata = stored(conn, "dns.md")
        assert (kind, owner, metadata["valid_from"]) == ("runbook", "Ada", "2026-01-02T00:00:00+00:00")
        assert stored(conn, "bad.md") is None
    named = cli(db_url, "ingest", "bad.md", "--org", "acme")
    assert named.exit_code != 0 and "not valid YAML" in named.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_front_matter_through_contexts_sync(db_url, tmp_path):
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"docs/dns.md": YAML, "docs/bad.md": "+++\nowner = \n+++\n# Bad\n"})
    commit(repo, "initial", when="2026-01-05T10:00:00Z")
    assert cli(db_url, "org", "create", "acme").exit_code == 0
    result = cli(db_url, "sync", str(repo), "--org", "acme", "--repo", "platform", "--create-repo",
                 "--no-refresh-authority")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "docs/bad.md" in result.output and "not valid TOML" in result.output
    with psycopg.connect(db_url) as conn:
        assert fragment_texts(conn, "docs/dns.md") == ["# Title\n\nRestart the resolver."]
        kind, owner, metadata = stored(conn, "docs/dns.md")
        assert (kind, owner, metadata["status"]) == ("runbook", "Ada", "draft")
