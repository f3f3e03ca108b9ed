"""Reference extraction (app/ingest/references.py), per link type and per language."""

from __future__ import annotations

from app.ingest.chunk_code import CodeChunker
from app.ingest.chunk_prose import ProseChunker
from app.ingest.references import (
    Reference,
    adr_number,
    classify_target,
    declared_supersessions,
    document_references,
    import_bindings,
    prose_references,
)


def keys(refs: list[Reference]) -> set[tuple[str, str, str | None]]:
    return {(r.type, r.key, r.name) for r in refs}


def named(per_chunk: list[list[Reference]]) -> set[tuple[str, str | None]]:
    """(key, name) of every reference of a document, whatever its type (an import and a
    use in one fragment are one reference)."""
    return {(r.key, r.name) for chunk in per_chunk for r in chunk}


def code_refs(path: str, syntax: str, text: str) -> list[list[Reference]]:
    chunks = CodeChunker(400, 64).chunk(text, syntax)
    return document_references(path, syntax, text, chunks, {}, is_code=True)


def test_markdown_links_resolve_against_the_document_folder():
    text = (
        "See [pins](../adr/0012-pins.md#decision), ![diagram](img/a.png) and [root](/README.md).\n"
        "[ref]: ./runbook.md\n"
        "[mail](mailto:x@example.com) [top](#intro) [ext](https://example.com/x)\n"
    )
    refs = prose_references(text, "docs/guide/index.md")
    assert keys(refs) == {
        ("link", "path:docs/adr/0012-pins.md", None),
        ("link", "path:docs/guide/img/a.png", None),
        ("link", "path:README.md", None),
        ("link", "path:docs/guide/runbook.md", None),
    }
    assert next(r for r in refs if r.key == "path:docs/adr/0012-pins.md").anchor == "decision"


def test_links_outside_the_repository_name_nothing():
    assert classify_target("../../etc/passwd", "a.md") is None
    assert classify_target("ftp://host/file", "a.md") is None
    assert classify_target("#section", "a.md") is None


def test_restructuredtext_links_directives_and_doc_roles():
    text = (
        "Read `the API <api.rst>`_ and :doc:`tutorial`.\n\n"
        ".. _quickstart: quick/start.rst\n\n"
        ".. include:: ../shared/notice.rst\n"
    )
    assert keys(prose_references(text, "docs/index.rst")) == {
        ("link", "path:docs/api.rst", None),
        ("link", "path:docs/tutorial.rst", None),
        ("link", "path:docs/quick/start.rst", None),
        ("link", "path:shared/notice.rst", None),
    }


def test_repository_urls_name_a_file_of_a_repo():
    text = (
        "Fixed in https://github.com/acme/platform/blob/main/src/app/core.py#L10, "
        "see https://gitlab.com/acme/infra/-/blob/v2/docs/dns.md and https://example.com/page."
    )
    refs = prose_references(text, "notes.md")
    assert {(r.type, r.key, r.repo) for r in refs} == {
        ("url", "path:src/app/core.py", "platform"),
        ("url", "path:docs/dns.md", "infra"),
    }


def test_malformed_urls_name_nothing_and_fail_nothing():
    # urlsplit refuses an unclosed IPv6 bracket; such text stood in a package's docs.
    text = "Bad: http://[::1 and https://[fe80::1%eth0/x, then https://github.com/acme/platform/blob/main/a.py."
    refs = prose_references(text, "notes.md")
    assert {(r.type, r.key) for r in refs} == {("url", "path:a.py")}
    assert classify_target("http://[broken", "notes.md") is None
    assert classify_target("https://[::1/path", "docs/x.md") is None


def test_adr_mentions_and_supersedes():
    text = "This supersedes 0007. Per ADR-12 and ADR 0003, and adr#4; not ADR-13 itself."
    refs = prose_references(text, "docs/adr/0013-citations.md")
    assert {r.key for r in refs} == {"adr:7", "adr:12", "adr:3", "adr:4"}
    # Running text about a supersession cites the ADR; only a declaration supersedes.
    assert {r.type for r in refs} == {"adr"}
    assert adr_number("docs/adr/0013-citations.md") == 13
    assert adr_number("docs/decisions/adr-4-x.md") == 4
    assert adr_number("src/0013_thing.py") is None


def test_metadata_and_front_matter_links_belong_to_the_first_chunk():
    text = "---\nkind: adr\nlinks:\n  - ../runbooks/dns.md\n  - ADR-2\n---\n# Title\n\nBody.\n\n# Next\n\nMore.\n"
    inline = "---\nlinks: [a.md, 'b.md']\n---\n# T\n"
    assert keys(
        document_references("x.md", "markdown", inline, ProseChunker(400, 64).chunk(inline, "markdown"))[0]
    ) == {
        ("metadata", "path:a.md", None),
        ("metadata", "path:b.md", None),
    }
    chunks = ProseChunker(400, 64).chunk(text, "markdown")
    refs = document_references("docs/adr/0005-x.md", "markdown", text, chunks, {"links": ["../policy.md"]})
    assert keys(refs[0]) >= {
        ("metadata", "path:docs/runbooks/dns.md", None),
        ("metadata", "adr:2", None),
        ("metadata", "path:docs/policy.md", None),
    }
    assert all(r.type != "metadata" for chunk in refs[1:] for r in chunk)


def test_python_imports_and_uses_resolve_by_module():
    text = (
        "import os\n"
        "import pkg.util as u\n"
        "from .core import Command, helper as h\n"
        "from ..base import Base\n"
        "\n\n"
        "class Group(Base):\n"
        "    def run(self):\n"
        "        return Command(h(u.parse(os.sep)))\n"
        "\n\n"
        "def local():\n"
        "    return Group()\n"
    )
    bindings = import_bindings(text, "python", "src/pkg/cli.py")
    assert {k: (b.key, b.name) for k, b in bindings.items()} == {
        "os": ("module:os", None),
        "u": ("module:pkg.util", None),
        "Command": ("module:src.pkg.core", "Command"),
        "h": ("module:src.pkg.core", "helper"),
        "Base": ("module:src.base", "Base"),
    }
    per_chunk = code_refs("src/pkg/cli.py", "python", text)
    assert {
        ("module:src.pkg.core", "Command"),
        ("module:src.pkg.core", "helper"),
        ("module:src.base", "Base"),
        ("module:pkg.util", "parse"),
        ("path:src/pkg/cli.py", "Group"),
    } <= named(per_chunk)
    # `local` cites Group, defined by another fragment of the file; Group's fragment
    # does not cite itself.
    local = next(chunk for chunk in per_chunk if ("path:src/pkg/cli.py", "Group") in named([chunk]))
    group = next(chunk for chunk in per_chunk if ("module:src.base", "Base") in named([chunk]))
    assert local is not group and ("path:src/pkg/cli.py", "Group") not in named([group])


def test_javascript_and_typescript_relative_imports():
    text = (
        "import Widget from './widget';\n"
        "import { render, mount as m } from '../dom/index.js';\n"
        "import * as api from './api';\n"
        "import React from 'react';\n"
        "const cfg = require('./config');\n"
        "\n"
        "export function show() {\n"
        "  return render(m(Widget, api.fetchAll()));\n"
        "}\n"
    )
    for syntax, path in (("javascript", "web/src/app.js"), ("typescript", "web/src/app.ts")):
        everything = named(code_refs(path, syntax, text))
        assert {
            ("module:web.dom", "render"),
            ("module:web.dom", "mount"),
            ("module:web.src.api", "fetchAll"),
            ("module:web.src.widget", None),
            ("module:web.src.config", None),
        } <= everything
        assert not any("react" in key for key, _n in everything)


def test_go_imports_and_selector_uses():
    text = (
        'package main\n\nimport (\n\t"fmt"\n\tstore "github.com/acme/app/internal/storage"\n)\n\n'
        'func main() {\n\tfmt.Println(store.Open("x"))\n}\n'
    )
    everything = named(code_refs("cmd/main.go", "go", text))
    assert {("package:storage", "Open"), ("package:fmt", "Println")} <= everything


def test_rust_and_java_imports():
    rust = "use crate::store::{Pool, open};\n\nfn main() {\n    let p = Pool::new(open());\n}\n"
    assert {("module:store", "Pool"), ("module:store", "open")} <= named(code_refs("src/main.rs", "rust", rust))
    java = "import com.acme.store.Pool;\n\nclass App {\n    Pool pool = new Pool();\n}\n"
    assert ("module:com.acme.store.Pool", "Pool") in named(code_refs("src/App.java", "java", java))


def test_supersession_reads_its_direction_and_needs_an_adr_to_take_a_bare_number():
    adr = "docs/adr/0009-kafka.md"

    def said(status: str, path: str = adr) -> set[tuple[str, str]]:
        return {
            (r.type, r.key) for r, _line in declared_supersessions(f"# T\n\n- Status: {status}\n", path, "markdown")
        }

    assert said(
        "accepted. Supersedes ADR-3; replaces ADR 0004, superseded by [ADR-0012](0012-x.md), replaced by ADR-11."
    ) == {
        ("supersedes", "adr:3"),
        ("supersedes", "adr:4"),
        ("superseded_by", "path:docs/adr/0012-x.md"),
        ("superseded_by", "adr:11"),
    }
    # A bare number is an ADR only in an ADR, and only after supersedes / superseded by.
    assert said("superseded by 0012.") == {("superseded_by", "adr:12")}
    assert said("accepted, replaces 3 calls") == set()
    assert said("supersedes 3 scripts", "runbooks/deploy.md") == set()
    assert said("Supersedes ADR-2.", "runbooks/deploy.md") == {("supersedes", "adr:2")}
    assert said("Superseded by ADR-9") == set()  # its own number


def test_metadata_and_front_matter_supersession():
    text = "---\nsupersedes: [ADR-2, ../old/dns.md]\nsuperseded_by: ADR-40\n---\n# Title\n\nBody.\n"
    chunks = ProseChunker(400, 64).chunk(text, "markdown")
    refs = document_references("docs/adr/0005-x.md", "markdown", text, chunks, {"supersedes": "/runbooks/a.md"})
    assert keys(refs[0]) >= {
        ("supersedes", "adr:2", None),
        ("supersedes", "path:docs/old/dns.md", None),
        ("supersedes", "path:runbooks/a.md", None),
        ("superseded_by", "adr:40", None),
    }


def test_runs_that_made_the_patterns_quadratic_still_find_what_follows_them():
    """Blank lines before an import, unclosed brackets before a link: each start of the
    old patterns scanned to the end of the run (30 KB of blank lines before a Rust `use`:
    about 35 s; 100 KB of `[`: 85 s). The references after the run are still found."""
    blank = "\n" * 30_000
    cases = [
        ("src/a.rs", "rust", blank + "use crate::store::Ring;\nfn f(r: Ring) {}\n", ("module:store", "Ring")),
        (
            "src/A.java",
            "java",
            blank + "import com.acme.store.Ring;\nclass A { Ring r; }\n",
            ("module:com.acme.store.Ring", "Ring"),
        ),
        (
            "src/a.ts",
            "typescript",
            blank + "import { Ring } from './store';\nlet r: Ring;\n",
            ("module:src.store", "Ring"),
        ),
        (
            "src/a.go",
            "go",
            "import (\n" * 3_000 + 'import (\n\t"acme/store"\n)\nvar s store.Ring\n',
            ("package:store", "Ring"),
        ),
        (
            "src/a.py",
            "python",
            "from a import (\n" * 3_000 + "from store import (Ring)\nr = Ring()\n",
            ("module:store", "Ring"),
        ),
    ]
    for path, syntax, text, expected in cases:
        assert expected in named(code_refs(path, syntax, text)), path
    prose = "[" * 30_000 + " [the guide](guide.md) " + "[a](" * 10_000 + "\n" + blank + ".. _target: other.rst\n"
    found = keys(prose_references(prose, "docs/index.md"))
    assert ("link", "path:docs/guide.md", None) in found and ("link", "path:docs/other.rst", None) in found
    header = "# Title\n\n" + "[" * 30_000 + "\n\nSuperseded by [ADR 7](0007-x.md)\n"
    [(declared, line)] = declared_supersessions(header, "docs/adr/0003-y.md", "markdown", {})
    assert (declared.type, declared.key, line) == ("superseded_by", "path:docs/adr/0007-x.md", 5)
