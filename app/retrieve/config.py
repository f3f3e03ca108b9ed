"""Retrieval knobs that are not part of a request: how candidates are fused and
reranked. One `PipelineConfig` describes a pipeline; the service runs the defaults,
and `contexts eval replay` compares a candidate configuration against them."""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path


class ConfigError(ValueError):
    """A pipeline configuration file that cannot be used as given."""


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    k_lexical: int | None = None
    """Lexical list depth; None keeps each request's own value."""

    k_dense: int | None = None
    """Dense list depth; None keeps each request's own value."""

    rerank_top: int | None = None
    """Fused candidates the reranker scores; None keeps each request's own value."""

    fusion: str = "weighted"
    """"weighted": calibrated score fusion (sql/functions/45_fusion.sql); "rrf": rank fusion."""

    dense_weight: float = 0.5
    """Share of the dense side in the weighted fusion (the lexical side has the rest)."""

    code_lexical_weight: float = 0.2
    """Factor on the lexical evidence of code fragments when the query is natural
    language: the words of a question rarely occur in the code that answers it."""

    rrf_k: int = 60
    """Reciprocal Rank Fusion constant: a rank r contributes 1 / (rrf_k + r)."""

    reranker: str | None = "learned"
    """`learned` (the default: the shipped linear model, docs/adr/0015), a
    learned-reranker .json file, or a CrossEncoder name or local path; None or `none`
    keeps the fused order."""

    def validate(self) -> PipelineConfig:
        for name in ("k_lexical", "k_dense"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and 0 <= value <= 1000):
                raise ConfigError(f"{name} must be an integer between 0 and 1000, not {value!r}")
        if self.rerank_top is not None and not (isinstance(self.rerank_top, int) and 1 <= self.rerank_top <= 1000):
            raise ConfigError(f"rerank_top must be an integer between 1 and 1000, not {self.rerank_top!r}")
        if self.fusion not in ("weighted", "rrf"):
            raise ConfigError(f"fusion must be 'weighted' or 'rrf', not {self.fusion!r}")
        for name in ("dense_weight", "code_lexical_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"{name} must be a number between 0 and 1, not {value!r}")
        if not isinstance(self.rrf_k, int) or self.rrf_k < 1:
            raise ConfigError(f"rrf_k must be a positive integer, not {self.rrf_k!r}")
        if self.reranker is not None and (not isinstance(self.reranker, str) or not self.reranker.strip()):
            raise ConfigError("reranker must be 'learned', 'none', a model name or path, or absent")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, origin: str = "configuration", base: PipelineConfig | None = None) -> PipelineConfig:
        """The knobs `data` names over `base` (the defaults when None)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{origin}: a pipeline configuration is a JSON or TOML object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{origin}: unknown knob(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        try:
            return replace(base or cls(), **data).validate()
        except ConfigError as exc:
            raise ConfigError(f"{origin}: {exc}") from exc

    @classmethod
    def load(cls, path: Path, base: PipelineConfig | None = None) -> PipelineConfig:
        """Read a .json or .toml file of knobs; anything not named keeps its value in
        `base` (the current configuration; the defaults when None)."""
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(raw) if path.suffix.lower() == ".toml" else json.loads(raw)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"{path}: not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {exc}"
            ) from exc
        return cls.from_dict(data, str(path), base)

    def apply(self, request):
        """The request with this configuration's list depths and rerank width, where set."""
        import msgspec

        overrides = {
            name: getattr(self, name)
            for name in ("k_lexical", "k_dense", "rerank_top")
            if getattr(self, name) is not None
        }
        return msgspec.structs.replace(request, **overrides) if overrides else request
