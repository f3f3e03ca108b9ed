"""Supersession comes only from a document's own declarations (docs/adr/0016): its
metadata, its front matter, or a status / supersedes line in its header; never from
code, quotes, tables or running prose about the feature. Each keeps its evidence."""

from __future__ import annotations

import pytest

from app.ingest.chunk_prose import ProseChunker
from app.ingest.references import declared_supersessions, document_references

ADR = "docs/adr/0009-kafka.md"

# (text, syntax, metadata) -> the (type, key) pairs declared, and the evidence of the first.
POSITIVE = {
    "front matter supersedes": (
        "---\nsupersedes: [ADR-2, ../old/dns.md]\n---\n# Kafka\n\nBody.\n",
        "markdown",
        {},
        {("supersedes", "adr:2"), ("supersedes", "path:docs/old/dns.md")},
        "front matter line 2: supersedes: [ADR-2, ../old/dns.md]",
    ),
    "TOML front matter superseded_by": (
        '+++\nsuperseded_by = "ADR-12"\n+++\n# Kafka\n\nBody.\n',
        "markdown",
        {},
        {("superseded_by", "adr:12")},
        'front matter line 2: superseded_by = "ADR-12"',
    ),
    "front matter status": (
        "---\nstatus: Superseded by ADR-0012\n---\n# Kafka\n\nBody.\n",
        "markdown",
        {"status": "Superseded by ADR-0012"},  # as normalize copies it into the metadata
        {("superseded_by", "adr:12")},
        "front matter line 2: status: Superseded by ADR-0012",
    ),
    "status line in the header": (
        "# 9. Kafka\n\n- Status: Superseded by ADR-0007\n- Date: 2026-01-01\n\n## Context\n\nBody.\n",
        "markdown",
        {},
        {("superseded_by", "adr:7")},
        "line 3: - Status: Superseded by ADR-0007",
    ),
    "bold status field": (
        "# 9. Kafka\n\n**Status:** accepted; supersedes [ADR-3](0003-rabbit.md) and ADR-4\n\n## Context\n",
        "markdown",
        {},
        {("supersedes", "path:docs/adr/0003-rabbit.md"), ("supersedes", "adr:4")},
        "line 3: **Status:** accepted; supersedes [ADR-3](0003-rabbit.md) and ADR-4",
    ),
    "a status sentence": (
        "# ADR 9: Kafka\n\nStatus: accepted. Supersedes ADR-3.\n\nEvents go through Kafka.\n",
        "markdown",
        {},
        {("supersedes", "adr:3")},
        "line 3: Status: accepted. Supersedes ADR-3.",
    ),
    "a supersedes line in the header": (
        "# ADR 9\n\nSupersedes ADR-3.\n\nEvents go through Kafka.\n",
        "markdown",
        {},
        {("supersedes", "adr:3")},
        "line 3: Supersedes ADR-3.",
    ),
    "adr-tools Status section": (
        "# 9. Use Kafka\n\nDate: 2020-01-01\n\n## Status\n\nAccepted\n\n"
        "Supersedes [3. Use RabbitMQ](0003-use-rabbitmq.md)\n\n## Context\n\nBody.\n",
        "markdown",
        {},
        {("supersedes", "path:docs/adr/0003-use-rabbitmq.md")},
        "line 9: Supersedes [3. Use RabbitMQ](0003-use-rabbitmq.md)",
    ),
    "metadata supersedes": (
        "# Kafka runbook\n\nRestart a broker.\n",
        "markdown",
        {"supersedes": "/runbooks/broker.md"},
        {("supersedes", "path:runbooks/broker.md")},
        "metadata supersedes: /runbooks/broker.md",
    ),
    "metadata status": (
        "# Kafka\n\nBody.\n",
        "markdown",
        {"status": "Superseded by ADR-12"},
        {("superseded_by", "adr:12")},
        "metadata status: Superseded by ADR-12",
    ),
    "reST field list": (
        "Kafka\n=====\n\n:Status: Superseded by ADR-12\n\nBody\n----\n\nText.\n",
        "rst",
        {},
        {("superseded_by", "adr:12")},
        "line 4: :Status: Superseded by ADR-12",
    ),
}

NEGATIVE = {
    "code span": "# ADR 9\n\n`Supersedes ADR-3`\n\nBody.\n",
    "code span in a status": "# ADR 9\n\nStatus: `superseded by ADR-3`\n\nBody.\n",
    "fenced code": "# ADR 9\n\n```\nSupersedes ADR-3\nStatus: superseded by ADR-4\n```\n\nBody.\n",
    "indented code": "# ADR 9\n\nBody:\n\n    Status: superseded by ADR-4\n",
    "blockquote": "# ADR 9\n\n> Status: Superseded by ADR-3\n> Supersedes ADR-4\n\nBody.\n",
    "table cell": "# ADR 9\n\n| Status | Supersedes ADR-3 |\n|---|---|\n| Superseded by ADR-4 | x |\n",
    "running prose": (
        '# Contexts\n\nWhat it replaces: an ADR\'s "Supersedes ADR-3" or "Superseded by [ADR-0007](...)" (a bare'
        " number counts in an ADR only).\n\nThis ADR supersedes ADR-5 in part.\n"
    ),
    "a clause in the middle of a status": (
        "# 5. Scores\n\n- Status: accepted; its freshness blend (weight 0.2, only when a request sets a half-life)\n"
        "  is superseded by [0014](0014-blend-and-persona-profiles.md)\n- Date: 2026-11-30\n"
    ),
    "a status line far below the header": "# ADR 9\n\n" + "Some line.\n\n" * 30 + "Status: superseded by ADR-3\n",
    "a status line in a later section": "# ADR 9\n\nBody.\n\n## Notes\n\nStatus: superseded by ADR-3\n",
    "HTML": "# ADR 9\n\n<div>\nSupersedes ADR-3\n</div>\n",
    "a bare number outside an ADR": "# Deploy\n\nSupersedes 3 scripts.\n",
}


@pytest.mark.parametrize("name", POSITIVE)
def test_declarations_supersede_with_their_evidence(name):
    text, syntax, metadata, expected, evidence = POSITIVE[name]
    path = ADR if syntax == "markdown" else "docs/adr/0009-kafka.rst"
    declared = declared_supersessions(text, path, syntax, metadata)
    assert {(r.type, r.key) for r, _line in declared} == expected
    assert declared[0][0].evidence == evidence


@pytest.mark.parametrize("name", NEGATIVE)
def test_mentions_declare_nothing(name):
    text = NEGATIVE[name]
    path = "runbooks/deploy.md" if "outside an ADR" in name else ADR
    assert declared_supersessions(text, path, "markdown") == []
    chunks = ProseChunker(400, 64).chunk(text, "markdown")
    refs = document_references(path, "markdown", text, chunks)
    assert not [r for chunk in refs for r in chunk if r.type in ("supersedes", "superseded_by")]


def test_a_declaration_belongs_to_the_fragment_holding_its_line():
    text = "# ADR 9\n\n- Status: superseded by ADR-12\n\n## Context\n\n" + "Words here.\n\n" * 3
    chunks = ProseChunker(20, 4).chunk(text, "markdown")
    refs = document_references(ADR, "markdown", text, chunks)
    holding = next(i for i, c in enumerate(chunks) if c.start_line <= 3 <= c.end_line)
    assert [(r.type, r.key) for r in refs[holding] if r.type == "superseded_by"] == [("superseded_by", "adr:12")]
    assert refs[holding][0].as_json()["evidence"] == "line 3: - Status: superseded by ADR-12"
