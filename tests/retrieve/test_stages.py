"""Retrieval as a pipeline of stages (app.retrieve.stages): the request resolved once into
one typed value, each score in its own field, SQL functions called with named arguments,
and reading a Context in bundle order as a pipeline of the same stages
(app.retrieve.bundle)."""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest

from app.access import act_as
from app.retrieve.blend import TERMS
from app.retrieve.candidates import Candidate, Filters
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.retrieve.trace import get_trace
from app.scope import Scope
from app.wire.retrieve import RetrieveRequest

if TYPE_CHECKING:
    from app.retrieve.request import Resolved
    from app.retrieve.stages import Ranking

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def request(query: str = "rotate the signing keys", **fields) -> RetrieveRequest:
    scope = {"org_id": "acme"} | fields.pop("scope", {})
    return msgspec.convert({"query": query, "scope": scope} | fields, RetrieveRequest)


def candidate(i: int, fused: float, **fields) -> Candidate:
    values = {
        "fragment_id": i,
        "lexical_rank": i,
        "lexical_score": 5.0,
        "dense_rank": None,
        "dense_similarity": None,
        "fused_score": fused,
        "doc_id": i,
        "doc_version": 1,
        "path": f"doc{i}.md",
        "anchor": "",
        "repo_id": None,
        "namespace": "prose",
        "kind": "note",
        "owner": "ana",
        "heading_path": [],
        "symbol": None,
        "text": f"fragment {i}",
        "token_count": 3,
        "chunker_version": "v",
        "embedding_model": None,
        "updated_at": NOW - timedelta(days=30 * i),
    }
    return Candidate(**(values | fields))


def test_a_request_is_resolved_once_into_what_every_stage_reads():
    from app.retrieve.request import resolve

    since = datetime(2026, 1, 1, tzinfo=UTC)
    req = request(
        "where is SessionTimeoutGuard raised",
        scope={"repo_id": "web", "persona_id": "sre", "session_id": "s1"},
        path_prefix="src/",
        kinds=["code"],
        updated_since=since,
        negatives="exclude",
        include_superseded=True,
        contexts=["ctx_1@2"],
        context_mode="boost",
        touching=["src/a.py"],
    )
    config = PipelineConfig(rrf_k=42)
    q = resolve(req, config, {"prose": "minilm"}, include_retired=True, now=NOW)
    assert q.scope == Scope("acme", "web", "sre", "s1")
    assert q.filters == Filters(
        path_prefix="src/", kinds=["code"], updated_since=since, negatives="exclude", include_superseded=True
    )
    assert q.fusion == fusion_spec(config, req.query) and q.fusion["query_shape"] == "identifier"
    assert (q.rrf_k, q.models, q.now, q.include_retired) == (42, {"prose": "minilm"}, NOW, True)
    assert (q.k_lexical, q.k_dense, q.rerank_top) == (req.k_lexical, req.k_dense, req.rerank_top)
    assert q.contexts == ["ctx_1@2"] and q.boosted and not q.restricted and q.touching == ["src/a.py"]
    assert resolve(request(contexts=["ctx_1@2"]), config, {}).restricted
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.query = "something else"  # type: ignore[misc]


def ranking_of(q: Resolved, candidates: list[Candidate]) -> Ranking:
    from app.retrieve import stages

    g = stages.gathered(candidates, [], {})
    return stages.boost(q, stages.blend(q, stages.rerank(q, g, None, 1.0)))


def test_each_stage_writes_its_own_score():
    """rerank -> base_score, blend -> blended (with its terms), boost -> final_score: a
    Context member in boost mode is lifted in `final_score` alone, so its blended score
    and the reranker's input stay readable."""
    from app.retrieve import stages
    from app.retrieve.request import resolve

    q = resolve(request(contexts=["ctx_1@1"], context_mode="boost", rerank_top=3), PipelineConfig(), {}, now=NOW)
    members = {2: "ctx_1@1"}
    cands = [candidate(i, fused, context=members.get(i)) for i, fused in enumerate([0.9, 0.8, 0.7, 0.6])]
    ranking = ranking_of(q, cands)
    assert [c.fragment_id for c in ranking.ranked] == [2, 0, 1]  # the member lifted past better fits
    weights = ranking.profile.weights
    for c in ranking.ranked:
        assert c.rerank_score is None  # no reranker
        assert c.base_score == c.fused_score == c.terms["rerank"]  # the best possible fused score is 1
        assert c.blended == pytest.approx(math.fsum(weights[t] * c.terms[t] for t in TERMS), abs=1e-12)
        lifted = c.blended + (1.0 - c.blended) * stages.CONTEXT_BOOST if c.context else c.blended
        assert c.final_score == pytest.approx(lifted, abs=1e-12)
    member = ranking.ranked[0]
    assert member.final_score > member.blended  # two scores, two fields
    beyond = cands[3]  # beyond rerank_top: no score of any stage
    assert (beyond.base_score, beyond.blended, beyond.final_score, beyond.terms) == (None, None, None, None)

    # Without boost mode the final score is the blended one.
    plain = [candidate(i, fused) for i, fused in enumerate([0.9, 0.8])]
    ranking = ranking_of(resolve(request(), PipelineConfig(), {}, now=NOW), plain)
    assert all(c.final_score == c.blended and c.base_score == c.fused_score for c in ranking.ranked)


def sql_calls(source: str) -> list[tuple[str, list[str]]]:
    """Each `api.name(...)` or `service.name(...)` with parameters in a module's SQL
    strings (adjacent string literals joined), with its arguments."""
    joined = re.sub(r'"\s*\n\s*"', "", source)
    calls = []
    for match in re.finditer(r"\b(?:api|service)\.([a-z_]+)\(", joined):
        depth, at, args, current = 1, match.end(), [], ""
        while depth:
            ch = joined[at]
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 1 and ch == ",":
                args.append(current.strip())
                current = ""
            elif depth:
                current += ch
            at += 1
        args.append(current.strip())
        if any("%" in a or "=>" in a for a in args):
            calls.append((match.group(1), args))
    return calls


def test_sql_functions_are_called_with_named_arguments():
    """Every api.* and service.* call of the retrieval lane names its arguments
    (`p_org_id => %(org)s`): none passes values by position, so a signature's order
    cannot shift them."""
    root = Path(__file__).resolve().parents[2] / "app" / "retrieve"
    calls = [call for path in sorted(root.glob("*.py")) for call in sql_calls(path.read_text(encoding="utf-8"))]
    names = {name for name, _ in calls}
    assert {"retrieve_candidates", "context_candidates", "rule_matches", "linked_fragments"} <= names
    assert {"validity_left_out", "version_metadata", "record_trace", "get_trace"} <= names
    for name, args in calls:
        assert all(re.fullmatch(r"p_\w+ => %\(\w+\)s(::\w+)?", a) for a in args), (name, args)


def test_a_context_is_read_in_bundle_order_by_its_own_pipeline(conn, ingest, retriever):
    from app.retrieve.bundle import read_bundle

    ingest(
        "acme",
        {
            "a.md": "# Alpha\n\nRotate the signing keys every ninety days.\n",
            "b.md": "# Beta\n\nFreeze deploys on Fridays after three.\n",
            "c.md": "# Gamma\n\nRefunds above ten thousand need a second approver.\n",
        },
    )
    act_as(conn, "acme", "admin")
    ids = {c.path: c.fragment_id for c in retriever.candidates(conn, request("rotate deploys refunds", k_dense=0))}
    assert len(ids) == 3
    order = [ids["c.md"], ids["a.md"], ids["b.md"]]
    context_id = conn.execute(
        "select context_id from service.context_create(p_org_id => 'acme', p_repo_id => null, p_persona_id => null,"
        " p_session_id => null, p_name => 'bundle')"
    ).fetchone()[0]
    ref = conn.execute(
        "select ref from service.context_add_version(p_context_id => %s, p_fragment_ids => %s)", (context_id, order)
    ).fetchone()[0]
    bundle = read_bundle(conn, retriever, "acme", ref, budget_tokens=4000)
    assert [f.id for f in bundle.fragments] == order  # bundle order, not a ranking
    assert (bundle.members, bundle.left_out) == (3, 0)
    assert bundle.tokens_used == sum(f.tokens for f in bundle.fragments)
    assert all(f.score == 0.0 and f.context == ref for f in bundle.fragments)
    trace = get_trace(conn, bundle.trace_id)
    assert trace["pipeline"]["context_read"] == "bundle order"
    assert [c["fragment_id"] for c in trace["candidates"]] == order
    assert [c["final_rank"] for c in trace["candidates"]] == [1, 2, 3]
    assert {c["reason"] for c in trace["candidates"]} == {"included"}

    # A budget that holds only the first member: the rest are left out, in bundle order.
    small = read_bundle(conn, retriever, "acme", ref, budget_tokens=bundle.fragments[0].tokens)
    assert [f.id for f in small.fragments] == order[:1] and small.left_out == 2


def round_trips(conn, run) -> int:
    """Times `run` waits on the server over `conn`, read from libpq's own protocol trace:
    each Sync of the extended protocol, and each simple Query, is answered once."""
    import tempfile

    from psycopg import pq

    with tempfile.TemporaryFile("w+") as log:
        conn.pgconn.trace(log.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            run()
        finally:
            conn.pgconn.untrace()
        log.seek(0)
        sent = [line.split("\t") for line in log.read().splitlines()]
    return sum(1 for fields in sent if fields[0] == "F" and len(fields) > 2 and fields[2] in ("Sync", "Query"))


def test_a_retrieval_waits_on_the_server_three_times(conn, ingest, retriever):
    """A whole retrieval once its principal is bound: the candidates (one call), then the
    composed versions' metadata together with what validity windows kept out (one
    pipeline), then the trace: three waits on the server, where metadata and left-out
    took one each before; the answer holds both as it did."""
    ingest(
        "acme",
        {
            "keys.md": "# Keys\n\nRotate the signing keys every ninety days.\n",
            "old.md": "---\nvalid_until: 2020-01-01\n---\n# Old keys\n\nRotate the signing keys yearly.\n",
        },
    )
    conn.execute(
        'update data.document_versions v set metadata = v.metadata || \'{"team": "security"}\''
        " from data.documents d where d.doc_id = v.doc_id and d.path = 'keys.md'"
    )
    act_as(conn, "acme", "admin")
    answers = []
    ask = request("rotate the signing keys", k_dense=0)
    assert round_trips(conn, lambda: answers.append(retriever.retrieve(conn, ask))) == 3
    (answer,) = answers
    assert [(f.source, f.metadata.get("team")) for f in answer.fragments] == [("keys.md#keys", "security")]
    trace = get_trace(conn, answer.trace_id)
    assert [(x["source"], x["reason"]) for x in trace["left_out"]] == [("old.md#old-keys", "expired")]
