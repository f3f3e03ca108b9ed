"""Code is cut by tree-sitter in a child process, under a memory ceiling and a deadline.

Why: tree-sitter's error recovery explodes on some hostile inputs, and nothing inside the
library bounds it. Measured with the grammar wheels we ship: 20 KB of `%w(` read as Rust
took 57 s and 11 GB (60 KB: killed for memory, or a segmentation fault); 60 KB of it read
as C, 17 s and 4.8 GB; backslash-newlines read as Python parse in quadratic time (60 KB:
11 s). The parser's progress callback does not stop the Rust case. Inside the service
any of these takes the whole process down, with every request in flight. So the parse
and the walk over its tree run in a child that keeps nothing between documents: a crash,
an exhausted ceiling or a missed deadline kills that child only, the document is cut in
windows of lines (as a file of a language we do not parse is), the log says why, and the
next document gets a fresh child.

A child is a fresh interpreter that imports the chunker alone (never a fork of the
service, whose threads and model would be copied). One child serves one call at a time;
idle children are kept for the next call.
"""

from __future__ import annotations

import logging
import os
import queue
import resource
import subprocess
import sys
from multiprocessing.connection import Connection

from app.ingest.chunk_code import CodeChunker
from app.ingest.chunk_prose import ProseChunker
from app.ingest.chunks import Chunk

log = logging.getLogger(__name__)

MEMORY_MB = 1024
"""Address space a child may add to what it holds when it starts: a 2 MiB source file
of ordinary code parses and walks in well under 100 MB."""
SECONDS = 10.0
SECONDS_PER_MB = 10.0
"""A document's deadline: SECONDS plus this per MiB of its text (ordinary code parses at
about 2.5 MB/s and walks at about 0.5 MB/s on one of this machine's cores)."""
IDLE_CHILDREN = 4
"""Children kept for later calls (one call at a time each)."""


def _serve(memory_mb: int) -> None:
    """A child's loop: one (text, syntax, max_tokens, overlap_tokens) in, its chunks out,
    pickled over its standard input and output (anything else it prints goes to stderr)."""
    requests = Connection(os.dup(0))
    answers = Connection(os.dup(1))
    os.dup2(2, 1)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with open("/proc/self/statm") as statm:
            held = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        ceiling = held + memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    except (OSError, ValueError):  # no /proc or no limits here: the deadline still holds
        pass
    while True:
        try:
            text, syntax, max_tokens, overlap_tokens = requests.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            answers.send(("chunks", CodeChunker(max_tokens, overlap_tokens).chunk(text, syntax)))
        except MemoryError:
            answers.send(("failed", f"over its memory ceiling ({memory_mb} MB)"))
            return  # what is left of the heap is not worth keeping
        except Exception as exc:  # a defect of the chunker: the caller raises it
            answers.send(("error", exc))


class _Child:
    """A fresh interpreter running `_serve` (not a fork of the caller, whose threads,
    model and main module it would copy)."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.answers = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)
        self.requests.close()
        self.answers.close()


class ParseFailed(RuntimeError):
    """The child died, ran out of memory or missed its deadline."""


class SandboxedCodeChunker:
    """CodeChunker's cut, made in a child process (see the module's docstring)."""

    def __init__(
        self,
        max_tokens: int,
        overlap_tokens: int,
        memory_mb: int = MEMORY_MB,
        seconds: float = SECONDS,
        seconds_per_mb: float = SECONDS_PER_MB,
    ) -> None:
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.memory_mb = memory_mb
        self.seconds = seconds
        self.seconds_per_mb = seconds_per_mb

    def chunk(self, text: str, syntax: str, path: str = "") -> list[Chunk]:
        try:
            return self.parse(text, syntax)
        except ParseFailed as exc:
            log.warning("%s: not cut along its %s definitions: %s; cut in windows of lines", path, syntax, exc)
            # As a file of a language we do not parse: windows of lines, cut at blank lines.
            return ProseChunker(self.max_tokens, self.overlap_tokens).chunk(text, syntax)

    def deadline(self, text: str) -> float:
        return self.seconds + self.seconds_per_mb * len(text) / 2**20

    def parse(self, text: str, syntax: str) -> list[Chunk]:
        """The chunks, or ParseFailed (the child that failed is gone)."""
        request = (text, syntax, self.max_tokens, self.overlap_tokens)
        deadline = self.deadline(text)
        child = _idle_child(self.memory_mb)
        if child is not None:
            try:
                child.requests.send(request)
            except OSError:  # it died since it last answered: this file is not why
                child.kill()
                child = None
        try:
            if child is None:
                child = _Child(self.memory_mb)
                child.requests.send(request)
            if not child.answers.poll(deadline):
                raise ParseFailed(f"no answer within {deadline:.0f} s")
            status, value = child.answers.recv()
        except (EOFError, OSError) as exc:
            if child is None:  # no child could be started: not this file's doing
                raise
            child.kill()
            raise ParseFailed(f"its parser died (exit code {child.process.returncode})") from exc
        except BaseException:
            if child is not None:
                child.kill()
            raise
        if status == "failed":
            child.kill()
            raise ParseFailed(value)
        _keep(child)
        if status == "error":
            raise value
        return list(value)


_IDLE: queue.LifoQueue[_Child] = queue.LifoQueue()
"""Children waiting for a call, shared by every chunker of this process."""


def _idle_child(memory_mb: int) -> _Child | None:
    while True:
        try:
            child = _IDLE.get_nowait()
        except queue.Empty:
            return None
        if child.alive() and child.memory_mb == memory_mb:
            return child
        child.kill()  # killed while idle (the system's out-of-memory killer), or another ceiling


def _keep(child: _Child) -> None:
    if _IDLE.qsize() < IDLE_CHILDREN:
        _IDLE.put(child)
    else:
        child.kill()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
