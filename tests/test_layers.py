"""The import graph of app/ follows the layer table of docs/architecture.md ("Packages and
layers"): a package imports only itself and packages of lower layers, so no arrow points
up or sideways and no packages import each other in a circle.

Every module's imports are read with `ast`, wherever they stand: at the top, inside
functions (a lazy import is an arrow too) and under `if TYPE_CHECKING:`. No database, no
model, nothing imported: a few hundred milliseconds."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "base",
        frozenset(
            {"app", "settings", "scope", "access", "private", "readable", "owners", "pgtools", "webhook_targets"}
        ),
    ),
    ("below both lanes", frozenset({"db", "text", "wire"})),
    ("lanes", frozenset({"ingest", "retrieve", "authority", "nudges"})),
    ("eval", frozenset({"eval"})),
    ("generations", frozenset({"generations"})),
    ("operations", frozenset({"operations"})),
    ("doors", frozenset({"api", "mcp", "client"})),
    ("the service", frozenset({"serve"})),
    ("command line", frozenset({"cli"})),
    ("benchmarks", frozenset({"bench"})),
)
"""Lowest first. `app` is the root package itself (its __init__: the version); any other
name is a module or a package directly under app/."""
LAYER_OF = {package: index for index, (_, packages) in enumerate(LAYERS) for package in packages}


@dataclass(frozen=True)
class Arrow:
    module: str
    """The importing module, dotted (app.ingest.pipeline)."""
    target: str
    """The module it imports (for `from X import name`: X.name when that is a module, else X)."""
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def app_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(APP.rglob("*.py"))}


def is_module(name: str) -> bool:
    """Whether a dotted name under app is a module or a package of this tree."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path, module: str) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for every import statement of the
    file, relative ones resolved; `import X` takes no names."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            yield source, [alias.name for alias in node.names], node.lineno


def arrows() -> list[Arrow]:
    found = []
    for module, path in app_modules().items():
        for source, names, line in imports(path, module):
            if source != "app" and not source.startswith("app."):
                continue
            submodules = [f"{source}.{name}" for name in names if is_module(f"{source}.{name}")]
            for target in submodules or [source]:
                found.append(Arrow(module, target, line))
    return found


def package_of(module: str) -> str:
    """app -> app; app.settings -> settings; app.ingest.pipeline -> ingest."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "app"


def describe(package: str) -> str:
    index = LAYER_OF[package]
    return f"{package} (layer {index}, {LAYERS[index][0]})"


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for arrow in arrows():
        source, target = package_of(arrow.module), package_of(arrow.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_of_app_is_in_the_layer_table_and_every_name_there_exists():
    packages = {package_of(module) for module in app_modules()}
    assert packages - set(LAYER_OF) == set(), "new packages of app/: give each a layer here and in docs/architecture.md"
    assert set(LAYER_OF) - packages == set(), "the layer table names packages app/ no longer has"
    assert sum(len(p) for _, p in LAYERS) == len(LAYER_OF), "a package stands in two layers"


def test_every_import_points_down_the_layers():
    wrong = []
    for a in arrows():
        source, target = package_of(a.module), package_of(a.target)
        if source not in LAYER_OF or target not in LAYER_OF:
            continue  # the test above names it
        if source != target and LAYER_OF[target] >= LAYER_OF[source]:
            wrong.append(f"{a.module}:{a.line} imports {a.target}: {describe(source)} -> {describe(target)}")
    assert wrong == [], "imports that do not point to a lower layer:\n" + "\n".join(sorted(wrong))


def test_no_circle_between_packages():
    found = circles(package_graph())
    assert found == [], "packages that import each other, directly or around a circle: " + "; ".join(
        " <-> ".join(circle) for circle in found
    )


def test_the_circle_finder_finds_circles():
    """The check above on a graph known to hold two circles (and a chain that is none)."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "f"}, "f": set()}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_nothing_outside_the_benchmarks_imports_them():
    assert [a for a in arrows() if package_of(a.target) == "bench" and package_of(a.module) != "bench"] == []


def documented_layers() -> dict[int, set[str]]:
    """The table of docs/architecture.md's "Packages and layers": its first column the
    layer's number, its second the packages, each in backquotes."""
    text = ARCHITECTURE.read_text()
    assert "\n## Packages and layers\n" in text, "docs/architecture.md has no section Packages and layers"
    section = text.split("\n## Packages and layers\n", 1)[1].split("\n## ", 1)[0]
    table: dict[int, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) > 2 and re.fullmatch(r"\d+", cells[0]):
            table[int(cells[0])] = set(re.findall(r"`([a-z_]+)`", cells[2]))
    return table


def test_the_architecture_page_draws_the_same_layers():
    assert documented_layers() == {index: set(packages) for index, (_, packages) in enumerate(LAYERS)}


def defined_names(path: Path) -> set[str]:
    """The names a module binds at its top level (under `if` and `try` included)."""
    names: set[str] = set()
    body = list(ast.parse(path.read_text(), str(path)).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try)):
            body.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            body.extend(stmt for handler in getattr(node, "handlers", []) for stmt in handler.body)
    return names


def module_path(name: str) -> Path:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"


def test_every_import_of_app_in_app_and_tests_names_what_exists():
    """A module or a name moved without every importer following fails here, lazy
    imports included (they would fail only when their function runs)."""
    missing = []
    for folder in (APP, ROOT / "tests"):
        for path in sorted(folder.rglob("*.py")):
            for source, names, line in imports(path, module_name(path)):
                if source != "app" and not source.startswith("app."):
                    continue
                where = f"{path.relative_to(ROOT)}:{line}"
                if not is_module(source):
                    missing.append(f"{where}: no module {source}")
                    continue
                defined = defined_names(module_path(source))
                missing.extend(
                    f"{where}: {source} has no {name}"
                    for name in names
                    if name != "*" and name not in defined and not is_module(f"{source}.{name}")
                )
    assert missing == []


HTTP_ONLY_CLI = frozenset({"app.cli.serve"})
"""The CLI modules that run the HTTP service itself (`contexts serve`): the only ones
that may import the HTTP door or the application that mounts it."""


def test_mcp_and_the_cli_call_the_operations_never_the_http_door():
    """MCP and the command line reach the service's operations through app.operations,
    wherever their imports stand (lazy ones included): not through app.api (Litestar's
    controllers) nor app.serve (the application that mounts them)."""
    wrong = [
        f"{a.module}:{a.line} imports {a.target}"
        for a in arrows()
        if (a.module == "app.mcp" or (package_of(a.module) == "cli" and a.module not in HTTP_ONLY_CLI))
        and package_of(a.target) in {"api", "serve"}
    ]
    assert wrong == []


def test_the_operations_mcp_and_the_cli_load_no_litestar():
    """In a fresh interpreter: every module of app/operations/ (what the CLI's commands
    import when they run), app.mcp (MCP over stdio) and every module of app/cli/ are
    imported; none of them loads Litestar, the HTTP door's framework (and the operations
    load no MCP SDK either)."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys\n"
        "import app.operations, app.cli\n"
        "names = ['app.operations.' + m.name for m in pkgutil.iter_modules(app.operations.__path__)]\n"
        "for name in names: importlib.import_module(name)\n"
        "assert 'mcp' not in sys.modules, 'the operations load the MCP SDK'\n"
        "names += ['app.mcp'] + ['app.cli.' + m.name for m in pkgutil.iter_modules(app.cli.__path__)"
        " if m.name != '__main__']\n"
        "assert len(names) > 20, names\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "    if 'litestar' in sys.modules:\n"
        "        print(name)\n"
        "        break\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {out.stdout.strip()} loads Litestar"
