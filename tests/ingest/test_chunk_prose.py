"""R-ING-2 on prose: heading hierarchy kept, fenced blocks respected, splits overlap."""

from __future__ import annotations

from app.ingest.chunk_prose import ProseChunker, github_slug

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
