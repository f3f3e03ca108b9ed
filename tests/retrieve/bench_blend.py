"""What the blend costs a retrieval (docs/adr/0014), on a small corpus: Retriever.rank
with the blend and with it replaced by nothing (the order of before), alternating, the
median of many calls; the profile look-up alone in SQL; and rank with the persona term
on and off. Not collected by default (slow); run it by path:

    .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/retrieve/bench_blend.py
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import UTC, datetime

import msgspec

from app.access import act_as
from app.retrieve import stages
from app.wire.retrieve import RetrieveRequest
from tests.retrieve.corpus import CODE, DOCS

WORDS = (
    "storage volume daemon journal certificate renewal nginx database vector lexical ingestion retrieval "
    "secrets vault rotate credentials onboarding buddy frontend accessible contrast button label deploy "
    "freeze friday rollback canary latency timeout retry backoff idempotency queue worker cache eviction "
    "index partition tenant scope persona session pager alert dashboard incident postmortem budget"
).split()
QUERIES = [
    "what to do when the storage volume is full",
    "how are certificates renewed",
    "rotate credentials in the vault",
    "retry with backoff and idempotency",
    "frontend accessibility contrast",
    "deploy freeze and rollback",
    "cache eviction in the worker queue",
    "latency alert and incident postmortem",
]


def corpus(n: int) -> dict[str, str]:
    rng = random.Random(7)
    docs = dict(DOCS) | {path: text for path, text in CODE.items()}
    for i in range(n):
        title = " ".join(rng.sample(WORDS, 3))
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        docs[f"gen/{i:04d}.md"] = f"# {title}\n\n{body}.\n"
    return docs


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000.0, 3)


def test_bench_blend(conn, ingest, retriever, monkeypatch):
    ingest("acme", corpus(600))
    ingest(
        "acme", {f"sre/{i}.md": f"# SRE {i}\n\npager alert dashboard latency {i}\n" for i in range(50)}, persona="sre"
    )
    act_as(conn, "acme", "admin")
    requests = [msgspec.convert({"query": q, "scope": {"org_id": "acme"}}, RetrieveRequest) for q in QUERIES]
    persona_requests = [
        msgspec.convert({"query": q, "scope": {"org_id": "acme", "persona_id": "sre"}}, RetrieveRequest)
        for q in QUERIES
    ]
    vectors = {r.query: retriever.query_embeddings(r.query) for r in requests}
    blend = stages.blend_terms

    def no_blend(candidates, profile, now):  # the order and scores of before: the base score stands
        for c in candidates:
            c.blended = c.base_score

    on: list[float] = []
    off: list[float] = []
    py_only: list[float] = []
    sizes = []
    for _ in range(25):
        for r in requests:
            for label in ("on", "off"):
                monkeypatch.setattr(stages, "blend_terms", blend if label == "on" else no_blend)
                started = time.perf_counter()
                ranking = retriever.rank(conn, r, vectors[r.query])
                (on if label == "on" else off).append(time.perf_counter() - started)
            sizes.append(len(ranking.ranked))
            started = time.perf_counter()
            blend(ranking.ranked + ranking.pinned, ranking.profile, datetime.now(UTC))
            ranking.ranked.sort(key=lambda c: -(c.blended or 0.0))
            py_only.append(time.perf_counter() - started)
    monkeypatch.setattr(stages, "blend_terms", blend)
    lookups = []
    for _ in range(200):
        started = time.perf_counter()
        conn.execute("select data._ranking_profile('acme', 'sre')").fetchone()
        lookups.append(time.perf_counter() - started)
    persona_off: list[float] = []
    persona_on: list[float] = []
    for _ in range(15):
        for weight, samples in ((0.0, persona_off), (0.3, persona_on)):
            conn.execute("select service.ranking_profile_set('acme', 'sre', p_w_persona => %s)", (weight,))
            for r in persona_requests:
                started = time.perf_counter()
                retriever.rank(conn, r, vectors[r.query])
                samples.append(time.perf_counter() - started)
    print(
        "\nrank() p50 ms: blend on",
        median_ms(on),
        "| blend off",
        median_ms(off),
        "| blend + sort alone",
        median_ms(py_only),
        "| profile look-up alone",
        median_ms(lookups),
        "| persona term off",
        median_ms(persona_off),
        "| persona term on (50 persona fragments)",
        median_ms(persona_on),
        "| ranked per call",
        statistics.median(sizes),
        "| calls per side",
        len(on),
    )
    conn.rollback()
