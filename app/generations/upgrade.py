"""Embedding model upgrades (docs/adr/0021): a namespace is re-embedded into a shadow
generation in committed batches while queries keep using the active one; recorded
retrievals are replayed on the shadow; promotion switches when the gate passes.

Everything here runs as the migrator (the owner of the schema): an upgrade writes every
org's vectors, and a replay reads the traces it replays."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import msgspec
import psycopg
from psycopg.rows import dict_row

from app.ingest.pipeline import embedding_input
from app.text.embed import Embedder, model_label

if TYPE_CHECKING:
    from app.retrieve.service import Retriever

RetrieverFactory = Callable[[dict[str, Embedder], dict[str, int] | None], "Retriever"]
"""Builds a Retriever for these embedders, searching these generations (None: the active ones)."""

DEFAULT_WINDOW_DAYS = 14
DEFAULT_BATCH = 64


class GenerationError(ValueError):
    """A namespace or generation that cannot do what was asked; the message says why."""


@dataclass(slots=True)
class UpgradeResult:
    model_id: int
    namespace: str
    name: str
    generation: int
    embedded: int = 0
    """Fragments re-embedded by this run (an earlier, interrupted run's are not counted)."""
    personas: int = 0
    seconds: float = 0.0
    batches: int = 0

    @property
    def rate(self) -> float:
        """Fragments re-embedded per second of this run."""
        return self.embedded / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Throttle:
    """At most `rate` fragments per second on average (None: as fast as the model goes)."""

    rate: float | None
    started: float = field(default_factory=time.perf_counter)

    def wait(self, done: int) -> None:
        if not self.rate:
            return
        ahead = done / self.rate - (time.perf_counter() - self.started)
        if ahead > 0:
            time.sleep(ahead)


def generations(conn: psycopg.Connection) -> list[dict]:
    """api.model_generations: every generation, its coverage and replay overlap."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("select * from api.model_generations()").fetchall()


def generation_of(conn: psycopg.Connection, namespace: str, status: str) -> dict | None:
    """The namespace's generation of this status (the newest one for `retired`)."""
    rows = [g for g in generations(conn) if g["namespace"] == namespace and g["status"] == status]
    if status == "retired":
        rows = [g for g in rows if g["dropped_at"] is None]
    return rows[-1] if rows else None


def backlog_size(conn: psycopg.Connection, model_id: int) -> int:
    row = conn.execute("select count(*) from service.model_backlog(%s, 0, 2147483647)", (model_id,)).fetchone()
    return int(row[0]) if row else 0


def upgrade(
    conn: psycopg.Connection,
    namespace: str,
    embedder: Embedder,
    window_days: int = DEFAULT_WINDOW_DAYS,
    batch: int = DEFAULT_BATCH,
    rate: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> UpgradeResult:
    """Create (or resume) the namespace's shadow generation for `embedder`'s model and
    re-embed every active fragment lacking its vector, one committed batch at a time: a
    run killed at any point loses at most the batch in flight, and running it again
    continues. `progress(done, total)` after each batch. Persona descriptions follow."""
    started = time.perf_counter()
    row = conn.execute(
        "select service.begin_model_upgrade(%s, %s, %s, %s, %s)",
        (namespace, model_label(embedder.name), embedder.name, embedder.dims, window_days),
    ).fetchone()
    assert row is not None
    model_id = row[0]
    conn.commit()
    shadow = next(g for g in generations(conn) if g["model_id"] == model_id)
    result = UpgradeResult(model_id, namespace, shadow["name"], shadow["generation"])
    total = backlog_size(conn, model_id)
    throttle = Throttle(rate)
    if progress:
        progress(0, total)
    after = 0
    while True:
        rows = conn.execute(
            "select fragment_id, path, heading_path, text from service.model_backlog(%s, %s, %s)",
            (model_id, after, batch),
        ).fetchall()
        if not rows:
            if after == 0:
                break
            after = 0  # one more pass from the start: fragments a writer committed late
            continue
        vectors = embedder.embed([embedding_input(path, heading, text) for _id, path, heading, text in rows])
        conn.execute(
            "select service.add_model_vectors(%s, %s, %s::jsonb)",
            (model_id, [r[0] for r in rows], json.dumps(vectors)),
        )
        conn.commit()
        after = rows[-1][0]
        result.embedded += len(rows)
        result.batches += 1
        total = max(total, result.embedded)
        if progress:
            progress(result.embedded, total)
        throttle.wait(result.embedded)
    result.personas = _embed_personas(conn, model_id, embedder)
    result.seconds = time.perf_counter() - started
    return result


def _embed_personas(conn: psycopg.Connection, model_id: int, embedder: Embedder) -> int:
    """Persona descriptions (docs/adr/0014) embedded with the new generation too, so the
    persona term keeps its evidence once it is promoted."""
    rows = conn.execute(
        "select org_id, persona_id, description, updated_by from service.persona_backlog(%s)", (model_id,)
    ).fetchall()
    if not rows:
        return 0
    vectors = embedder.embed([r[2] for r in rows])
    for (org_id, persona_id, description, updated_by), vector in zip(rows, vectors):
        conn.execute(
            "select service.add_persona_vector(%s, %s, %s, %s, %s, %s::jsonb)",
            (model_id, org_id, persona_id, description, updated_by, json.dumps(vector)),
        )
    conn.commit()
    return len(rows)


def shadow_embedders(embedders: dict[str, Embedder], namespace: str, shadow: dict) -> dict[str, Embedder]:
    """The embedders with the namespace's model replaced by the shadow generation's."""
    if namespace not in embedders:
        raise GenerationError(f"unknown embedding namespace: {namespace}")
    return embedders | {namespace: replace(embedders[namespace], name=shadow["source"])}


def compared_generation(conn: psycopg.Connection, namespace: str, which: str | None = None) -> dict:
    """The generation a replay compares with the active one: `shadow` (an upgrade not yet
    promoted), `previous` (the one the last promotion replaced, while its window lasts),
    or, by default, the shadow when there is one and else the previous generation."""
    if which in (None, "shadow"):
        shadow = generation_of(conn, namespace, "shadow")
        if shadow is not None:
            return shadow | {"role": "shadow"}
        if which == "shadow":
            raise GenerationError(
                f"namespace {namespace} has no shadow generation: run `contexts models upgrade` first"
            )
    row = conn.execute(
        "select model_id, generation, window_ends_at, queryable from service.previous_models() where namespace = %s",
        (namespace,),
    ).fetchone()
    if row is None:
        raise GenerationError(
            f"namespace {namespace} has no shadow generation and no previous one to compare with the active "
            "generation: run `contexts models upgrade` first"
        )
    model_id, generation, window_ends_at, queryable = row
    if not queryable:
        raise GenerationError(
            f"generation {generation} of {namespace} ended its shadow window on {window_ends_at:%Y-%m-%d %H:%M %Z}: "
            "it answers nothing (`contexts models drop-retired` drops it)"
        )
    return next(g for g in generations(conn) if g["model_id"] == model_id) | {"role": "previous"}


@dataclass(slots=True)
class ReplaySummary:
    model_id: int
    generation: int
    replayed: int
    errors: int
    mean_overlap: float | None
    mean_shared: float | None
    worst: list[dict]
    """The queries whose top results moved most (lowest overlap first)."""
    role: str = "shadow"
    """What the compared generation is: `shadow` or `previous`."""
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per kind of recorded trace (app.eval.replay.KINDS), how many were replayed and skipped."""
    skipped: list[dict] = field(default_factory=list)
    """Each trace skipped: origin, kind and reason."""


def replay_shadow(
    conn: psycopg.Connection,
    namespace: str,
    current: RetrieverFactory,
    embedders: dict[str, Embedder],
    org_id: str | None = None,
    limit: int = 200,
    top: int = 3,
    worst: int = 5,
    progress: Callable[[int, int], None] | None = None,
    which: str | None = None,
) -> ReplaySummary:
    """Replay the most recent recorded traces (`contexts eval replay`'s reading of them,
    every kind replayed or skipped and counted) on another generation of the namespace
    than the active one (compared_generation: the shadow, or the previous one within its
    window), each for the principal that asked, and record per query the top-`top`
    overlap with the active generation (data.model_replays). Lexical-only requests are
    skipped: no embedding generation takes part in them. A request that asked for the
    previous generation is replayed on both sides like any other: the query is what is
    compared. `current(embedders, generations)` builds a Retriever."""
    from app.eval.replay import Skipped, from_traces, replay
    from app.generations.serving import ModelNotLoadable, follow, serving_models
    from app.retrieve.config import PipelineConfig

    other = compared_generation(conn, namespace, which)
    try:  # the active side embeds with the active generation's model, whatever is configured
        embedders = follow(embedders, serving_models(conn)) or embedders
    except ModelNotLoadable as exc:
        raise GenerationError(str(exc)) from exc
    selection = from_traces(conn, org_id, limit)
    recorded, skipped = [], list(selection.skipped)
    for item in selection.recorded:
        if item.request.k_dense == 0:
            skipped.append(Skipped(item.origin, item.kind, "lexical only: no embedding generation takes part"))
        else:
            recorded.append(replace(item, request=msgspec.structs.replace(item.request, generation="active")))
    config = PipelineConfig()
    active_side = (config, current(embedders, None))
    other_side = (
        config,
        current(shadow_embedders(embedders, namespace, other), {namespace: other["generation"]}),
    )
    report = replay(conn, recorded, active_side, other_side, top=top, progress=progress, skipped=skipped)
    for item, result in zip(recorded, report.results, strict=True):
        if result.get("skipped"):
            continue
        trace_id = uuid.UUID(item.origin.removeprefix("trace "))
        if result.get("error"):
            conn.execute(
                "select service.record_model_replay(%s, %s, null, null, %s, null, %s)",
                (other["model_id"], trace_id, top, result["error"]),
            )
            continue
        ids_active = {c["fragment_id"] for c in result["current"]}
        ids_other = {c["fragment_id"] for c in result["candidate"]}
        result["shared_top"] = len(ids_active & ids_other)
        conn.execute(
            "select service.record_model_replay(%s, %s, %s, %s, %s, %s)",
            (other["model_id"], trace_id, result["overlap"], result["shared_top"], top, result["same_order"]),
        )
    conn.commit()
    replayed = report.replayed
    scored = [r for r in replayed if r.get("overlap") is not None]
    return ReplaySummary(
        other["model_id"],
        other["generation"],
        len(replayed),
        sum(1 for r in replayed if r.get("error")),
        sum(r["overlap"] for r in scored) / len(scored) if scored else None,
        sum(r["shared_top"] for r in scored) / len(scored) if scored else None,
        sorted(scored, key=lambda r: (r["overlap"], r["origin"]))[:worst],
        other["role"],
        report.kinds,
        [s.to_dict() for s in report.skipped],
    )
