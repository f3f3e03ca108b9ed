"""R-ING-2: no fragment is over the size bound, whatever the shape of the input (one
huge line, a word without spaces, CJK, minified code), and every fragment quotes the
document verbatim on the lines it names."""

from __future__ import annotations

import random
import re
import time
from bisect import bisect_right
from itertools import pairwise

import pytest
import regex
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from app.ingest.normalize import SourceDocument
from app.ingest.pipeline import IngestPipeline, PreparedDocument
from app.text.tokens import count_tokens

BOUND, OVERLAP = 64, 16
WORDS = (
    "postgres",
    "stores",
    "every",
    "fragment",
    "with",
    "its",
    "citation",
    "while",
    "the",
    "ranker",
    "fuses",
    "lexical",
    "and",
    "dense",
    "scores",
    "for",
    "agents",
    "that",
    "need",
    "durable",
    "context",
)


@pytest.fixture(scope="module")
def small(settings) -> IngestPipeline:
    return IngestPipeline(settings.with_(max_fragment_tokens=BOUND, overlap_tokens=OVERLAP), {})


@pytest.fixture(scope="module")
def default(settings) -> IngestPipeline:
    return IngestPipeline(settings, {})


def checked(pipeline: IngestPipeline, path: str, content: str) -> PreparedDocument:
    """Prepare a document and check every chunk against its normalized text: within the
    bound, its real token count, found verbatim on the lines it names, never cutting a
    character, and (where each chunk's place is unambiguous) every visible character
    in some chunk."""
    prepared = pipeline.prepare(SourceDocument(path=path, content=content))
    text, bound = prepared.doc.text, pipeline.settings.max_fragment_tokens
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    clusters = [m.start() for m in regex.finditer(r"\X", text)] + [len(text)]

    def whole_characters(at: int) -> bool:
        for cut in (at, at + len(chunk.text)):
            i = bisect_right(clusters, cut) - 1
            if clusters[i] != cut and count_tokens(text[clusters[i] : clusters[i + 1]]) <= bound:
                return False
        return True

    covered = bytearray(len(text))
    ambiguous, previous = False, (-1, 0)
    assert prepared.chunks
    for chunk in prepared.chunks:
        assert chunk.token_count == count_tokens(chunk.text) <= bound
        if chunk.anchor.startswith("L"):
            assert chunk.anchor == f"L{chunk.start_line}-L{chunk.end_line}"
        first, last = starts[chunk.start_line - 1], starts[chunk.end_line]
        places = []
        at = text.find(chunk.text, first, last)
        while at >= 0:
            places.append(at)
            at = text.find(chunk.text, at + 1, last)
        assert places, f"{chunk.anchor}: not a verbatim span of its lines"
        assert any(
            bisect_right(starts, at) == chunk.start_line
            and bisect_right(starts, at + len(chunk.text) - 1) == chunk.end_line
            for at in places
        )
        assert any(whole_characters(at) for at in places), f"{chunk.anchor}: cuts a character"
        if len(places) == 1:
            at, end = places[0], places[0] + len(chunk.text)
            assert at > previous[0] and end > previous[1], "chunks follow the text, none inside another"
            covered[at:end] = b"\x01" * len(chunk.text)
            previous = (at, end)
        ambiguous = ambiguous or len(places) > 1
    if not ambiguous:
        missed = [m.start() for m in re.finditer(r"\S", text) if not covered[m.start()]]
        assert not missed, f"{len(missed)} visible characters in no chunk: {text[missed[0] : missed[0] + 40]!r}"
    return prepared


# -- hostile shapes ----------------------------------------------------------------------


def sentences(rng: random.Random, size: int, end_marks: str = ".!?") -> str:
    out: list[str] = []
    length = 0
    while length < size:
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 30))] + [str(rng.randint(0, 10**6))]
        rng.shuffle(words)
        out.append(" ".join(words).capitalize() + rng.choice(end_marks))
        length += len(out[-1]) + 1
    return " ".join(out)[:size]


def minified_js(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        i = rng.randint(0, 10**6)
        out.append(
            f"function f{i}(a,b){{var c=a*{i}+b;if(c>{i % 97}){{return c-{i}}}"
            f"else{{return g{i}(c,[{i},{rng.randint(0, 99)}])}}}};"
        )
        length += len(out[-1])
    return "".join(out)[:size]


def cjk(rng: random.Random, size: int, stops: bool) -> str:
    chars = [chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(size)]
    if stops:
        for i in range(rng.randint(20, 40), size, rng.randint(20, 40)):
            chars[i] = "\u3002"
    return "".join(chars)


def shapes() -> dict[str, tuple[str, str]]:
    rng = random.Random(20261201)
    long_prose = sentences(rng, 20_000)
    return {
        "one line of sentences": ("notes.txt", long_prose),
        "one word without spaces": ("blob.txt", "".join(rng.choice("0123456789abcdef") for _ in range(30_000))),
        "CJK without spaces or stops": ("zh.txt", cjk(rng, 8_000, stops=False)),
        "CJK sentences without spaces": ("zh.md", "# 说明\n\n" + cjk(rng, 8_000, stops=True)),
        "minified JS": ("bundle.min.js", minified_js(rng, 30_000)),
        "combining marks and emoji joins": (
            "marks.txt",
            "".join(
                rng.choice(("e\u0301\u0302", "\U0001f469\u200d\U0001f4bb", "a", "\u0915\u094d\u0937"))
                for _ in range(6_000)
            ),
        ),
        "long and short lines": ("mixed.md", "\n".join(sentences(rng, rng.choice((40, 80, 6_000))) for _ in range(30))),
        "long line in a markdown section": (
            "guide.md",
            (
                "# Guide\n\nShort intro.\n\n## Details\n\n"
                + sentences(rng, 12_000)
                + "\n\n- a list item\n- another\n\n## After\n\nThe end.\n"
            ),
        ),
        "long line in a Python function": (
            "svc.py",
            (
                "import os\n\n\ndef render(value):\n    prefix = os.sep\n"
                f"    template = {sentences(rng, 12_000)!r}\n    return prefix + template.format(value)\n\n\n"
                "def other():\n    return 1\n"
            ),
        ),
    }


@pytest.mark.parametrize("shape", list(shapes()))
@pytest.mark.parametrize("bound", ["small", "default"])
def test_hostile_shapes_stay_within_the_bound(shape, bound, request):
    path, content = shapes()[shape]
    prepared = checked(request.getfixturevalue(bound), path, content)
    if content.count("\n") == 0 and len(content) > 8_000:
        assert len(prepared.chunks) > 1


def test_a_long_line_keeps_its_section_and_symbol(small):
    _path, guide = shapes()["long line in a markdown section"]
    sections = {c.heading_path for c in checked(small, "guide.md", guide).chunks}
    assert sections == {("Guide",), ("Guide", "Details"), ("Guide", "After")}
    _path, code = shapes()["long line in a Python function"]
    chunks = checked(small, "svc.py", code).chunks
    render = [c for c in chunks if c.symbol == "render"]
    assert len(render) > 10 and all(4 <= c.start_line <= c.end_line <= 7 for c in render)
    assert [c.symbol for c in chunks if c.start_line > 7] == ["other"]


def test_sentences_are_preferred_and_pieces_overlap(default):
    """A long line is cut after a sentence, and the next piece repeats whole sentences
    of the previous one's tail, up to overlap_tokens (as lines do between lines)."""
    _path, text = shapes()["one line of sentences"]
    chunks = checked(default, "notes.txt", text).chunks
    assert len(chunks) > 5
    assert all(c.text.endswith((".", "!", "?")) for c in chunks[:-1])
    overlap = default.settings.overlap_tokens
    for previous, current in pairwise(chunks):
        previous_end = text.find(previous.text) + len(previous.text)
        repeated = text[text.find(current.text) : previous_end]
        assert repeated and count_tokens(repeated) <= overlap + 1


def test_minified_code_has_no_misleading_symbol(small):
    _path, content = shapes()["minified JS"]
    chunks = checked(small, "bundle.min.js", content).chunks
    assert {c.symbol for c in chunks} == {None}
    assert all(c.text.endswith((";", "{", "}")) for c in chunks[:-1])


@pytest.mark.slow
@pytest.mark.parametrize(("path", "make"), [("one-line.txt", sentences), ("bundle.min.js", minified_js)])
def test_two_mebibyte_lines_prepare_in_seconds(default, path, make):
    content = make(random.Random(7), 2 * 1024 * 1024 - 16)
    began = time.perf_counter()
    prepared = default.prepare(SourceDocument(path=path, content=content))
    elapsed = time.perf_counter() - began
    assert max(c.token_count for c in prepared.chunks) <= default.settings.max_fragment_tokens
    assert elapsed < 60, f"{elapsed:.1f} s"


def test_a_one_line_document_is_stored_as_bounded_fragments(ingest, conn, settings):
    text = sentences(random.Random(3), 32_000)
    ingest("acme", {"notes/one-line.txt": text})
    rows = conn.execute("select token_count, text from data.fragments").fetchall()
    assert len(rows) > 5
    assert max(tokens for tokens, _text in rows) <= settings.max_fragment_tokens
    assert all(fragment in text for _tokens, fragment in rows)


# -- any input ---------------------------------------------------------------------------

_pieces = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from([" ", " ", "  ", "\n", "\n\n", ". ", "; ", "{", "}", "# ", "\t"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=200, max_size=1_500),
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=50, max_size=800),
)


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(_pieces, min_size=1, max_size=120),
    path=st.sampled_from(["a.txt", "a.md", "a.rst", "a.py", "a.js", "a.go"]),
)
def test_any_text_stays_within_the_bound(small, parts, path):
    content = "".join(parts)
    if not content.strip():
        return
    checked(small, path, content)


# -- fragments per document ----------------------------------------------------------------


def test_a_document_cut_into_more_fragments_than_the_limit_is_refused_and_the_others_are_stored(conn, settings, models):
    """A document of thousands of tiny sections is refused before anything is written
    (matching its chunks against each other held its org's write lock for minutes); the
    other documents of the same ingest are stored."""
    import dataclasses

    from app.access import ensure_admin_principal
    from app.ingest.batches import ingest_groups
    from app.ingest.normalize import RejectedDocument
    from app.scope import Scope

    pipeline = IngestPipeline(dataclasses.replace(settings, max_document_fragments=4), models)
    many = "".join(f"# Section {i}\n\nThe section numbered {i} says little.\n\n" for i in range(12))
    with pytest.raises(RejectedDocument, match=r"many\.md: cut into \d+ fragments, over the limit of 4"):
        pipeline.prepare(SourceDocument(path="many.md", content=many))

    conn.execute("select service.create_org('acme')")
    pipeline.register_models(conn)
    ensure_admin_principal(conn, "acme", "admin")
    conn.commit()
    files = {"many.md": many, "few.md": "# Few\n\nOne short section.\n"}
    refused: list[tuple[str, str]] = []
    groups = list(
        ingest_groups(
            conn,
            pipeline,
            Scope("acme"),
            "admin",
            list(files),
            lambda path: SourceDocument(path=path, content=files[path]),
            on_refused=lambda path, exc: refused.append((path, str(exc))),
        )
    )
    assert [path for path, _ in refused] == ["many.md"] and "CONTEXTS_MAX_DOCUMENT_FRAGMENTS" in refused[0][1]
    assert [r.path for g in groups for r in g.results] == ["few.md"]
    stored = conn.execute("select d.path from data.documents d order by d.path").fetchall()
    assert stored == [("few.md",)]
