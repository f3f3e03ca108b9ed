"""Which model a service embeds with: the database decides (docs/adr/0021). Each
namespace is served by its active generation, whose recorded source loads the model; the
configured model (CONTEXTS_PROSE_MODEL / CONTEXTS_CODE_MODEL) is what a fresh database
starts with. Nothing is downloaded: a source that is not a model folder on this machine
is refused with a message saying so."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import psycopg

from app.ingest.embed import Embedder, model_label, resolve_model_path


class ModelNotLoadable(RuntimeError):
    """The promoted model cannot be loaded here; the message says which and why."""


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
    """api.serving_models: per namespace, the active generation (one small indexed read)."""
    rows = conn.execute("select namespace, name, generation, source, dims from api.serving_models()").fetchall()
    return {row[0]: ServingModel(*row) for row in rows}


def local_source(model: ServingModel) -> str:
    """The model's source when it is a sentence-transformers folder on this machine."""
    folder = Path(resolve_model_path(model.source))
    if not (folder.is_dir() and ((folder / "modules.json").is_file() or (folder / "config.json").is_file())):
        raise ModelNotLoadable(
            f"namespace {model.namespace} is served by {model.label}, whose model {model.source!r} is not a model "
            "folder on this machine (nothing is downloaded): put it there, or roll back with `contexts models rollback`"
        )
    return model.source


def follow(embedders: dict[str, Embedder], serving: dict[str, ServingModel]) -> dict[str, Embedder] | None:
    """The embedders with each namespace whose serving generation differs from ours loaded
    from its source, or None when every namespace is served by our model already."""
    changed: dict[str, Embedder] = {}
    for namespace, embedder in embedders.items():
        model = serving.get(namespace)
        if model is None or model_label(embedder.name) == model.name:
            continue
        followed = replace(embedder, name=local_source(model))
        try:
            followed.load()
            followed.for_queries().load()
            dims = followed.dims
        except Exception as exc:  # a folder that is not a loadable model
            raise ModelNotLoadable(f"namespace {namespace}: {model.label} from {model.source!r}: {exc}") from exc
        if dims != model.dims:
            raise ModelNotLoadable(
                f"namespace {namespace}: {model.source!r} makes {dims}-dim vectors, {model.label} has {model.dims}"
            )
        changed[namespace] = followed
    return embedders | changed if changed else None
