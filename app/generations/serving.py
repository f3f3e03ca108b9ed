"""Which model a service embeds with: the database decides (docs/adr/0021). Each
namespace is served by its active generation, whose recorded source loads the model; the
configured model (CONTEXTS_PROSE_MODEL / CONTEXTS_CODE_MODEL) is what a fresh database
starts with. Nothing is downloaded: a source that is not a model folder on this machine
is refused with a message saying so."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import psycopg

from app.text.embed import Embedder, is_packaged_model, model_label, resolve_model_path


class ModelNotLoadable(RuntimeError):
    """The promoted model cannot be loaded here; the message says which and why."""


class NoPreviousGeneration(LookupError):
    """A retrieval asked for the previous generation and no namespace has one it can
    search (never upgraded, or its window has ended); the message says which and why."""


@dataclass(frozen=True, slots=True)
class ServingModel:
    namespace: str
    name: str
    generation: int
    source: str
    dims: int

    @property
    def label(self) -> str:
        return f"{self.name}@{self.generation}"


def serving_models(conn: psycopg.Connection) -> dict[str, ServingModel]:
    """service.serving_models: per namespace, the active generation (one small indexed read)."""
    rows = conn.execute("select namespace, name, generation, source, dims from service.serving_models()").fetchall()
    return {row[0]: ServingModel(*row) for row in rows}


@dataclass(frozen=True, slots=True)
class PreviousModel:
    """The generation a namespace's last promotion replaced (service.previous_models)."""

    model: ServingModel
    window_ends_at: datetime
    queryable: bool
    """False once its window has ended: it answers nothing, until it is dropped."""


def previous_models(conn: psycopg.Connection) -> dict[str, PreviousModel]:
    """service.previous_models: per namespace, the generation its last promotion replaced,
    while its vectors are kept (one small indexed read)."""
    rows = conn.execute(
        "select namespace, name, generation, source, dims, window_ends_at, queryable from service.previous_models()"
    ).fetchall()
    return {row[0]: PreviousModel(ServingModel(*row[:5]), row[5], row[6]) for row in rows}


def previous_generations(previous: dict[str, PreviousModel]) -> dict[str, ServingModel]:
    """The namespaces a retrieval asking for the previous generation searches with it
    (the others: their active one). NoPreviousGeneration when there is none."""
    usable = {ns: p.model for ns, p in previous.items() if p.queryable}
    if usable:
        return usable
    ended = [
        f"{p.model.namespace} generation {p.model.generation} ({p.model.name}) ended its shadow window on "
        f"{p.window_ends_at:%Y-%m-%d %H:%M %Z}"
        for p in previous.values()
    ]
    raise NoPreviousGeneration(
        "no previous embedding generation answers queries: "
        + ("; ".join(ended) if ended else "no namespace was upgraded, or its replaced generation was dropped")
        + " (docs/models.md)"
    )


def local_source(model: ServingModel) -> str:
    """The model's source when it is a sentence-transformers folder on this machine, or a
    model an installed package carries."""
    if is_packaged_model(model.source):
        try:
            resolve_model_path(model.source)
        except RuntimeError as exc:
            raise ModelNotLoadable(f"namespace {model.namespace} is served by {model.label}: {exc}") from exc
        return model.source
    folder = Path(resolve_model_path(model.source))
    if not (folder.is_dir() and ((folder / "modules.json").is_file() or (folder / "config.json").is_file())):
        raise ModelNotLoadable(
            f"namespace {model.namespace} is served by {model.label}, whose model {model.source!r} is not a model "
            "folder on this machine (nothing is downloaded): put it there, or roll back with `contexts models rollback`"
        )
    return model.source


def load_models(embedders: dict[str, Embedder], models: dict[str, ServingModel]) -> dict[str, Embedder]:
    """The embedders with each namespace of `models` loaded from that generation's source
    (a model folder on this machine), its dimensions checked; ModelNotLoadable otherwise."""
    changed: dict[str, Embedder] = {}
    for namespace, model in models.items():
        loaded = replace(embedders[namespace], name=local_source(model))
        try:
            loaded.load()
            loaded.for_queries().load()
            dims = loaded.dims
        except Exception as exc:  # a folder that is not a loadable model
            raise ModelNotLoadable(f"namespace {namespace}: {model.label} from {model.source!r}: {exc}") from exc
        if dims != model.dims:
            raise ModelNotLoadable(
                f"namespace {namespace}: {model.source!r} makes {dims}-dim vectors, {model.label} has {model.dims}"
            )
        changed[namespace] = loaded
    return embedders | changed


def follow(embedders: dict[str, Embedder], serving: dict[str, ServingModel]) -> dict[str, Embedder] | None:
    """The embedders with each namespace whose serving generation differs from ours loaded
    from its source, or None when every namespace is served by our model already."""
    changed = {
        namespace: model
        for namespace, embedder in embedders.items()
        if (model := serving.get(namespace)) is not None and model_label(embedder.name) != model.name
    }
    return load_models(embedders, changed) if changed else None
