"""R-ING-2 on real code: one fragment per definition, headed by its symbol, never cut
mid-line, split only when over the bound, with overlap."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.ingest.chunk_code import CodeChunker
from app.ingest.normalize import syntax_of

CODE = Path(__file__).parents[1] / "fixtures" / "code"
REPO_APP = Path(__file__).parents[2] / "app"


def chunk(path: Path, max_tokens: int = 512, overlap: int = 64):
    return CodeChunker(max_tokens, overlap).chunk(path.read_text(), syntax_of(path.name))


def test_python_top_level_definitions_are_whole_fragments():
    source = (CODE / "inventory.py").read_text()
    lines = source.split("\n")
    chunks = chunk(CODE / "inventory.py")
    by_symbol = {c.symbol: c for c in chunks}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            expected = "\n".join(lines[first - 1 : node.end_lineno])
            assert by_symbol[node.name].text.endswith(expected)
            assert by_symbol[node.name].end_line == node.end_lineno
    # The short prelude (docstring, imports, a constant) travels with the first unit.
    first = chunks[0]
    assert first.symbol == "Reservation" and first.start_line == 1
    assert "import time" in first.text and "DEFAULT_TTL_SECONDS = 900" in first.text


def test_a_long_prelude_stays_a_fragment_of_its_own():
    constants = "\n".join(f"SETTING_{i} = 'value number {i} for the service configuration'" for i in range(30))
    source = f"import os\n{constants}\n\n\ndef main():\n    return os.environ\n"
    chunks = CodeChunker(512, 64).chunk(source, "python")
    assert [c.symbol for c in chunks] == [None, "main"]
    assert chunks[1].text.startswith("def main")


def test_every_line_is_covered_and_no_fragment_cuts_a_line():
    path = REPO_APP / "ingest" / "chunk_code.py"
    lines = path.read_text().split("\n")
    chunks = chunk(path, max_tokens=300)
    covered = set()
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.token_count <= 300 or c.start_line == c.end_line
        covered.update(range(c.start_line, c.end_line + 1))
    code_lines = {i + 1 for i, line in enumerate(lines) if line.strip()}
    assert code_lines <= covered


def test_large_class_splits_into_methods_headed_by_class():
    methods = "\n".join(
        f"    # -- step {i} --\n\n    def step_{i}(self, value):\n"
        + "".join(f"        value = self.adjust(value, {i}, {j})  # adjustment {j}\n" for j in range(8))
        + "        return value\n"
        for i in range(12)
    )
    source = f'class Pipeline:\n    """Runs twelve steps."""\n\n{methods}'
    chunks = CodeChunker(300, 64).chunk(source, "python")
    symbols = [c.symbol for c in chunks]
    assert {f"Pipeline.step_{i}" for i in range(12)} <= set(symbols)
    step = next(c for c in chunks if c.symbol == "Pipeline.step_5")
    assert step.heading_path == ("Pipeline", "step_5")
    assert step.text.lstrip().startswith(("def step_5", "# -- step 5"))


def test_oversized_function_splits_at_statements_with_overlap():
    body = "\n".join(f"    total += compute_step_{i}(value, factor={i})  # step {i}" for i in range(120))
    source = f"def long_function(value):\n    total = 0\n{body}\n    return total\n"
    chunks = CodeChunker(200, 64).chunk(source, "python")
    assert len(chunks) > 2
    assert all(c.symbol == "long_function" for c in chunks)
    lines = source.split("\n")
    for previous, current in zip(chunks, chunks[1:]):
        assert current.start_line <= previous.end_line, "consecutive pieces overlap"
        overlap = lines[current.start_line - 1 : previous.end_line]
        assert 0 < sum(len(line) for line in overlap)
    for c in chunks:
        assert c.token_count <= 200
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ledger.go", {"Account", "Account.Debit", "Transfer"}),
        ("ring.rs", {"Ring", "checksum"}),
        ("RateLimiter.java", {"RateLimiter"}),
        ("retry.ts", {"RetryOptions", "withRetry", "jitter", "CircuitBreaker"}),
        ("cart.js", {None, "subtotal", "total", "Cart"}),
        ("pool.h", {None, "pool_t", "pool_free"}),
        ("pool.c", {"pool_state", "pool_acquire", "pool_release"}),
        ("ring_buffer.cpp", {"net", "main"}),
        ("order.rb", {"Shop"}),
        ("Invoice.cs", {"Billing.Invoices"}),
    ],
)
def test_other_languages_chunk_along_definitions(name, expected):
    chunks = chunk(CODE / name)
    assert {c.symbol for c in chunks} == expected
    lines = (CODE / name).read_text().split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.anchor == f"L{c.start_line}-L{c.end_line}"


def test_small_bound_splits_java_class_into_members():
    chunks = chunk(CODE / "RateLimiter.java", max_tokens=64, overlap=16)
    symbols = {c.symbol for c in chunks}
    assert {"RateLimiter.tryAcquire", "RateLimiter.retryAfter"} <= symbols


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pool.h", {"pool_t", "pool_free"}),
        ("ring_buffer.cpp", {"net.Ring", "net.Ring.push", "net.Ring.size", "net.Server::accept", "main"}),
        ("order.rb", {"Shop.Order", "Shop.version"}),
        ("Invoice.cs", {"Billing.Invoices.Invoice.Total", "Billing.Invoices.Invoice.Invoice", "Billing.Invoices.Line"}),
    ],
)
def test_c_cpp_ruby_and_csharp_split_into_their_members_under_a_small_bound(name, expected):
    """Include guards and `extern "C"` are seen through; a C declarator names its function
    (`*f(int)`, `A::g`); a template is named by what it declares."""
    chunks = chunk(CODE / name, max_tokens=40, overlap=8)
    assert expected <= {c.symbol for c in chunks}
    text = (CODE / name).read_text()
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert {n + 1 for n, line in enumerate(text.splitlines()) if line.strip()} <= covered
