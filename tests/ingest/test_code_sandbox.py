"""Hostile code cannot take the process down: tree-sitter runs in a child process with a
memory ceiling and a deadline (app/ingest/code_sandbox.py). The inputs below are real
ones that exploded in process (gigabytes, a segmentation fault, quadratic time)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from app.ingest import code_sandbox
from app.ingest.chunk_code import CodeChunker
from app.ingest.chunk_prose import ProseChunker
from app.ingest.code_sandbox import SandboxedCodeChunker
from app.ingest.normalize import SourceDocument, syntax_of

CODE = Path(__file__).parents[1] / "fixtures" / "code"


def repeated(pattern: str, size: int) -> str:
    return (pattern * (size // len(pattern) + 1))[:size]


def test_ordinary_code_is_cut_exactly_as_in_process():
    sandboxed = SandboxedCodeChunker(512, 64)
    files = sorted(p for p in CODE.iterdir() if p.is_file())
    assert len({syntax_of(p.name) for p in files}) >= 4
    for path in files:
        text, syntax = path.read_text(), syntax_of(path.name)
        assert sandboxed.chunk(text, syntax, path.name) == CodeChunker(512, 64).chunk(text, syntax), path.name


def test_a_parser_over_its_memory_ceiling_dies_alone_and_the_file_is_cut_in_windows(caplog):
    # In process: 5 KB of this read as Rust took 800 MB, 20 KB 11 GB, 60 KB a kill or a
    # segmentation fault.
    hostile = repeated("%w(", 8000)
    chunker = SandboxedCodeChunker(512, 64, memory_mb=200)
    with caplog.at_level(logging.WARNING, logger="app.ingest.code_sandbox"):
        chunks = chunker.chunk(hostile, "rust", "evil.rs")
    assert chunks == ProseChunker(512, 64).chunk(hostile, "rust") and chunks
    assert "evil.rs: not cut along its rust definitions: its parser died" in caplog.text
    # The next document gets a fresh child, and the right cut.
    source = (CODE / "inventory.py").read_text()
    assert chunker.chunk(source, "python") == CodeChunker(512, 64).chunk(source, "python")


def test_a_parse_past_its_deadline_is_killed(caplog):
    # Backslash-newlines read as Python parse in quadratic time (60 KB: 11 s in process).
    hostile = repeated("\\\n", 200_000)
    chunker = SandboxedCodeChunker(512, 64, seconds=0.5, seconds_per_mb=0.0)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="app.ingest.code_sandbox"):
        chunks = chunker.chunk(hostile, "python", "slow.py")
    assert time.monotonic() - started < 10
    assert chunks == ProseChunker(512, 64).chunk(hostile, "python")
    assert "slow.py: not cut along its python definitions: no answer within 0 s" in caplog.text


def test_a_defect_of_the_chunker_is_raised_not_hidden():
    with pytest.raises(ValueError, match="no tree-sitter grammar for .no-such-syntax."):
        SandboxedCodeChunker(512, 64).chunk("x = 1\n", "no-such-syntax")


def test_the_pipeline_stores_a_hostile_file_in_windows(pipeline, caplog):
    # 60 KB of this read as C took 17 s and 4.8 GB in process; the child dies at its ceiling.
    hostile = repeated("%w(", 60_000)
    with caplog.at_level(logging.WARNING, logger="app.ingest.code_sandbox"):
        prepared = pipeline.prepare(SourceDocument(path="src/evil.c", content=hostile.encode()))
    assert "src/evil.c: not cut along its c definitions" in caplog.text
    assert prepared.namespace == "code" and prepared.chunks == ProseChunker(512, 64).chunk(hostile, "c")


def test_a_child_killed_while_idle_is_replaced_without_failing_the_next_file(monkeypatch):
    chunker = SandboxedCodeChunker(512, 64)
    source = (CODE / "ring.rs").read_text()
    expected = CodeChunker(512, 64).chunk(source, "rust")
    assert chunker.chunk(source, "rust") == expected
    idle = list(code_sandbox._IDLE.queue)
    assert idle
    for child in idle:  # as the system's out-of-memory killer would
        child.process.kill()
        child.process.wait()
    assert chunker.chunk(source, "rust") == expected
    # Dead, yet not known to be (it died after the check): its pipe refuses the file.
    for child in list(code_sandbox._IDLE.queue):
        child.process.kill()
        child.process.wait()
    monkeypatch.setattr(code_sandbox._Child, "alive", lambda self: True)
    assert chunker.chunk(source, "rust") == expected
