"""Build a mixed-repository development set: natural-language questions about a
repository's code and docs together, labelled at fragment level.

    python -m app.eval.mixed_set SRC OUT_DIR [--name NAME] [--max-queries N] ...

SRC is a repository directory, or a BEIR corpus of a repository's files (a directory
holding corpus.jsonl whose ids are paths, as commits-click's). OUT_DIR receives a BEIR
set (corpus.jsonl, queries.jsonl, qrels/dev.tsv) and its README.md. The same input gives
the same bytes.

Method ("a describing sentence is held out and asked"):

- Code questions. Every public function, method or class (no name part starts with
  "_") of a non-test Python file whose docstring opens with a usable sentence: the
  question is that first sentence with reST roles, literals and identifier-like tokens
  removed; it is kept when at least MIN_WORDS words remain and it is not only "Returns
  X". Its answer (grade 2) is the fragment holding the `def`/`class` line; the doc
  sections that reference the symbol (a `:func:`/`:meth:`/`:class:` role, or its name in
  backticks) are grade 1, at most MAX_SEE_ALSO of them, labelled at the line of their
  first reference.
- Doc questions. Every section (reST or Markdown heading) of a prose file whose first
  plain paragraph opens with a usable sentence: the question is that sentence, cleaned
  the same way; the answer (grade 2) is the fragment holding the section's heading; the
  symbols its roles name are grade 1 (at most MAX_SEE_ALSO, at their `def` lines).
- The held-out sentence is removed from the corpus (the rest of the docstring or
  paragraph stays, as in CodeSearchNet-style sets), then every file is canonicalised as
  ingestion does (app.ingest.normalize.canonical_text), and the labels' lines are read
  from that final text.
- A sentence asked twice (two symbols with one docstring) is dropped: it has no single
  answer. Over --max-queries, queries are kept in the order of the SHA-256 of their id.

Labels are corpus ids `PATH#L<line>`: "the fragment of PATH whose line range holds that
line" (app/eval/beir.py), so they survive any chunking that keeps line numbers.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.ingest.chunk_prose import markdown_headings, rst_headings
from app.ingest.normalize import canonical_text
from app.retrieve.kinds import is_test_path

MIN_WORDS = 5
MAX_SEE_ALSO = 3
DEFAULT_MAX_QUERIES = 300
SPLIT = "dev"

_CODE_SUFFIXES = (".py",)
_DOC_SUFFIXES = (".rst", ".md")
_SKIP_DIRS = {"node_modules", "build", "dist", "venv", "__pycache__", "site-packages"}
_NOT_EXPLAINING = re.compile(r"^(changes|changelog|history|license|licence|code_of_conduct|authors)\b", re.I)

# -- sentences -----------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
_ROLE = re.compile(r":[A-Za-z:]+:`[^`]*`(?:\\\S)?")  # with a reST escape after it (":class:`Option`\s")
_LITERAL = re.compile(r"(?:``[^`]*``|`[^`]*`_?)(?:\\\S)?")
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:\*{1,2}\w+|\w+(?:\.\w+)+(?:\(\))?|\w*_\w*|\w+\(\)|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)(?![\w])"
)
_RETURNS_ONLY = re.compile(r"^(returns?|gets?|the)\b", re.I)


def first_sentence_end(text: str, start: int = 0) -> int | None:
    """End offset (exclusive) of the sentence opening at `start`: the first '.', '?' or '!'
    followed by whitespace or the end, or the end of the paragraph (a blank line)."""
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n" and text[i + 1 : i + 2] == "\n":
            return i
        if c == "\n" and re.match(r"\n[ \t]*\n", text[i:]):
            return i
        if c in ".?!" and (i + 1 == n or text[i + 1].isspace()):
            if not any(text[max(start, i + 1 - len(a)) : i + 1].lower() == a for a in _ABBREVIATIONS):
                return i + 1
        i += 1
    return n if n > start else None


def clean_question(sentence: str) -> str | None:
    """The sentence as a question's text: reST roles, literals and identifier-like tokens
    removed, whitespace collapsed; None when fewer than MIN_WORDS words remain or it only
    says what is returned."""
    text = _ROLE.sub(" ", sentence)
    text = _LITERAL.sub(" ", text)
    text = re.sub(r"\b([eiEI])\.([eg])\.", "\\1\x00\\2\x00", text)  # e.g., i.e. are words
    text = _IDENTIFIER.sub(" ", text).replace("\x00", ".")
    text = re.sub(r"\(\s*\)", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:?!)])", r"\1", text)
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"([,;:])(?=[,;:.?!])", "", text)
    text = text.strip(" ,;:-")
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", text)
    if len(words) < MIN_WORDS:
        return None
    if _RETURNS_ONLY.match(text) and len(words) < MIN_WORDS + 3 and text.lower().startswith("return"):
        return None
    return text


# -- the repository's files ----------------------------------------------------------


def is_code(path: str) -> bool:
    """A non-test Python file of a public module (no "_"-named file or folder but a
    package's __init__.py)."""
    parts = PurePosixPath(path).parts
    private = any(p.startswith("_") for p in parts[:-1]) or (parts[-1].startswith("_") and parts[-1] != "__init__.py")
    return path.endswith(_CODE_SUFFIXES) and not is_test_path(path) and parts[-1] not in ("setup.py",) and not private


def is_doc(path: str) -> bool:
    p = PurePosixPath(path)
    return path.endswith(_DOC_SUFFIXES) and not _NOT_EXPLAINING.match(p.name) and not p.parts[0].startswith(".")


def read_source(src: Path) -> list[tuple[str, str]]:
    """(path, text) of every file, sorted by path: the documents of a BEIR corpus, or
    the Python, reST and Markdown files of a repository directory (hidden and build
    folders skipped)."""
    corpus = src / "corpus.jsonl"
    files: list[tuple[str, str]] = []
    if corpus.is_file():
        from app.eval.beir import read_corpus

        files = [(doc.id, doc.text) for doc in read_corpus(corpus)]
    elif src.is_dir():
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src).as_posix()
            parts = PurePosixPath(rel).parts
            if any(p.startswith(".") or p in _SKIP_DIRS for p in parts) or not path.is_file():
                continue
            if not rel.endswith(_CODE_SUFFIXES + _DOC_SUFFIXES):
                continue
            try:
                files.append((rel, path.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, OSError):
                continue
    else:
        raise SystemExit(f"{src}: neither a directory nor a BEIR corpus")
    return sorted(files)


# -- code: public symbols and their docstrings ---------------------------------------


@dataclass(frozen=True, slots=True)
class Symbol:
    path: str
    qualname: str
    line: int
    """The `def`/`class` line (1-based)."""
    sentence: tuple[int, int] | None
    """Character span of the docstring's first sentence in the file's text."""


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for i, c in enumerate(text):
        if c == "\n":
            offsets.append(i + 1)
    return offsets


def _docstring_sentence(text: str, offsets: list[int], node: ast.AST) -> tuple[int, int] | None:
    body = getattr(node, "body", None)
    if not body or not isinstance(body[0], ast.Expr):
        return None
    expr = body[0].value
    if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
        return None
    start = offsets[expr.lineno - 1] + expr.col_offset
    match = re.match(r"[rRuU]?(\"\"\"|'''|\"|')", text[start:])
    if not match:
        return None
    quote = match.group(1)
    begin = start + match.end()
    end_of_string = text.find(quote, begin)
    if end_of_string < 0:
        return None
    inner = text[begin:end_of_string]
    lead = len(inner) - len(inner.lstrip())
    stop = first_sentence_end(inner, lead)
    if stop is None or stop <= lead:
        return None
    return begin + lead, begin + stop


def python_symbols(path: str, text: str) -> list[Symbol]:
    """Public functions, classes and their public methods, in source order."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    offsets = _line_offsets(text)
    out: list[Symbol] = []

    def visit(nodes: Iterable[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if node.name.startswith("_"):
                continue
            qualname = f"{prefix}{node.name}"
            out.append(Symbol(path, qualname, node.lineno, _docstring_sentence(text, offsets, node)))
            if isinstance(node, ast.ClassDef) and not prefix:
                visit(node.body, f"{qualname}.")

    visit(tree.body, "")
    return out


# -- docs: sections and references ---------------------------------------------------


@dataclass(slots=True)
class Section:
    path: str
    key: str
    """Heading titles from the file's top, and the title's ordinal among equal keys."""
    heading_line: int
    start: int
    """Line index (0-based) of the first line after the heading."""
    end: int
    """Line index (0-based, exclusive) where the next heading starts."""
    sentence: tuple[int, int] | None = None
    references: list[tuple[str, int, bool]] = field(default_factory=list)
    """(target text, 1-based line, is a role) in order."""


def _headings(lines: list[str], markdown: bool) -> list[tuple[int, int, str, int]]:
    """(first line index of the heading, line index after it, title, level): the prose
    chunker's own headings, so a section here is a section there."""
    found = markdown_headings("\n".join(lines)) if markdown else rst_headings(lines)
    return [(h.line, h.body, h.title, h.level) for h in found]


def _first_paragraph(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Line range of the section's first plain paragraph: directives (and their indented
    bodies), link targets, blank lines skipped; None when the first block is a list,
    table, code or anything else that is not a sentence."""
    i = start
    while i < end:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith(".. ") or line.strip() == "..":
            i += 1
            while i < end and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                i += 1
            continue
        if line.startswith((" ", "\t", "-", "*", "+", "|", ">", "<", "`", ":", "=", "#", "!", "[")) or re.match(
            r"\d+[.)]\s", line
        ):
            return None
        j = i
        while j < end and lines[j].strip() and not lines[j].startswith((" ", "\t")):
            j += 1
        return i, j
    return None


_REF_ROLE = re.compile(r":(?:py:)?(func|meth|class|attr|exc|obj|data):`([^`<]*?)(?:\s*<([^`>]*)>)?`")
_REF_LITERAL = re.compile(r"``([A-Za-z_][\w.]*)(?:\(\))?``|(?<!`)`([A-Za-z_][\w.]*)(?:\(\))?`(?![`_])")


def doc_sections(path: str, text: str) -> list[Section]:
    lines = text.split("\n")
    markdown = path.endswith(".md")
    heads = _headings(lines, markdown)
    offsets = _line_offsets(text)
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for n, (first, after, title, level) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        base = " > ".join(t for _, t in stack)
        seen[base] = seen.get(base, 0) + 1
        heading_line = (first if markdown else after - 2) + 1  # the title's own line (rst: above its underline)
        section = Section(path, f"{base} #{seen[base]}", heading_line, after, end)
        paragraph = _first_paragraph(lines, after, end)
        if paragraph is not None:
            p_start = offsets[paragraph[0]]
            p_text = "\n".join(lines[paragraph[0] : paragraph[1]])
            stop = first_sentence_end(p_text, 0)
            if stop:
                section.sentence = (p_start, p_start + stop)
        for i in range(after, end):
            for match in _REF_ROLE.finditer(lines[i]):
                target = (match.group(3) or match.group(2)).strip()
                section.references.append((target, i + 1, True))
            for match in _REF_LITERAL.finditer(lines[i]):
                section.references.append((match.group(1) or match.group(2), i + 1, False))
        out.append(section)
    return out


# -- resolving names to symbols ------------------------------------------------------


class SymbolIndex:
    def __init__(self, symbols: Iterable[Symbol]) -> None:
        self.by_qualname: dict[str, list[Symbol]] = {}
        self.by_name: dict[str, list[Symbol]] = {}
        for s in symbols:
            self.by_qualname.setdefault(s.qualname, []).append(s)
            self.by_name.setdefault(s.qualname.rsplit(".", 1)[-1], []).append(s)

    def resolve(self, target: str, role: bool) -> Symbol | None:
        """The one symbol a reference names: the longest dotted suffix of the target that
        is a unique qualified name, else (for a role, or a literal of 4+ characters) a
        unique bare name; None when absent or ambiguous."""
        target = target.strip().lstrip("~!.").removesuffix("()")
        parts = [p for p in target.split(".") if p]
        if not parts:
            return None
        for i in range(len(parts)):
            found = self.by_qualname.get(".".join(parts[i:]))
            if found:
                return found[0] if len(found) == 1 else None
        name = parts[-1]
        found = self.by_name.get(name, [])
        if len(found) == 1 and (role or len(name) >= 4):
            return found[0]
        return None


# -- the set -------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    id: str
    kind: str
    """'code' (a docstring's sentence) or 'doc' (a section's)."""
    path: str
    key: str
    """Qualified name (code) or section key (doc): how the answer is found again in the
    final text."""
    span: tuple[int, int]
    question: str
    names: tuple[tuple[str, str], ...] = ()
    """A doc section's: the (path, qualified name) of each symbol its roles name, read
    before its sentence is held out (that sentence often names the symbol)."""


def candidates(files: list[tuple[str, str]]) -> list[Candidate]:
    out: list[Candidate] = []
    index = SymbolIndex(s for path, text in files if is_code(path) for s in python_symbols(path, text))
    for path, text in files:
        if is_code(path):
            for s in python_symbols(path, text):
                if s.sentence is None:
                    continue
                question = clean_question(text[s.sentence[0] : s.sentence[1]])
                if question:
                    out.append(Candidate(f"code:{path}:{s.qualname}", "code", path, s.qualname, s.sentence, question))
        elif is_doc(path):
            for sec in doc_sections(path, text):
                if sec.sentence is None:
                    continue
                question = clean_question(text[sec.sentence[0] : sec.sentence[1]])
                if question:
                    named: list[tuple[str, str]] = []
                    for target, _, role in sec.references:
                        sym = index.resolve(target, role) if role else None
                        if sym is not None and (sym.path, sym.qualname) not in named:
                            named.append((sym.path, sym.qualname))
                    key = f"doc:{path}:{sec.key}"
                    out.append(Candidate(key, "doc", path, sec.key, sec.sentence, question, tuple(named)))
    unique: dict[str, Candidate] = {}
    for c in out:
        unique.setdefault(c.id, c)  # a redefined name (a property's setter): its first
    out = list(unique.values())
    counts: dict[str, int] = {}
    for c in out:
        counts[c.question.lower()] = counts.get(c.question.lower(), 0) + 1
    return [c for c in out if counts[c.question.lower()] == 1]


def select(found: list[Candidate], max_queries: int) -> list[Candidate]:
    if len(found) <= max_queries:
        return sorted(found, key=lambda c: c.id)
    ordered = sorted(found, key=lambda c: hashlib.sha256(c.id.encode()).hexdigest())
    return sorted(ordered[:max_queries], key=lambda c: c.id)


def hold_out(text: str, spans: list[tuple[int, int]]) -> str:
    """The text without these spans; a line left blank by a removal is dropped (the
    docstring or paragraph closes up), then canonicalised as ingestion does."""
    for start, end in sorted(spans, reverse=True):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        before, after = text[line_start:start], text[end:line_end]
        if not before.strip() and not after.strip():
            text = text[:line_start] + text[line_end + 1 :]
        elif not after.strip():
            text = text[:start].rstrip(" \t") + text[line_end:]
        else:
            text = text[:start] + after.lstrip(" \t") + text[line_end:]
    return canonical_text(text)


@dataclass(slots=True)
class BuiltSet:
    corpus: list[tuple[str, str]]
    queries: list[Candidate]
    qrels: list[tuple[str, str, int]]
    candidates_found: int


def build(files: list[tuple[str, str]], max_queries: int = DEFAULT_MAX_QUERIES) -> BuiltSet:
    files = [(p, canonical_text(t)) for p, t in files]
    found = candidates(files)
    chosen = select(found, max_queries)
    spans: dict[str, list[tuple[int, int]]] = {}
    for c in chosen:
        spans.setdefault(c.path, []).append(c.span)
    final = [(p, hold_out(t, spans[p]) if p in spans else t) for p, t in files]

    symbols: list[Symbol] = []
    sections: dict[tuple[str, str], Section] = {}
    for path, text in final:
        if is_code(path):
            symbols.extend(python_symbols(path, text))
        elif is_doc(path):
            for sec in doc_sections(path, text):
                sections[(path, sec.key)] = sec
    index = SymbolIndex(symbols)
    symbol_at: dict[tuple[str, str], Symbol] = {}
    for s in symbols:
        symbol_at.setdefault((s.path, s.qualname), s)

    # Per symbol: the sections that reference it (role references first, then file order).
    referenced_by: dict[tuple[str, str], list[tuple[bool, str, int]]] = {}
    for (path, _), sec in sorted(sections.items(), key=lambda kv: (kv[0][0], kv[1].heading_line)):
        firsts: dict[tuple[str, str], tuple[bool, int]] = {}
        for target, line, role in sec.references:
            sym = index.resolve(target, role)
            if sym is None:
                continue
            k = (sym.path, sym.qualname)
            if k not in firsts or (role and not firsts[k][0]):
                firsts[k] = (role, line) if k not in firsts else (role, firsts[k][1])
        for k, (role, line) in firsts.items():
            referenced_by.setdefault(k, []).append((not role, path, line))

    qrels: list[tuple[str, str, int]] = []
    for c in chosen:
        labels: dict[str, int] = {}
        if c.kind == "code":
            sym = symbol_at[(c.path, c.key)]
            labels[f"{c.path}#L{sym.line}"] = 2
            for _, path, line in sorted(referenced_by.get((c.path, c.key), []))[:MAX_SEE_ALSO]:
                labels.setdefault(f"{path}#L{line}", 1)
        else:
            sec = sections[(c.path, c.key)]
            labels[f"{c.path}#L{sec.heading_line}"] = 2
            for name in c.names[:MAX_SEE_ALSO]:
                sym = symbol_at[name]
                labels.setdefault(f"{sym.path}#L{sym.line}", 1)
        qrels.extend((c.id, label, grade) for label, grade in labels.items())
    return BuiltSet(final, chosen, qrels, len(found))


# -- writing -------------------------------------------------------------------------


def _sha256(files: list[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for path, text in files:
        digest.update(f"{path}\0{text}\0".encode())
    return digest.hexdigest()


def write(built: BuiltSet, out: Path, name: str, source: str, licence: str, input_digest: str, command: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for path, text in built.corpus:
            fh.write(json.dumps({"_id": path, "title": path, "text": text}, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for c in built.queries:
            row = {"_id": c.id, "text": c.question, "metadata": {"scope": f"{c.kind}-answer"}}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "qrels" / f"{SPLIT}.tsv").open("w", encoding="utf-8", newline="\n") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for query_id, label, grade in built.qrels:
            fh.write(f"{query_id}\t{label}\t{grade}\n")
    (out / "README.md").write_text(readme(built, name, source, licence, input_digest, command), encoding="utf-8")


def readme(built: BuiltSet, name: str, source: str, licence: str, input_digest: str, command: str) -> str:
    code = sum(1 for c in built.queries if c.kind == "code")
    doc = len(built.queries) - code
    grade1 = sum(1 for _, _, g in built.qrels if g == 1)
    code_files = sum(1 for p, _ in built.corpus if is_code(p))
    doc_files = sum(1 for p, _ in built.corpus if is_doc(p))
    method = (__doc__ or "").split("Method", 1)[1].split("\n", 1)[1].strip()
    return f"""# {name}: natural-language questions about a mixed repository, fragment-level labels

Source: {source}. Licence of the corpus text: {licence}.
Built by `python -m app.eval.mixed_set` (app/eval/mixed_set.py) from input digest
`{input_digest[:16]}` (SHA-256 over each input file's path and canonical text, sorted by
path); rebuilding from the same input gives the same bytes.

| | count |
|---|---|
| corpus files | {len(built.corpus)}: {code_files} asked about (public, non-test Python), {doc_files} docs |
| usable held-out sentences found | {built.candidates_found} |
| queries (split `{SPLIT}`) | {len(built.queries)}: {code} answered by code, {doc} by a doc section |
| labels | {len(built.qrels)}: {len(built.queries)} grade 2, {grade1} grade 1 |

Query metadata carries `scope`: `code-answer` or `doc-answer`, so runs break figures
down by the kind of answer.

## Labels

A corpus id `PATH#L<n>` names the fragment of document PATH whose line range holds
line n of the corpus text (app/eval/beir.py; scored per fragment by app/eval/golden.py):
another fragment of the same file is not the answer. Each fragment is one rank
position.

## Method

{method}

## Rebuild, on this or another repository

This set (SRC: the repository directory, or a BEIR corpus of its files):

    {command}

Another repository: the same with its directory, name, source and licence.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.eval.mixed_set", description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="a repository directory, or a BEIR corpus of its files")
    parser.add_argument("out", type=Path, help="where the set is written (BEIR layout and README.md)")
    parser.add_argument("--name", default=None, help="the set's name (default: OUT's folder name)")
    parser.add_argument("--max-queries", type=int, default=DEFAULT_MAX_QUERIES)
    parser.add_argument("--source", default="a repository's files", help="where the corpus comes from (README)")
    parser.add_argument("--licence", default="that of the repository", help="the corpus's licence (README)")
    args = parser.parse_args(argv)
    if args.max_queries < 1:
        parser.error("--max-queries must be at least 1")
    files = read_source(args.src)
    if not files:
        parser.error(f"{args.src}: no file to read")
    built = build(files, args.max_queries)
    if not built.queries:
        parser.error(f"{args.src}: no usable question (no public docstring or doc section sentence)")
    name = args.name or args.out.resolve().name
    digest = _sha256([(p, canonical_text(t)) for p, t in files])
    command = "python -m app.eval.mixed_set " + shlex.join(
        ["SRC", "OUT_DIR", "--name", name, "--max-queries", str(args.max_queries)]
        + ["--source", args.source, "--licence", args.licence]
    )
    write(built, args.out, name, args.source, args.licence, digest, command)
    print(f"{name}: {len(built.corpus)} files, {len(built.queries)} queries, {len(built.qrels)} labels -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
