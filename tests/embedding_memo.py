"""The session's fragment embedder remembers what the real model said about each text.

Many tests ingest the same corpora (tests/retrieve/corpus.py, the fixtures), each into a
fresh database, so a test worker embedded the same texts again and again. The model
still computes every vector once per worker; a repeat is read back (the vector the model
gave for that text, under the same model, dtype, lane and backend). Measured on a CPU
without native bfloat16 (float32), the whole suite: 3,678 texts and 224 s in the model
before, 2,744 and 153 s after. Queries are not remembered (their lane is cheap); a test
about what the model computes takes a plain embedder (`plain`), which calls it every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.text.embed import Embedder, embedder_fields

_said: dict[tuple[str, str, str, str, str], list[float]] = {}
"""(model name, dtype, lane, backend, text) -> the model's vector, for this process."""


@dataclass(frozen=True, slots=True)
class RememberingEmbedder(Embedder):
    def for_queries(self) -> Embedder:
        return plain(self).for_queries()

    def embed(self, texts: list[str]) -> list[list[float]]:
        key = (self.name, self.dtype, self.lane, self.backend)
        todo = [t for t in dict.fromkeys(texts) if (*key, t) not in _said]
        if todo:
            _said.update(((*key, t), v) for t, v in zip(todo, Embedder.embed(self, todo), strict=True))
        return [list(_said[(*key, t)]) for t in texts]


def remembering(embedder: Embedder) -> RememberingEmbedder:
    return RememberingEmbedder(**embedder_fields(embedder))


def plain(embedder: Embedder) -> Embedder:
    return Embedder(**embedder_fields(embedder))
