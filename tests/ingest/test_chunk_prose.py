"""R-ING-2 on prose: heading hierarchy kept, fenced blocks respected, splits overlap."""

from __future__ import annotations

from app.ingest.chunk_prose import TABLE_PIECE_TOKENS, ProseChunker, github_slug

MARKDOWN = """# Payments runbook

Owner: payments on-call.

## Refunds

### Partial refunds

Issue partial refunds from the admin console.

```bash
# not a heading: a comment inside a fenced block
refundctl partial --order 42
```

### Chargebacks

Escalate chargebacks to finance within 24 hours.

## Outages

If the processor is down, switch to the fallback gateway.
"""


def test_markdown_sections_keep_heading_path():
    chunks = ProseChunker(512, 64).chunk(MARKDOWN, "markdown")
    paths = [c.heading_path for c in chunks]
    assert paths == [
        ("Payments runbook",),
        ("Payments runbook", "Refunds", "Partial refunds"),
        ("Payments runbook", "Refunds", "Chargebacks"),
        ("Payments runbook", "Outages"),
    ]
    partial = chunks[1]
    # The heading-only "## Refunds" section travels with its first child.
    assert partial.text.startswith("## Refunds\n\n### Partial refunds")
    assert "# not a heading" in partial.text
    assert partial.anchor == "partial-refunds"
    assert chunks[3].anchor == "outages"


def test_rst_headings_by_adornment():
    text = (
        "Guide\n=====\n\nIntro text here.\n\nInstall\n-------\n\nRun the installer.\n\n"
        "Upgrade\n-------\n\nRun it again.\n"
    )
    chunks = ProseChunker(512, 64).chunk(text, "rst")
    assert [c.heading_path for c in chunks] == [("Guide",), ("Guide", "Install"), ("Guide", "Upgrade")]


def test_long_section_splits_at_paragraphs_with_overlap():
    paragraphs = [f"Paragraph {i} explains one decision about caching layer number {i} in detail." for i in range(60)]
    text = "# Decisions\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = ProseChunker(120, 32).chunk(text, "markdown")
    assert len(chunks) > 3
    lines = text.split("\n")
    for previous, current in zip(chunks, chunks[1:]):
        assert current.start_line <= previous.end_line
        assert current.heading_path == ("Decisions",)
    for c in chunks:
        assert c.token_count <= 120
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert lines[c.start_line - 1].strip(), "pieces start on a non-blank line"


def test_plain_text_without_headings_is_one_section():
    chunks = ProseChunker(512, 64).chunk("just a note\nwith two lines\n", "text")
    assert len(chunks) == 1 and chunks[0].heading_path == ()


def test_github_slug():
    assert github_slug("Scope safety (a correctness property)") == "scope-safety-a-correctness-property"


def _table_doc(rows: int, row_words: int = 20) -> str:
    intro = "\n".join(f"Paragraph {i} explains how the service reads its settings at start." for i in range(30))
    body = "\n".join(
        f"| `SETTING_{i}` | " + " ".join(f"word{i}x{j}" for j in range(row_words)) + " |" for i in range(rows)
    )
    table = f"| name | what it does |\n|---|---|\n{body}"
    return f"# Settings\n\n{intro}\n\n{table}\n\nA closing sentence after the table.\n"


def test_a_big_sections_table_is_cut_into_runs_of_whole_rows():
    text = _table_doc(40)
    lines = text.split("\n")
    chunks = ProseChunker(512, 64).chunk(text, "markdown")
    table = [c for c in chunks if c.text.lstrip().startswith("|")]
    prose = [c for c in chunks if c not in table]
    assert len(table) > 3 and prose
    # Table pieces hold table lines only, each once, in order, with no overlap; prose
    # pieces hold no table line.
    covered = [n for c in table for n in range(c.start_line, c.end_line + 1)]
    assert covered == sorted(set(covered))
    assert [lines[n - 1] for n in covered] == [line for line in lines if line.startswith("|")]
    assert all(not line.startswith("|") for c in prose for line in c.text.split("\n"))
    # The header and delimiter rows stay with the first body row; runs stay under the
    # table bound, and each is whole rows.
    assert table[0].text.split("\n")[:3][0] == "| name | what it does |"
    assert table[0].text.split("\n")[2].startswith("| `SETTING_0`")
    assert all(c.token_count <= TABLE_PIECE_TOKENS for c in table)
    assert all(c.anchor == f"L{c.start_line}-L{c.end_line}" and c.heading_path == ("Settings",) for c in chunks)


def test_a_small_sections_table_stays_in_its_section():
    text = "# Settings\n\nThe two settings:\n\n| name | what |\n|---|---|\n| A | first |\n| B | second |\n"
    chunks = ProseChunker(512, 64).chunk(text, "markdown")
    assert [(c.anchor, c.start_line, c.end_line) for c in chunks] == [("settings", 1, 8)]


def test_a_table_row_over_the_bound_is_split_like_any_long_span():
    text = _table_doc(5, row_words=300)
    chunks = ProseChunker(256, 32).chunk(text, "markdown")
    assert all(c.token_count <= 256 for c in chunks)
    row = [c for c in chunks if "word2x" in c.text]
    assert len(row) > 1  # one row, several pieces, none holding another row
    assert not any("SETTING_1" in c.text or "SETTING_3" in c.text for c in row)


def test_pipes_in_a_fenced_block_are_not_a_table():
    fence = "```\n" + "\n".join(f"| a{i} | b{i} |" for i in range(200)) + "\n```"
    text = f"# Shell\n\n{fence}\n"
    chunks = ProseChunker(256, 32).chunk(text, "markdown")
    assert len(chunks) > 1
    assert "```" in chunks[0].text
    # Overlapping pieces, as for any long section (as a table: 203 lines, no overlap).
    assert sum(c.end_line - c.start_line + 1 for c in chunks) > 215


def test_a_heading_keeps_its_markup_as_written_and_brackets_stay_text():
    """Headings come from the block parse alone: their text as written (markup and
    all), and a run of unclosed `[` or `![` is a paragraph like any other."""
    text = (
        "# The `retry` **policy** of [the client](docs/client.md)\n\nBackoff doubles.\n\n"
        "## Links\n\n" + "![" * 2000 + "\n\n## After\n\nStill a section.\n"
    )
    chunks = ProseChunker(512, 64).chunk(text, "markdown")
    title = "The `retry` **policy** of [the client](docs/client.md)"
    assert chunks[0].heading_path == (title,) and chunks[0].anchor == github_slug(title)
    assert [c.heading_path for c in chunks][-1] == (title, "After")
    assert "![![" in "".join(c.text for c in chunks)
