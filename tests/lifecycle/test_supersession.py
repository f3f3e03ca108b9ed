"""Supersession and validity windows (docs/adr/0016): a stale fact never outranks the
current one, and stays retrievable as of a past time or on request."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import psycopg
import pytest

from app.access import create_api_key
from app.retrieve.config import PipelineConfig
from app.retrieve.service import Retriever
from app.wire.retrieve import RetrieveRequest
from tests.api.test_api import problem

QUERY = "which message broker do services use for asynchronous events"
# The old decision matches the query better (it says "message broker" and "asynchronous
# events" outright); the new one is what holds now.
OLD = (
    "# ADR 3: RabbitMQ as the message broker\n\n"
    "Status: accepted\n\n"
    "Services use RabbitMQ as the message broker for asynchronous events between services.\n"
)
NEW = (
    "# ADR 7: Kafka for service events\n\n"
    "Status: accepted. Supersedes ADR-3.\n\n"
    "Events between services now go through Kafka topics.\n"
)


def post(client, *documents: dict, scope: dict | None = None):
    body = {"scope": scope or {"org_id": "acme"}, "documents": list(documents)}
    response = client.post("/documents", json=body)
    assert response.status_code == 201, response.text
    return response


def retrieve(client, **extra) -> list[dict]:
    body = {"query": QUERY, "scope": {"org_id": "acme"}, **extra}
    response = client.post("/contexts/retrieve", json=body)
    assert response.status_code == 200, response.text
    return response.json()["fragments"]


def paths(fragments: list[dict]) -> list[str]:
    return [f["source"].split("#")[0] for f in fragments]


def test_a_superseded_adr_leaves_default_retrieval_and_the_new_one_wins(client):
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    before = retrieve(client)
    assert paths(before)[0] == "docs/adr/0003-rabbitmq.md"
    old_id = before[0]["id"]

    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    after = retrieve(client)
    assert paths(after)[0] == "docs/adr/0007-kafka.md"
    assert "docs/adr/0003-rabbitmq.md" not in paths(after)
    # Both match the query; unfiltered, the old one scores higher: the window decides.
    both = retrieve(client, include_superseded=True)
    assert paths(both)[:2] == ["docs/adr/0003-rabbitmq.md", "docs/adr/0007-kafka.md"]
    old = both[0]
    assert old["id"] == old_id and old["valid_until"] is not None and both[1]["valid_until"] is None

    # As of a time before the supersession, the old one was current.
    as_of = (datetime.fromisoformat(old["valid_until"]) - timedelta(seconds=1)).isoformat()
    assert "docs/adr/0003-rabbitmq.md" in paths(retrieve(client, as_of=as_of))


def test_deleting_the_superseding_document_makes_the_old_one_current_again(client):
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    assert "docs/adr/0003-rabbitmq.md" not in paths(retrieve(client))
    docs = client.get("/documents", params={"org_id": "acme"}).json()["documents"]
    new_id = next(d["doc_id"] for d in docs if d["path"] == "docs/adr/0007-kafka.md")
    assert client.delete(f"/documents/{new_id}").status_code == 200
    again = retrieve(client)
    assert paths(again)[0] == "docs/adr/0003-rabbitmq.md" and again[0]["valid_until"] is None


def test_a_target_that_arrives_later_is_superseded_then(client):
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    assert "docs/adr/0003-rabbitmq.md" not in paths(retrieve(client))


def test_superseded_by_in_the_old_document_and_in_metadata(client):
    old = OLD.replace("Status: accepted", "Status: superseded by [ADR-0007](0007-kafka.md)")
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": old})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW.replace(" Supersedes ADR-3.", "")})
    assert "docs/adr/0003-rabbitmq.md" not in paths(retrieve(client))

    runbook = "# Broker runbook\n\nRestart the message broker for asynchronous events when queues back up.\n"
    post(client, {"path": "runbooks/broker.md", "content": runbook})
    assert "runbooks/broker.md" in paths(retrieve(client))
    post(
        client,
        {
            "path": "runbooks/kafka.md",
            "content": "# Kafka runbook\n\nRestart a broker.\n",
            "metadata": {"supersedes": "/runbooks/broker.md"},
        },
    )
    assert "runbooks/broker.md" not in paths(retrieve(client))


def test_a_bare_number_in_prose_retires_nothing(client):
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    post(
        client,
        {
            "path": "notes/migration.md",
            "content": "# Migration\n\nThis step replaces 3 calls and supersedes 3 scripts.\n",
        },
    )
    assert paths(retrieve(client))[0] == "docs/adr/0003-rabbitmq.md"


def test_validity_dates_from_metadata_and_front_matter(client):
    past = (datetime.now(UTC) - timedelta(days=30)).date().isoformat()
    future = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()
    post(
        client,
        {
            "path": "policies/old-broker.md",
            "content": OLD.replace("ADR 3", "Policy"),
            "metadata": {"valid_until": past},
        },
        {
            "path": "policies/next-broker.md",
            "content": f"---\nvalid_from: {future}\n---\n# Next broker\n\nFrom next month the message broker for"
            " asynchronous events is a managed NATS cluster, shared by every team.\n",
        },
    )
    assert paths(retrieve(client)) == []
    expired = retrieve(client, include_superseded=True)
    assert set(paths(expired)) == {"policies/old-broker.md", "policies/next-broker.md"}
    nxt = next(f for f in expired if f["source"].startswith("policies/next"))
    assert nxt["valid_from"].startswith(future) and nxt["metadata"]["valid_from"].startswith(future)
    later = (datetime.now(UTC) + timedelta(days=31)).isoformat()
    assert set(paths(retrieve(client, as_of=later))) == {"policies/next-broker.md"}
    earlier = (datetime.now(UTC) - timedelta(days=31)).isoformat()
    assert set(paths(retrieve(client, as_of=earlier))) == {"policies/old-broker.md"}


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({"valid_from": "last tuesday"}, "not an ISO 8601"),
        ({"valid_until": 20260101}, "must be an ISO 8601"),
        ({"valid_from": "2026-02-01", "valid_until": "2026-01-01"}, "not after valid_from"),
    ],
)
def test_bad_validity_metadata_is_refused(client, metadata, says):
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "a.md", "content": "# A\n\ntext", "metadata": metadata}],
    }
    assert says in problem(client.post("/documents", json=body), 422)["detail"]


def test_retrieval_options_are_validated(client):
    for extra in ({"as_of": "2026-01-01T00:00:00"}, {"as_of": "soon"}, {"include_superseded": "yes"}):
        body = {"query": QUERY, "scope": {"org_id": "acme"}, **extra}
        problem(client.post("/contexts/retrieve", json=body), 400)


def test_what_a_reader_cannot_see_supersedes_nothing_for_it(client, db_url):
    """A document in a repo supersedes an org-wide one only for readers of that repo
    would be a leak: the org-wide reader would learn the repo says something. So a
    supersession counts only from a document every reader of the old one can read."""
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW}, scope={"org_id": "acme", "repo_id": "payments"})
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'outsider', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'outsider', 'repo', 'platform')")
        token = create_api_key(conn, "acme", "outsider").token
    body = {"query": QUERY, "scope": {"org_id": "acme"}}
    found = client.post("/contexts/retrieve", json=body, headers={"Authorization": f"Bearer {token}"}).json()
    assert "docs/adr/0003-rabbitmq.md" in paths(found["fragments"])
    assert all(f["valid_until"] is None for f in found["fragments"])


def test_a_writer_retires_nothing_it_may_not_read(client, db_url):
    """A repo writer's document declaring that it supersedes a document of that repo and a
    persona (which the writer may neither read nor write) retires nothing: it would hide
    that document from the persona's own readers. The same declaration made in the
    persona's scope does retire it."""
    persona = {"org_id": "acme", "repo_id": "payments", "persona_id": "p2"}
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD}, scope=persona)
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'repo-writer', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'repo-writer', 'repo', 'payments', true)")
        token = create_api_key(conn, "acme", "repo-writer").token
    body = {
        "scope": {"org_id": "acme", "repo_id": "payments"},
        "documents": [{"path": "docs/adr/0007-kafka.md", "content": NEW}],
    }
    written = client.post("/documents", json=body, headers={"Authorization": f"Bearer {token}"})
    assert written.status_code == 201, written.text
    found = retrieve(client, scope=persona)
    assert "docs/adr/0003-rabbitmq.md" in paths(found)
    assert all(f["valid_until"] is None for f in found)

    post(client, {"path": "docs/adr/0008-kafka.md", "content": NEW}, scope=persona)
    assert "docs/adr/0003-rabbitmq.md" not in paths(retrieve(client, scope=persona))


ROOT = Path(__file__).resolve().parents[2]


def test_this_repository_declares_only_its_real_supersession_and_answers_the_readme_question(
    conn, settings, models, as_principal
):
    """Its README and ADRs describe the syntax ("Supersedes ADR-3" in a sentence, a status
    line saying a part of ADR 0005 is superseded): none of it is a declaration. The one
    real declaration, ADR 0023's status line ("superseded by 0025"), hides ADR 0023 alone,
    and the README's own example question finds what it should. Ingested as the demo is,
    its vectors read from app/cli/demo.vectors (what the file lacks is embedded)."""
    from app.access import ensure_admin_principal
    from app.cli.demo import demo_vectors
    from app.ingest.normalize import SourceDocument
    from app.ingest.pipeline import IngestPipeline
    from app.scope import Scope

    files = {
        "README.md": (ROOT / "README.md").read_text(),
        "app/ingest/dedupe.py": (ROOT / "app/ingest/dedupe.py").read_text(),
    }
    files |= {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))}
    pipeline = IngestPipeline(settings, demo_vectors().embedders(models))
    conn.execute("select service.create_org('demo')")
    pipeline.register_models(conn)
    ensure_admin_principal(conn, "demo", "admin")
    conn.execute("select service.bind_principal('demo', 'admin')")
    prepared = [pipeline.prepare(SourceDocument(path=p, content=c)) for p, c in files.items()]
    pipeline.write(conn, Scope("demo", "contexts"), prepared)
    conn.commit()
    edges = conn.execute(
        "select d.path, l.link_type, l.target from data.fragment_links l join data.documents d on d.doc_id = l.doc_id"
        " where l.link_type in ('supersedes', 'superseded_by')"
    ).fetchall()
    assert {(path, kind) for path, kind, _ in edges} == {("docs/adr/0023-bm25-top-k-by-maxscore.md", "superseded_by")}
    assert all("0025" in str(target) for _, _, target in edges), edges
    windowed = conn.execute(
        "select distinct d.path from data.fragments f join data.fragment_sources s on s.fragment_id = f.fragment_id"
        " join data.documents d on d.doc_id = s.doc_id where f.valid_until is not null"
    ).fetchall()
    assert windowed in ([], [("docs/adr/0023-bm25-top-k-by-maxscore.md",)]), windowed

    as_principal("demo")
    retriever = Retriever.build(models, PipelineConfig())
    request = msgspec.convert(
        {"query": "how are near-duplicate fragments collapsed?", "scope": {"org_id": "demo"}, "budget_tokens": 1500},
        RetrieveRequest,
    )
    top = [f.source.split("#")[0] for f in retriever.retrieve(conn, request).fragments[:3]]
    assert {"README.md", "docs/adr/0003-deduplication-within-scope.md", "app/ingest/dedupe.py"} & set(top), top


def links_of(client, fragment_id: int) -> list[dict]:
    response = client.get(f"/fragments/{fragment_id}/links")
    assert response.status_code == 200, response.text
    body = response.json()
    return body["outgoing"] + body["incoming"]


def test_each_supersession_shows_its_evidence(client):
    old = OLD.replace("Status: accepted", "- Status: superseded by [ADR-0007](0007-kafka.md)")
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": old})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    post(
        client,
        {
            "path": "runbooks/kafka.md",
            "content": "# Kafka runbook\n\nRestart a broker.\n",
            "metadata": {"supersedes": "/docs/adr/0003-rabbitmq.md"},
        },
    )
    both = retrieve(client, include_superseded=True)
    old_id = next(f["id"] for f in both if f["source"].startswith("docs/adr/0003"))
    evidence = {
        (link["direction"], link["link_type"], link["path"], link["evidence"]) for link in links_of(client, old_id)
    }
    assert evidence >= {
        ("out", "superseded_by", "docs/adr/0007-kafka.md", "line 3: - Status: superseded by [ADR-0007](0007-kafka.md)"),
        ("in", "supersedes", "docs/adr/0007-kafka.md", "line 3: Status: accepted. Supersedes ADR-3."),
        ("in", "supersedes", "runbooks/kafka.md", "metadata supersedes: /docs/adr/0003-rabbitmq.md"),
    }
    # A mention is an ADR citation, with no evidence to show.
    post(client, {"path": "notes/history.md", "content": "# History\n\nADR 7 supersedes ADR-3, as the log says.\n"})
    mention = next(f["id"] for f in retrieve(client, include_superseded=True) if f["source"].startswith("notes/"))
    assert [(link["link_type"], link["evidence"]) for link in links_of(client, mention)] == [("adr", None)] * 2


def test_windows_follow_the_documents_own_times_over_http(client):
    """A document posted with its `timestamp` supersedes from that time, not from when it
    was ingested, and is itself current only from then; its valid_from wins."""
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD, "timestamp": "2025-01-10T09:00:00Z"})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW, "timestamp": "2025-06-01T09:00:00Z"})
    at = {
        "2024-12-01T00:00:00Z": {"docs/adr/0003-rabbitmq.md"},
        "2025-03-01T00:00:00Z": {"docs/adr/0003-rabbitmq.md"},
        "2025-06-01T08:59:59Z": {"docs/adr/0003-rabbitmq.md"},
        "2025-06-01T09:00:00Z": {"docs/adr/0007-kafka.md"},
        "2025-09-01T00:00:00Z": {"docs/adr/0007-kafka.md"},
    }
    for as_of, expected in at.items():
        assert set(paths(retrieve(client, as_of=as_of))) == expected, as_of
    assert set(paths(retrieve(client))) == {"docs/adr/0007-kafka.md"}
    both = {f["source"].split("#")[0]: f for f in retrieve(client, include_superseded=True)}
    assert both["docs/adr/0003-rabbitmq.md"]["valid_until"].startswith("2025-06-01T09:00:00")
    assert both["docs/adr/0007-kafka.md"]["valid_from"].startswith("2025-06-01T09:00:00")

    # An edit posted later (a typo fixed) does not move the supersession: the document's
    # time is its first version's.
    post(
        client,
        {"path": "docs/adr/0007-kafka.md", "content": NEW + "\nTypo fixed.\n", "timestamp": "2025-11-01T00:00:00Z"},
    )
    assert set(paths(retrieve(client, as_of="2025-09-01T00:00:00Z"))) == {"docs/adr/0007-kafka.md"}

    # An explicit valid_from wins over the timestamp.
    post(
        client,
        {
            "path": "docs/adr/0008-nats.md",
            "content": "# ADR 8: NATS for service events\n\nStatus: accepted. Supersedes ADR-7.\n\nEvents use NATS.\n",
            "timestamp": "2025-12-01T00:00:00Z",
            "metadata": {"valid_from": "2026-02-01"},
        },
    )
    assert set(paths(retrieve(client, as_of="2026-01-15T00:00:00Z"))) == {"docs/adr/0007-kafka.md"}
    assert set(paths(retrieve(client, as_of="2026-02-02T00:00:00Z"))) == {"docs/adr/0008-nats.md"}


ADR_HISTORY = [
    (
        "2025-01-10T09:00:00Z",
        {
            "docs/adr/0001-rabbitmq.md": "# 1. RabbitMQ\n\n- Status: accepted\n\nServices use RabbitMQ as the message "
            "broker for asynchronous events.\n"
        },
    ),
    (
        "2025-04-10T09:00:00Z",
        {
            "docs/adr/0001-rabbitmq.md": "# 1. RabbitMQ\n\n- Status: superseded by [ADR-2](0002-kafka.md)\n\n"
            "Services use RabbitMQ as the message broker for asynchronous events.\n",
            "docs/adr/0002-kafka.md": "# 2. Kafka\n\n- Status: accepted; supersedes ADR-1\n\nKafka is the message "
            "broker for asynchronous events between services.\n",
        },
    ),
    (
        "2025-08-10T09:00:00Z",
        {
            "docs/adr/0002-kafka.md": "# 2. Kafka\n\n- Status: superseded by ADR-3\n\nKafka is the message broker "
            "for asynchronous events between services.\n",
            "docs/adr/0003-nats.md": "# 3. NATS\n\n- Status: accepted\n- Supersedes: ADR-2\n\nNATS is the message "
            "broker for asynchronous events between services.\n",
        },
    ),
]


@pytest.mark.parametrize("incremental", [False, True], ids=["one-sync", "sync-per-commit"])
def test_a_git_sync_of_an_adr_history_answers_as_of_by_commit_dates(db_url, tmp_path, incremental):
    """Synced at once or commit by commit, the history's windows are its commit dates
    (when each ADR was added), not the sync's time."""
    from tests.cli.test_sync import commit, git, write
    from tests.cli.test_sync import run as cli

    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert cli(db_url, "org", "create", "acme").exit_code == 0
    sync = ("sync", str(repo), "--org", "acme", "--repo", "platform", "--create-repo", "--no-refresh-authority")
    for when, files in ADR_HISTORY:
        write(repo, files)
        commit(repo, f"ADRs of {when}", when=when)
        if incremental:
            assert cli(db_url, *sync).exit_code == 0
    if not incremental:
        assert cli(db_url, *sync).exit_code == 0

    def current(as_of: str | None) -> set[str]:
        query = ["query", "message broker for asynchronous events", "--org", "acme", "--json"]
        result = cli(db_url, *query, *(["--as-of", as_of] if as_of else []))
        assert result.exit_code == 0, result.output
        body = json.loads(result.output.strip().splitlines()[-1])
        return {f["source"].split("#")[0].rsplit("/", 1)[-1] for f in body["fragments"]}

    assert current("2024-12-01T00:00:00Z") == {"0001-rabbitmq.md"}
    assert current("2025-02-01T00:00:00Z") == {"0001-rabbitmq.md"}
    assert current("2025-05-01T00:00:00Z") == {"0002-kafka.md"}
    assert current("2025-08-10T08:59:00Z") == {"0002-kafka.md"}
    assert current("2025-09-01T00:00:00Z") == {"0003-nats.md"}
    assert current(None) == {"0003-nats.md"}


def fragment_id_of(client, path: str) -> int:
    docs = client.get("/documents", params={"org_id": "acme", "path_prefix": path}).json()["documents"]
    doc_id = next(d["doc_id"] for d in docs if d["path"] == path)
    return client.get(f"/documents/{doc_id}").json()["fragments"][0]["fragment_id"]


def test_the_trace_names_what_a_supersession_left_out_and_by_what(client, db_url):
    """ "Why didn't the old ADR come back?": the trace lists it, where it would have
    ranked, and the document that superseded it with the line that says so."""
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    # Superseded too, but matching no word of the query: it would not have ranked.
    post(client, {"path": "docs/adr/0004-cron.md", "content": "# ADR 4: Cron\n\nNightly jobs run from cron.\n"})
    post(
        client,
        {
            "path": "docs/adr/0008-scheduler.md",
            "content": "# ADR 8: Scheduler\n\n- Status: accepted\n- Supersedes: ADR-4\n\nJobs run in the scheduler.\n",
        },
    )
    old_id = fragment_id_of(client, "docs/adr/0003-rabbitmq.md")
    body = {"query": QUERY, "scope": {"org_id": "acme"}, "k_dense": 0}
    result = client.post("/contexts/retrieve", json=body).json()
    assert "docs/adr/0003-rabbitmq.md" not in paths(result["fragments"])
    trace = client.get(f"/traces/{result['trace_id']}").json()
    assert [x["fragment_id"] for x in trace["left_out"]] == [old_id]
    left = trace["left_out"][0]
    assert (left["reason"], left["included"], left["lexical_rank"], left["source"].split("#")[0]) == (
        "superseded",
        False,
        1,  # it would have ranked first on BM25
        "docs/adr/0003-rabbitmq.md",
    )
    assert left["lexical_score"] > max(c["lexical_score"] for c in trace["candidates"])
    assert [(s["path"], s["evidence"]) for s in left["superseded_by"]] == [
        ("docs/adr/0007-kafka.md", "line 3: Status: accepted. Supersedes ADR-3.")
    ]
    assert left["valid_until"] is not None
    # The candidates are what they were: the left-out list is beside them, not among them.
    assert old_id not in {c.get("fragment_id") for c in trace["candidates"]}

    # Asked for superseded fragments, nothing is left out; as of before the supersession,
    # the old ADR is current and the new one, not yet valid, is what is left out.
    again = client.post("/contexts/retrieve", json=body | {"include_superseded": True}).json()
    assert client.get(f"/traces/{again['trace_id']}").json()["left_out"] == []
    before = (datetime.fromisoformat(left["valid_until"]) - timedelta(seconds=1)).isoformat()
    earlier = client.post("/contexts/retrieve", json=body | {"as_of": before}).json()
    assert "docs/adr/0003-rabbitmq.md" in paths(earlier["fragments"])
    left_then = client.get(f"/traces/{earlier['trace_id']}").json()["left_out"]
    assert [(x["source"].split("#")[0], x["reason"], x["superseded_by"]) for x in left_then] == [
        ("docs/adr/0007-kafka.md", "not_yet_valid", [])
    ]

    # A reader who may not read the superseded fragment is told nothing about it.
    post(client, {"path": "payments/old.md", "content": OLD.replace("ADR 3", "Payments")},
         scope={"org_id": "acme", "repo_id": "payments"})  # fmt: skip
    post(
        client,
        {"path": "payments/new.md", "content": NEW.replace("Supersedes ADR-3", "Supersedes [old](old.md)")},
        scope={"org_id": "acme", "repo_id": "payments"},
    )
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.create_principal('acme', 'outsider', 'agent', '')")
        conn.execute("select service.grant_scope('acme', 'outsider', 'repo', 'platform')")
        token = create_api_key(conn, "acme", "outsider").token
    headers = {"Authorization": f"Bearer {token}"}
    seen = client.post("/contexts/retrieve", json=body, headers=headers).json()
    trace = client.get(f"/traces/{seen['trace_id']}", headers=headers).json()
    assert {x["source"].split("#")[0] for x in trace["left_out"]} == {"docs/adr/0003-rabbitmq.md"}
    full = client.get(f"/traces/{client.post('/contexts/retrieve', json=body).json()['trace_id']}").json()
    assert {x["source"].split("#")[0] for x in full["left_out"]} == {"docs/adr/0003-rabbitmq.md", "payments/old.md"}


def test_a_pin_whose_fragment_is_superseded_is_left_out_with_its_reason(client):
    post(client, {"path": "docs/adr/0003-rabbitmq.md", "content": OLD})
    old_id = fragment_id_of(client, "docs/adr/0003-rabbitmq.md")
    pinned = client.post(
        "/pins", json={"scope": {"org_id": "acme"}, "fragment_id": old_id, "reason": "the broker decision"}
    )
    assert pinned.status_code == 201, pinned.text
    pin_id = pinned.json()["pin_id"]
    listed = client.get("/pins", params={"org_id": "acme"}).json()["pins"]
    assert [(p["pin_id"], p["superseded"], p["superseded_by"]) for p in listed] == [(pin_id, False, [])]

    post(client, {"path": "docs/adr/0007-kafka.md", "content": NEW})
    result = client.post("/contexts/retrieve", json={"query": "kafka topics", "scope": {"org_id": "acme"}}).json()
    assert old_id not in {f["id"] for f in result["fragments"]}
    assert result["pins_left_out"] == [pin_id]
    [why] = result["pins_left_out_reasons"]
    assert (why["pin_id"], why["fragment_id"], why["reason"], why["detail"]) == (
        pin_id,
        old_id,
        "superseded",
        "superseded by docs/adr/0007-kafka.md",
    )
    assert why["superseded_by"][0]["evidence"] == "line 3: Status: accepted. Supersedes ADR-3."
    trace = client.get(f"/traces/{result['trace_id']}").json()
    assert [(x.get("pin_id"), x["reason"]) for x in trace["left_out"]] == [(pin_id, "superseded")], trace["left_out"]

    [listed] = client.get("/pins", params={"org_id": "acme"}).json()["pins"]
    assert (listed["active"], listed["superseded"], listed["valid_until"] is not None) == (True, True, True)
    assert [s["path"] for s in listed["superseded_by"]] == ["docs/adr/0007-kafka.md"]

    # Asking for superseded fragments serves the pin again.
    again = client.post(
        "/contexts/retrieve", json={"query": "kafka topics", "scope": {"org_id": "acme"}, "include_superseded": True}
    ).json()
    assert again["fragments"][0]["id"] == old_id and again["pins_left_out"] == []
