"""Refresh cost of citation authority (docs/adr/0013) at several corpus sizes, on a
synthetic citation graph written straight into a scratch org (no chunking or embedding:
only the refresh is measured). Each size: N fragments, most org-wide or in one of a few
repos, some in personas and sessions; about `--links` references per fragment, most to
fragments of the same or a broader scope, a few across scopes (they do not count), a
few unresolved. `make bench` runs it in its own database (`--authority-fragments`);
standalone: `python -m app.bench.authority --db-url URL --fragments 2000 20000`."""

from __future__ import annotations

import argparse
import json
import sys
import time

import psycopg
from rich.console import Console
from rich.table import Table

from app.authority import refresh
from app.db.migrate import migrate

console = Console(stderr=True, soft_wrap=True)
ORG = "bench-authority"

_SEED_SQL = """
with params as (select %(n)s::int as n, %(links)s::int as links, %(seed)s::float8 as seed),
docs as (
    insert into data.documents (org_id, repo_id, persona_id, session_id, path, kind)
    select %(org)s, l.repo_id, l.persona_id, l.session_id, 'doc/' || g || '.md', 'doc'
    from params p, generate_series(1, p.n) g,
         lateral (select case when g %% 10 < 5 then null else 'r' || (g %% 4) end as repo_id,
                         case when g %% 50 = 7 then 'p1' end as persona_id,
                         case when g %% 100 = 3 then 's' || (g %% 7) end as session_id) l
    returning doc_id, repo_id, persona_id, session_id, path
), versions as (
    insert into data.document_versions (doc_id, version, content_hash, content)
    select d.doc_id, 1, md5(d.path), d.path from docs d
    returning doc_id
)
insert into data.fragments (org_id, repo_id, persona_id, session_id, doc_id, doc_version, namespace, kind, owner,
                            text, content_hash, token_count, chunker_version, simhash, tsv)
select %(org)s, d.repo_id, d.persona_id, d.session_id, d.doc_id, 1, 'prose', 'doc', 'bench', d.path, md5(d.path), 1,
       'bench', 0, ''::tsvector
from docs d join versions v on v.doc_id = d.doc_id
"""

# Targets skewed toward low numbers (a few fragments cited by many): floor(n * r^3).
_LINK_SQL = """
with ids as (
    select array_agg(f.fragment_id order by f.fragment_id) as a from data.fragments f where f.org_id = %(org)s
),
picks as (
    select c.fragment_id as citing, k, ids.a[1 + floor(cardinality(ids.a) * power(random(), 3))::int] as cited
    from data.fragments c cross join ids cross join generate_series(1, %(links)s) k
    where c.org_id = %(org)s
)
insert into data.fragment_links (org_id, fragment_id, repo_id, persona_id, session_id, doc_id, link_type, target,
                                 target_key, target_fragment_id, target_doc_id, target_repo_id, target_persona_id,
                                 target_session_id, resolved_at)
select c.org_id, c.fragment_id, c.repo_id, c.persona_id, c.session_id, c.doc_id, 'link', t.text, 'path:' || t.text,
       case when p.k %% 20 = 0 then null else t.fragment_id end, t.doc_id, t.repo_id, t.persona_id, t.session_id, now()
from picks p
join data.fragments c on c.org_id = %(org)s and c.fragment_id = p.citing
join data.fragments t on t.org_id = %(org)s and t.fragment_id = p.cited
where t.fragment_id <> c.fragment_id
on conflict do nothing
"""


def seed(conn: psycopg.Connection, n: int, links: int, seed_value: float) -> int:
    """A fresh scratch org with `n` fragments and their links; returns the links."""
    conn.execute("delete from data.orgs where org_id = %s", (ORG,))
    conn.execute("select service.create_org(%s)", (ORG,))
    for repo in range(4):
        conn.execute("select service.ensure_scope(%s, %s, null, null)", (ORG, f"r{repo}"))
    conn.execute("select service.ensure_scope(%s, null, 'p1', null)", (ORG,))
    for session in range(7):
        conn.execute("select service.ensure_scope(%s, null, null, %s)", (ORG, f"s{session}"))
    params = {"org": ORG, "n": n, "links": links, "seed": seed_value}
    conn.execute(_SEED_SQL, params)
    conn.execute("select setseed(%s)", (seed_value,))
    conn.execute(_LINK_SQL, params)
    count = conn.execute("select count(*) from data.fragment_links where org_id = %s", (ORG,)).fetchone()
    conn.commit()
    return int(count[0]) if count else 0


def measure(db_url: str, sizes: list[int], links: int = 4, repeat: int = 3) -> list[dict]:
    """Per size: seed the scratch org (timed), vacuum, refresh `repeat` times (best and
    median kept); the org is removed and authority refreshed again at the end. The view
    is one for all orgs, so each refresh also recomputes any other org's graph in the
    database (`make bench` reports its corpus's refresh alone beside these)."""
    results = []
    with psycopg.connect(db_url) as conn:
        try:
            for n in sizes:
                with console.status(f"seeding a synthetic citation graph of {n} fragments..."):
                    started = time.perf_counter()
                    link_count = seed(conn, n, links, 0.42)
                    with psycopg.connect(db_url, autocommit=True) as vacuum:
                        vacuum.execute("vacuum analyze data.fragments, data.fragment_links, data.documents")
                    seed_s = time.perf_counter() - started
                runs = []
                with console.status(f"refreshing authority at {n} fragments ({repeat}x)..."):
                    for _ in range(repeat):
                        started = time.perf_counter()
                        done = refresh(conn)
                        conn.commit()
                        runs.append(((time.perf_counter() - started) * 1000, done))
                walls = sorted(ms for ms, _ in runs)
                results.append(
                    {
                        "fragments": n,
                        "links": link_count,
                        "scored": runs[-1][1].scored,
                        "seed_seconds": round(seed_s, 1),
                        "refresh_ms_best": round(walls[0], 1),
                        "refresh_ms_median": round(walls[len(walls) // 2], 1),
                        "in_database_ms": round(runs[-1][1].duration_ms, 1),
                    }
                )
        finally:
            conn.rollback()
            conn.execute("delete from data.orgs where org_id = %s", (ORG,))
            conn.execute("select service.refresh_authority()")
            conn.commit()
    return results


def table(results: list[dict]) -> Table:
    out = Table(title="citation authority refresh (REFRESH MATERIALIZED VIEW CONCURRENTLY), synthetic graph")
    columns = {
        "fragments": "fragments",
        "links": "links",
        "scored": "scored",
        "seed_seconds": "seed s",
        "refresh_ms_best": "best ms",
        "refresh_ms_median": "median ms",
    }
    for title in columns.values():
        out.add_column(title, justify="right")
    for r in results:
        out.add_row(*(str(r[k]) for k in columns))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db-url", required=True, help="a scratch database (as the migrator): an org is written")
    parser.add_argument("--fragments", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--links", type=int, default=4, help="references per fragment")
    parser.add_argument("--repeat", type=int, default=3, help="refreshes per size (the best and median are kept)")
    args = parser.parse_args(argv)
    migrate(args.db_url)
    results = measure(args.db_url, args.fragments, args.links, args.repeat)
    Console().print(table(results))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
