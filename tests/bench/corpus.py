"""The benches' corpus in their end-to-end tests: eight of this repository's ADRs, a few
dozen fragments of real prose. (All of docs/ makes hundreds, which a bench embeds at least
once: that was most of each test's time.)"""

from __future__ import annotations

import shutil
from pathlib import Path

ADRS = sorted((Path(__file__).resolve().parents[2] / "docs" / "adr").glob("000[1-8]-*.md"))


def small_corpus(folder: Path) -> Path:
    """`folder`, made, holding copies of the corpus's files."""
    folder.mkdir()
    for path in ADRS:
        shutil.copy(path, folder / path.name)
    return folder
