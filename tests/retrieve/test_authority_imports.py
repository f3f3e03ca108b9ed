"""Citation authority counts what makes a fragment an authority on something (a use
from a body), not imports (docs/adr/0013, 3rd amendment): a types module that every
file imports ranks below a function three others call."""

from __future__ import annotations

TYPES = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    name: str\n    size: int\n"
UTIL = "def normalize(text):\n    return ' '.join(text.lower().split())\n"
CALLER = (
    "from app.types import Config\nfrom app.util import normalize\n\n\n"
    "def {name}(value):\n    cleaned = normalize(value)\n    return cleaned + '{name}'\n"
)
IMPORTER = "from app.types import Config\n\n\ndef {name}(value):\n    return [value, '{name}']\n"


def authority_by_symbol(conn) -> dict[str, float]:
    conn.execute("select service.refresh_authority()")
    rows = conn.execute("""
        select f.symbol, a.authority from data.fragment_authority a
        join data.fragments f on f.fragment_id = a.fragment_id
        where f.symbol is not null
    """).fetchall()
    return dict(rows)


def test_a_called_function_outranks_a_types_module_every_file_imports(conn, ingest):
    files = {"app/types.py": TYPES, "app/util.py": UTIL}
    for name in ("parse", "render", "store"):
        files[f"app/{name}.py"] = CALLER.format(name=name)
    for name in ("load", "dump", "check", "merge", "split", "scan", "walk", "emit"):
        files[f"app/{name}.py"] = IMPORTER.format(name=name)
    ingest("acme", files)
    cited = dict(
        conn.execute("""
        select l.link_type || ' ' || f.symbol, count(*) from data.fragment_links l
        join data.fragments f on f.fragment_id = l.target_fragment_id group by 1
    """).fetchall()
    )
    # Every file imports Config; three import normalize and call it (one fragment per
    # small file: the import and the call are one recorded reference).
    assert cited == {"import Config": 11, "import normalize": 3}
    scores = authority_by_symbol(conn)
    assert scores["normalize"] > scores["Config"]
