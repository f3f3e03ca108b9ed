"""Property-based proof of R-SEC-1/2: random orgs, scopes, principals, grants and fragments
(shared vocabulary, near-identical embeddings across tenants: the worst case). For every
principal, lexical, dense and hybrid search, fragment and trace reads, links on demand
(one hop from every fragment of the world, and each fragment's links), and plain SQL as
an analyst (tables, and the knowledge-health views) return exactly the rows its grants
allow, pins included (api.pins_list, the pins a retrieval returns, and data.pins as an
analyst). Contexts included: each org makes one of an org or repo scope and one of a
narrower scope (repo, persona or session), offers each to the next org (all of it or
one repo) and to its own repo r2, pinned or following the newest version (a persona's
or session's is refused every time), revokes some, and sessions expire; every principal
reads exactly the live members of the versions its scope or a live subscription gives
it and that it may read now, by reference and named in every request scope it may ask
for (a Context outside that scope is refused as such), over service.context_candidates and
as an analyst. Workflow rules included (the publisher and each subscriber make a rule
bringing a published Context; one bringing a persona's or session's is refused): the
rules a principal's retrieval matches, in each repo scope it asks for, bring exactly the
versions it may name there, and never say that a rule whose Context it lost matched. Its
scores (bundle scores too) do not move when data it cannot see is added or removed. Then
a third of the documents are deleted, and every Context read, rule and search serves
none of their fragments. And every trace, read by the principal that made it or by an
auditor of its org, shows exactly what the reader's grants allow now, through
api.get_trace, the redacting view, every usage view built on it, the query vectors and
retrieval from SQL (api.retrieve), and the replay diffs of an eval run (a second
property, on worlds of its own)."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from dataclasses import dataclass, field

import msgspec
import psycopg
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from app.access import act_as
from app.retrieve.candidates import fetch_candidates
from app.retrieve.compose import compose
from app.retrieve.config import PipelineConfig
from app.retrieve.fusion import fusion_spec
from app.retrieve.trace import candidate_entries, record_trace
from app.scope import Scope
from app.wire.retrieve import RetrieveRequest
from tests.conftest import login_url
from tests.security.test_trace_redaction import SCORE_KEYS

VOCAB = [
    "journal",
    "rotate",
    "volume",
    "vault",
    "signing",
    "deploy",
    "freeze",
    "pager",
    "owner",
    "storage",
    "backup",
    "token",
]
REPOS, PERSONAS, SESSIONS = ["r1", "r2"], ["p1"], ["s1", "s2"]
GRANTS = [
    ("org", None),
    ("repo", "r1"),
    ("repo", "r2"),
    ("persona", "p1"),
    ("session", "s1"),
    ("session", "s2"),
    ("audit", None),
]
BASE = [0.9, 0.3, 0.2, 0.1]
DIMS = len(BASE)
TALLY = {
    "examples": 0,
    "view_reads": 0,
    "orgs": 0,
    "principals": 0,
    "fragments": 0,
    "queries": 0,
    "reads": 0,
    "traces": 0,
    "trace_reads": 0,
    "redacted_candidates": 0,
    "redacted_requests": 0,
    "bundle_reads": 0,
    "refused": 0,
    "accepted": 0,
    "left pending": 0,
    "link_reads": 0,
    "deleted": 0,
    "rule_matches": 0,
    "leaks": 0,
}
SCOPE_KEYS = ("repo_id", "persona_id", "session_id")
_names = itertools.count()


@dataclass
class Fragment:
    words: list[str]
    repo: str | None
    persona: str | None
    session: str | None
    noise: list[float]
    id: int | None = None
    text: str = ""
    doc_id: int | None = None


@dataclass
class Org:
    name: str
    fragments: list[Fragment]
    principals: list[set[tuple[str, str | None]]]
    expired: set[str]
    expire_later: set[str] = field(default_factory=set)
    """Sessions that expire after the traces are recorded (before they are read)."""
    revoke_later: set[tuple[str, str | None]] = field(default_factory=set)
    """Grants of principal p0 revoked after the traces are recorded."""
    ids: dict[str, set[int]] = field(default_factory=dict)
    pinned: set[int] = field(default_factory=set)
    """Fragments pinned to their own scope by the writer (every third one written)."""
    links: list[tuple[int, int]] = field(default_factory=list)
    """(citing, cited) fragment numbers: citations, whatever their scopes (the graph's
    leak rule decides which count)."""
    bundles: list[Bundle] = field(default_factory=list)
    """The Contexts this org makes (docs/adr/0018): one it publishes (org or repo r1
    scope), and one of a narrower scope (repo r2, persona p1, session s1 or s2), whose
    publication is refused unless it is a repo's."""
    deleted: set[int] = field(default_factory=set)
    """Fragment numbers whose documents are deleted at the end (the last phase)."""


@dataclass
class Subscription:
    org: str
    repo: str | None
    revoke: bool
    accept: bool = True
    """Whether a writer of the subscriber scope accepts it (ADR 0018, 2026-12-06): until
    then it gives nothing. One its maker may write the subscriber scope of is live at once."""
    id: int | None = None
    """None: refused (a persona or session Context is never subscribed)."""
    accepted: bool = False
    revoked: bool = False


@dataclass
class Bundle:
    """One org's Context in a scope: version 1 holds every fragment of that scope (a
    path glob), version 2 the first half of them (fragment ids). Offered to the next org
    of the world (all of it, or its repo r2) and to the org's own repo r2, pinned to
    version 1 or following the newest; some subscriptions are revoked midway."""

    repo: str | None
    persona: str | None
    session: str | None
    pinned: bool
    revoke: bool
    name: str = "bundle"
    context_id: int = 0
    versions: dict[int, set[int]] = field(default_factory=dict)
    subscriptions: list[Subscription] = field(default_factory=list)
    rules: list[tuple[int, str, str | None]] = field(default_factory=list)
    """Workflow rules bringing it `@latest` (docs/adr/0022): (rule id, org, repo scope),
    one of its publisher (in its own scope) and one of each subscriber (in the subscriber
    scope), made while the subscriptions are live."""

    @property
    def shareable(self) -> bool:
        return self.persona is None and self.session is None

    def holds(self, f: Fragment) -> bool:
        """The membership rule: a fragment of the Context's scope or of one above it."""
        return (
            (f.repo is None or f.repo == self.repo)
            and (f.persona is None or f.persona == self.persona)
            and (f.session is None or f.session == self.session)
        )


@dataclass
class Trace:
    org: str
    maker: int
    query: str
    scope: tuple[str | None, str | None, str | None]
    """(repo_id, persona_id, session_id) of the request."""
    request: dict
    fragment_ids: list[int]
    """Candidates in recorded order."""
    trace_id: str = ""


NARROW = [("r2", None, None), (None, "p1", None), (None, None, "s1"), (None, None, "s2")]
"""The scopes of an org's second Context: a repo's, a persona's, a session's."""


def bundles_of(fragments: list[Fragment], principals: list, links: list) -> list[Bundle]:
    """An org's Contexts, chosen from what was drawn for the org already (no draw of their
    own: the worlds stay those of the property without bundles)."""
    pinned, revoke = len(principals) % 2 == 1, len(links) % 2 == 1
    narrow = NARROW[(len(fragments) + len(links) + len(principals)) % len(NARROW)]
    return [
        Bundle("r1" if len(fragments) % 2 else None, None, None, pinned, revoke, "shared"),
        Bundle(*narrow, not pinned, not revoke, "narrow"),
    ]


def deleted_of(fragments: list[Fragment], links: list) -> set[int]:
    """Fragment numbers whose documents the last phase deletes (a third or so)."""
    return {n for n in range(len(fragments)) if (n + len(links)) % 3 == 1}


fragment = st.builds(
    Fragment,
    words=st.lists(st.sampled_from(VOCAB), min_size=2, max_size=6),
    repo=st.sampled_from([None, *REPOS]),
    persona=st.sampled_from([None, *PERSONAS]),
    session=st.sampled_from([None, None, *SESSIONS]),
    noise=st.lists(st.floats(-0.01, 0.01), min_size=DIMS, max_size=DIMS),
)
org = st.builds(
    lambda fragments, principals, expired, links: Org(
        f"t{next(_names)}",
        fragments,
        principals,
        expired,
        links=links,
        bundles=bundles_of(fragments, principals, links),
        deleted=deleted_of(fragments, links),
    ),
    st.lists(fragment, min_size=1, max_size=8),
    st.lists(st.sets(st.sampled_from(GRANTS), max_size=4), min_size=1, max_size=3),
    st.sets(st.sampled_from(SESSIONS), max_size=1),
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=12),
)


def visible(o: Org, grants: set[tuple[str, str | None]], f: Fragment) -> bool:
    """The rule of sql/policies, restated independently."""
    kinds = {k for k, _ in grants}
    return (
        (f.repo is None or "org" in kinds or ("repo", f.repo) in grants)
        and (f.persona is None or "org" in kinds or ("persona", f.persona) in grants)
        and (f.session is None or (("session", f.session) in grants and f.session not in o.expired))
    )


def readable_scope(o: Org, grants: set[tuple[str, str | None]], key: str, scope_id: str) -> bool:
    """Whether a request naming this repo, persona or session lies within the grants now."""
    kinds = {k for k, _ in grants}
    if key == "session_id":
        return ("session", scope_id) in grants and scope_id not in o.expired
    return "org" in kinds or (key.removesuffix("_id"), scope_id) in grants


def trace_scopes(o: Org, grants: set[tuple[str, str | None]]) -> list[tuple[str | None, str | None, str | None]]:
    """The org, and the narrowest scope the grants allow: a live session, else the
    persona, else a repo, among those the org holds (a request naming a repo or a persona
    the org has never written to is refused before any search)."""
    personas = {f.persona for f in o.fragments}
    repos = {f.repo for f in o.fragments}
    narrower = (
        [(None, None, s) for s in SESSIONS if readable_scope(o, grants, "session_id", s)]
        + [(None, p, None) for p in PERSONAS if p in personas and readable_scope(o, grants, "persona_id", p)]
        + [(r, None, None) for r in REPOS if r in repos and readable_scope(o, grants, "repo_id", r)]
    )
    return [(None, None, None), *narrower[:1]]


def record(
    conn: psycopg.Connection, o: Org, maker: int, query: str, scope: tuple[str | None, str | None, str | None]
) -> Trace:
    """A real retrieval's trace, recorded by the retrieval lane's own writer (app.retrieve.trace)."""
    body = {"query": query, "scope": {"org_id": o.name, **dict(zip(SCOPE_KEYS, scope))}}
    request = msgspec.convert(body, RetrieveRequest)
    config = PipelineConfig()
    candidates = fetch_candidates(
        conn, Scope(o.name, *scope), query, {"prose": BASE}, 1000, 1000, 60, fusion_spec(config, query)
    )
    for c in candidates:
        c.final_score = c.fused_score
    entries = candidate_entries(
        candidates, [c.fragment_id for c in candidates], compose(candidates, request.budget_tokens, 0.0)
    )
    trace = Trace(o.name, maker, query, scope, msgspec.to_builtins(request), [c.fragment_id for c in candidates])
    trace.trace_id = record_trace(
        conn, o.name, query, trace.request, {"fusion": fusion_spec(config, query)}, entries, 1.0, {"prose": BASE}
    )
    TALLY["traces"] += 1
    return trace


def check_trace(o: Org, grants: set[tuple[str, str | None]], trace: Trace, shown: dict) -> None:
    """`shown` (one trace as this reader got it) holds exactly what the reader's grants
    allow now: readable candidates whole, the others reduced to ranks and scores; the
    query and scope ids only when the reader could make the same request itself."""
    fragments = {f.id: f for f in o.fragments}
    candidates = shown["candidates"]
    assert len(candidates) == len(trace.fragment_ids)
    readable = [visible(o, grants, fragments[fragment_id]) for fragment_id in trace.fragment_ids]
    hidden = [k for k, v in zip(SCOPE_KEYS, trace.scope) if v and not readable_scope(o, grants, k, v)]
    # Nothing it may not read: no session named, no identifying field of an unreadable
    # candidate, no query of a request in a scope it holds no grant on.
    dumped = json.dumps(shown)
    named = [s for s in SESSIONS if not readable_scope(o, grants, "session_id", s) and f'"{s}"' in dumped]
    shows = sorted({k for c, ok in zip(candidates, readable) if not ok for k in set(c) - SCORE_KEYS})
    queried = bool(hidden) and (shown["query"] is not None or shown["request"]["query"] is not None)
    TALLY["leaks"] += len(named) + len(shows) + queried
    assert not named and not shows and not queried, (named, shows, queried, dumped)
    TALLY["redacted_candidates"] += readable.count(False)
    # And all it may read, with every withheld field marked as such.
    for fragment_id, c, ok in zip(trace.fragment_ids, candidates, readable):
        if ok:
            assert c.get("fragment_id") == fragment_id and c.get("source") and c.get("redacted") is False, c
        else:
            assert c.get("redacted") is True, c
    if hidden:
        TALLY["redacted_requests"] += 1
        assert shown["request"]["scope"] == {"org_id": o.name} | {
            k: None if k in hidden else v for k, v in zip(SCOPE_KEYS, trace.scope)
        }
        assert sorted(shown.get("redacted", [])) == sorted(
            ["query", "request.query", *(f"request.scope.{k}" for k in hidden)]
        )
        assert shown["request"]["budget_tokens"] == trace.request["budget_tokens"]
    else:
        assert shown["query"] == trace.query and shown["request"] == trace.request
        assert shown.get("redacted") == []


def write(conn: psycopg.Connection, o: Org, fragments: list[Fragment], prefix: str = "f") -> None:
    """Through the real write path (begin_document, add_fragments) as a writer principal."""
    conn.execute("select service.create_org(%s)", (o.name,))
    conn.execute("select service.create_principal(%s, 'writer', 'service')", (o.name,))
    conn.execute("select service.grant_scope(%s, 'writer', 'org', null, true)", (o.name,))
    conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
    for n, f in enumerate(fragments):
        text = " ".join(f.words) + f" ({prefix}{n})" * (n % 2)  # some exact duplicates collapse, others do not
        f.text = text
        digest = hashlib.sha256(text.encode()).hexdigest()
        doc_id, version, _, _ = conn.execute(
            "select * from service.begin_document(%s, %s, %s, %s, %s, 'doc', %s, %s)",
            (o.name, f.repo, f.persona, f.session, f"{prefix}{n}.md", text, digest),
        ).fetchone()
        f.doc_id = doc_id
        chunk = {
            "namespace": "prose",
            "owner": "o",
            "heading_path": [],
            "lexical_heading": "",
            "symbol": None,
            "text": text,
            "content_hash": digest,
            "token_count": len(f.words),
            "chunker_version": "prop",
            "simhash": int(digest[:15], 16),
            "anchor": "",
            "start_line": 1,
            "end_line": 1,
            "embedding": [b + e for b, e in zip(BASE, f.noise)],
            # Citations of other fragments' documents (resolved now, or when the cited one
            # is written), and of a document in a session nobody holds (added later).
            "references": [
                {"type": "link", "target": f"{prefix}{m}.md", "key": f"path:{prefix}{m}.md"}
                for c, m in o.links
                if c == n and m != n and m < len(fragments)
            ]
            + [{"type": "link", "target": "h0.md", "key": "path:h0.md"}],
        }
        f.id = conn.execute(
            "select fragment_id from service.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps([chunk]))
        ).fetchone()[0]
        if n % 3 == 0 and f.id not in o.pinned:  # pinned to its own scope (a duplicate shares it)
            conn.execute(
                "select service.pin_add(%s, %s, %s, %s, %s, 'property')", (o.name, f.repo, f.persona, f.session, f.id)
            )
            o.pinned.add(f.id)
    conn.commit()
    refresh_authority(conn)


def refresh_authority(conn: psycopg.Connection) -> None:
    conn.execute("select service.refresh_authority()")
    conn.commit()


def grant_principals(conn: psycopg.Connection, o: Org, expire: bool = True) -> None:
    for p, grants in enumerate(o.principals):
        conn.execute("select service.create_principal(%s, %s)", (o.name, f"p{p}"))
        for kind, scope_id in grants:
            conn.execute("select service.grant_scope(%s, %s, %s, %s)", (o.name, f"p{p}", kind, scope_id))
    if expire:
        expire_sessions(conn, o)
    conn.commit()


def expire_sessions(conn: psycopg.Connection, o: Org) -> None:
    for s in o.expired:
        conn.execute(
            "update data.sessions set expires_at = now() - interval '1 second' where org_id = %s and session_id = %s",
            (o.name, s),
        )
    conn.commit()


def leak(found: set[int], allowed: set[int]) -> int:
    extra = found - allowed
    TALLY["leaks"] += len(extra)
    return len(extra)


def publish(conn: psycopg.Connection, orgs: list[Org]) -> None:
    """Each org's writer makes its Contexts and their versions, and offers each to the
    next org of the world and to its own repo r2 (api functions, as the writer principal):
    a persona's or a session's Context is refused every time. A rule of the publisher and
    one of each subscriber bring each published Context; a rule bringing a persona's or a
    session's Context is refused."""
    for o in orgs:  # every org has the scopes the bundles and the probes name
        conn.execute("select service.ensure_scope(%s, 'r1', 'p1')", (o.name,))
        conn.execute("select service.ensure_scope(%s, 'r2')", (o.name,))
    for i, o in enumerate(orgs):
        conn.execute("select service.grant_scope(%s, 'writer', 'persona', 'p1', true)", (o.name,))
        for r in REPOS:
            conn.execute("select service.grant_scope(%s, 'writer', 'repo', %s, true)", (o.name, r))
        for b in o.bundles:
            if b.session is not None:  # a principal's grant may have opened it already
                conn.execute("select service.grant_scope(%s, 'writer', 'session', %s, true)", (o.name, b.session))
            conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
            b.context_id = conn.execute(
                "select context_id from service.context_create(%s, %s, %s, %s, %s)",
                (o.name, b.repo, b.persona, b.session, b.name),
            ).fetchone()[0]
            members = sorted({f.id for f in o.fragments if b.holds(f)})
            if members:
                conn.execute("select service.context_add_version(%s, '{}', '{}', '{**}')", (b.context_id,))
                b.versions[1] = set(members)
                if len(members) > 1:
                    half = members[: len(members) // 2]
                    conn.execute("select service.context_add_version(%s, %s)", (b.context_id, half))
                    b.versions[2] = set(half)
            conn.commit()
            if not b.versions:
                continue
            offers = [(orgs[(i + 1) % len(orgs)].name, "r2" if b.pinned else None)] if len(orgs) > 1 else []
            offers.append((o.name, "r2"))
            for k, (org_name, repo) in enumerate(offers):
                sub = Subscription(org_name, repo, b.revoke if k == 0 else b.pinned and not b.revoke)
                sub.accept = org_name == o.name or not (b.pinned and b.revoke)
                conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
                try:
                    with conn.transaction():
                        sub.id, state = conn.execute(
                            "select subscription_id, state from service.context_subscribe(%s, %s, %s, %s)",
                            (b.context_id, org_name, repo, 1 if b.pinned else None),
                        ).fetchone()
                    # Its writer (an org write grant) consents for its own org; never for another.
                    assert state == ("live" if org_name == o.name else "pending"), (b, sub, state)
                    sub.accepted = state == "live"
                except psycopg.errors.InsufficientPrivilege:
                    TALLY["refused"] += 1
                assert (sub.id is not None) == b.shareable, (b, sub)
                b.subscriptions.append(sub)
            conn.commit()
            for sub in b.subscriptions:
                if sub.id is None or sub.accepted:
                    continue
                # The publisher cannot accept for the subscriber.
                conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
                with (
                    pytest.raises(psycopg.errors.InsufficientPrivilege, match="not by its publisher"),
                    conn.transaction(),
                ):
                    conn.execute("select service.context_accept(%s)", (sub.id,))
                if sub.accept:
                    conn.execute("select service.bind_principal(%s, 'writer')", (sub.org,))
                    state = conn.execute("select state from service.context_accept(%s)", (sub.id,)).fetchone()[0]
                    assert state == "live"
                    sub.accepted = True
                    TALLY["accepted"] += 1
                else:
                    TALLY["left pending"] += 1
            conn.commit()
            rule_scopes = [(o.name, b.repo)] + [(x.org, x.repo) for x in b.subscriptions if x.accepted]
            for org_name, repo in rule_scopes if b.shareable else [(o.name, None)]:
                conn.execute("select service.bind_principal(%s, 'writer')", (org_name,))
                try:
                    with conn.transaction():
                        rule_id = conn.execute(
                            "select rule_id from service.rule_create(%s, %s, %s, %s, '{**}')",
                            (org_name, repo, f"bundle {b.context_id} {len(b.rules)}", f"ctx_{b.context_id}@latest"),
                        ).fetchone()[0]
                    b.rules.append((rule_id, org_name, repo))
                except psycopg.errors.InvalidParameterValue:
                    TALLY["refused"] += 1
                    assert not b.shareable
            conn.commit()


def revoke_bundles(conn: psycopg.Connection, orgs: list[Org]) -> None:
    for o in orgs:
        for b in o.bundles:
            for sub in b.subscriptions:
                if sub.revoke and sub.id is not None:
                    conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
                    conn.execute("select service.context_unsubscribe(%s)", (sub.id,))
                    sub.revoked = True
    conn.commit()


Request = tuple[str | None, str | None, str | None]
"""A request's (repo_id, persona_id, session_id)."""


def in_scope(labels: Request, want: Request) -> bool:
    """data._in_scope, restated independently."""
    return (
        (labels[0] is None or want[0] is None or labels[0] == want[0])
        and (labels[1] is None or labels[1] == want[1])
        and (labels[2] is None or labels[2] == want[2])
    )


def publisher_of(orgs: list[Org], b: Bundle) -> Org:
    return next(o for o in orgs if any(x is b for x in o.bundles))


def bundle_versions(
    orgs: list[Org], reader: Org, grants: set[tuple[str, str | None]], b: Bundle, scope: Request | None = None
) -> dict[int, bool]:
    """The versions of bundle `b` a principal of `reader` with `grants` may read (by
    reference: `scope` None), or name in a request in `scope`, each with whether it reads
    it through a subscription only. All of them when its grants cover the Context's scope
    in its own org (and that lies within the request's), and the one each live
    subscription of its org (or of a repo it may read, and the request's) gives it, for a
    Context of an org or repo scope only. The rule, restated independently."""
    kinds = {k for k, _ in grants}
    labels = (b.repo, b.persona, b.session)
    own = (
        publisher_of(orgs, b) is reader
        and (b.repo is None or "org" in kinds or ("repo", b.repo) in grants)
        and (b.persona is None or "org" in kinds or ("persona", b.persona) in grants)
        and (b.session is None or (("session", b.session) in grants and b.session not in reader.expired))
        and (scope is None or in_scope(labels, scope))
    )
    readable = dict.fromkeys(b.versions, False) if own else {}
    for sub in b.subscriptions:
        if (
            b.shareable
            and sub.id is not None
            and sub.accepted
            and not sub.revoked
            and sub.org == reader.name
            and (sub.repo is None or "org" in kinds or ("repo", sub.repo) in grants)
            and (scope is None or sub.repo is None or scope[0] is None or scope[0] == sub.repo)
        ):
            readable.setdefault(1 if b.pinned else max(b.versions), True)
    return readable


def served(
    orgs: list[Org],
    reader: Org,
    grants: set[tuple[str, str | None]],
    b: Bundle,
    version: int,
    shared: bool,
    scope: Request | None,
    live: set[int],
) -> set[int]:
    """The members of a version a reader is served: live ones it may read now, through
    the Context's own scope (the fragments' rule, within the request's scope) or, through
    a subscription, the org and repo material of the Context's own scope."""
    out: set[int] = set()
    for f in publisher_of(orgs, b).fragments:
        if f.id not in b.versions[version] or f.id not in live:
            continue
        if shared:
            ok = f.persona is None and f.session is None and f.repo in (None, b.repo)
        else:
            ok = visible(reader, grants, f) and (scope is None or in_scope((f.repo, f.persona, f.session), scope))
        if ok:
            assert f.id is not None
            out.add(f.id)
    return out


def request_scopes(o: Org, grants: set[tuple[str, str | None]], b: Bundle) -> list[Request]:
    """The requests a principal may make that probe a bundle's scope rule: the org's, the
    bundle's own scope, and another repo's."""
    other_repo = "r2" if b.repo != "r2" else "r1"
    scopes: list[Request] = [(None, None, None), (b.repo, b.persona, b.session), (other_repo, None, None)]
    return [
        sc
        for sc in dict.fromkeys(scopes)
        if all(v is None or readable_scope(o, grants, k, v) for k, v in zip(SCOPE_KEYS, sc))
    ]


def context_read(
    conn: psycopg.Connection, o: Org, ref: str, query: str | None, scope: Request | None
) -> set[int] | str:
    """What service.context_candidates serves this principal for one reference: the member
    ids, or the error ('unknown', 'outside')."""
    try:
        with conn.transaction():
            rows = conn.execute(
                "select fragment_id from service.context_candidates(p_org_id => %s, p_refs => %s, p_query => %s,"
                " p_query_embeddings => %s, p_repo_id => %s, p_persona_id => %s, p_session_id => %s,"
                " p_scoped => %s)",
                (o.name, [ref], query, json.dumps({"prose": BASE}), *(scope or (None, None, None)), scope is not None),
            ).fetchall()
    except psycopg.errors.NoDataFound:
        return "unknown"
    except psycopg.errors.InvalidParameterValue:
        return "outside"
    return {r[0] for r in rows}


def version_named(readable: dict[int, bool], version: str) -> int | None:
    """The version `@<version>` names among those readable (None: none)."""
    if version == "latest":
        return max(readable) if readable else None
    return int(version) if int(version) in readable else None


def check_bundles(
    conn: psycopg.Connection,
    orgs: list[Org],
    o: Org,
    grants: set[tuple[str, str | None]],
    live: set[int],
    scoped: bool = True,
) -> set[int]:
    """As the service: every reference of every bundle of the world, read by reference
    and named in every request scope the principal may ask for, serves exactly the live
    members of a version it may read there that it may read now, or is unknown, or
    outside the request's scope. Returns the members of every version it may read."""
    members: set[int] = set()
    for b in (x for org in orgs for x in org.bundles):
        anywhere = bundle_versions(orgs, o, grants, b)
        for v in anywhere:
            members |= b.versions[v]
        for scope in [None, *(request_scopes(o, grants, b) if scoped else [])]:
            readable = anywhere if scope is None else bundle_versions(orgs, o, grants, b, scope)
            for version in ("1", "latest") if scope is None else ("latest",):
                pick = version_named(readable, version)
                if pick is not None:
                    expected: set[int] | str = served(orgs, o, grants, b, pick, readable[pick], scope, live)
                else:
                    expected = "outside" if version_named(anywhere, version) is not None else "unknown"
                # Scored against a query once per bundle (the same rows come back without one).
                query = "journal vault" if scope is None and version == "latest" else None
                found = context_read(conn, o, f"ctx_{b.context_id}@{version}", query, scope)
                TALLY["bundle_reads"] += 1
                if isinstance(found, set):
                    TALLY["leaks"] += len(found - (expected if isinstance(expected, set) else set()))
                assert found == expected, (b, version, scope, grants)
    return members


def check_rules(
    conn: psycopg.Connection, orgs: list[Org], o: Org, grants: set[tuple[str, str | None]], live: set[int]
) -> None:
    """As the service, for a request `touching` a file in the org and in each repo: the
    rules that match are exactly those of its org in that scope that its grants show and
    whose bundle it may still name there, each bringing the newest version it may read;
    and what they bring is exactly what it may read of those versions now."""
    kinds = {k for k, _ in grants}
    for repo in (None, *REPOS):
        scope: Request = (repo, None, None)
        expected: dict[int, str] = {}
        members: set[int] = set()
        for b in (x for org in orgs for x in org.bundles):
            readable = bundle_versions(orgs, o, grants, b, scope)
            for rule_id, org_name, rule_repo in b.rules:
                shown = rule_repo is None or "org" in kinds or ("repo", rule_repo) in grants
                if org_name == o.name and rule_repo in (None, repo) and shown and readable:
                    expected[rule_id] = f"ctx_{b.context_id}@{max(readable)}"
                    members |= served(orgs, o, grants, b, max(readable), readable[max(readable)], scope, live)
        rows = conn.execute("select rule_id, ref from api.rule_matches(%s, %s, '{src/a.py}')", (o.name, repo))
        matched = dict(rows.fetchall())
        TALLY["rule_matches"] += 1
        TALLY["leaks"] += len(set(matched.items()) - set(expected.items()))
        assert matched == expected, (repo, grants)
        if matched and (repo is None or readable_scope(o, grants, "repo_id", repo)):
            found = {
                r[0]
                for r in conn.execute(
                    "select fragment_id from service.context_candidates(p_org_id => %s, p_refs => %s, p_repo_id => %s)",
                    (o.name, sorted(set(matched.values())), repo),
                )
            }
            assert leak(found, members) == 0 and found == members


def check_links(conn: psycopg.Connection, o: Org, grants: set[tuple[str, str | None]], every_id: set[int]) -> None:
    """Links on demand, as the service: one hop from any fragment of the world brings
    exactly the fragments its visible citations name that this principal may read in the
    requested scope (the org's: no persona or session); a fragment's links (in and out)
    name only fragments it may read."""
    allowed = {f.id for f in o.fragments if visible(o, grants, f)}
    for fragment_id in sorted(every_id):
        expected = {
            o.fragments[m].id
            for c, m in o.links
            if c != m
            and max(c, m) < len(o.fragments)
            and o.fragments[c].id == fragment_id
            and visible(o, grants, o.fragments[c])
            and visible(o, grants, o.fragments[m])
            and o.fragments[m].persona is None
            and o.fragments[m].session is None
            and o.fragments[m].id != fragment_id
        }
        found = {
            r[0] for r in conn.execute("select fragment_id from api.linked_fragments(%s, %s)", (o.name, [fragment_id]))
        }
        TALLY["link_reads"] += 1
        TALLY["leaks"] += len(found - expected)
        assert found == expected, (fragment_id, grants)
        if fragment_id in allowed:
            ends = {r[0] for r in conn.execute("select fragment_id from api.fragment_links(%s)", (fragment_id,))}
            TALLY["link_reads"] += 1
            assert leak(ends - {None}, allowed) == 0


def bundle_refs_of(orgs: list[Org], o: Org, grants: set[tuple[str, str | None]]) -> list[str]:
    return [f"ctx_{b.context_id}@latest" for x in orgs for b in x.bundles if bundle_versions(orgs, o, grants, b)]


def bundle_scores(conn: psycopg.Connection, o: Org, query: str, refs: list[str]) -> dict:
    """The scores of the members of bundles this principal may read (by reference), which
    nothing outside those bundles may move."""
    if not refs:
        return {}
    rows = conn.execute(
        "select fragment_id, lexical_score, dense_similarity, fused_score from service.context_candidates("
        "p_org_id => %s, p_refs => %s, p_query => %s, p_query_embeddings => %s, p_scoped => false)",
        (o.name, refs, query, json.dumps({"prose": BASE})),
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def searches(conn: psycopg.Connection, o: Org, query: str) -> dict:
    vector = json.dumps({"prose": BASE})
    lexical = dict(conn.execute("select fragment_id, score from api.search_lexical(%s, %s, 1000)", (o.name, query)))
    dense = dict(conn.execute("select fragment_id, similarity from api.search_dense(%s, %s, 1000)", (o.name, vector)))
    hybrid_rows = conn.execute(
        "select fragment_id, fused_score, pin_id, authority"
        " from api.retrieve_candidates(%s, %s, %s, null, null, null, 1000, 1000)",
        (o.name, query, vector),
    ).fetchall()
    # Fused score, citation authority, and a final score blending them (authority weighed 0.3).
    hybrid = {r[0]: (r[1], r[3], 0.7 * r[1] + 0.3 * r[3]) for r in hybrid_rows}
    pinned = {r[0]: r[2] for r in hybrid_rows if r[2] is not None}
    TALLY["queries"] += 3
    return {"lexical": lexical, "dense": dense, "hybrid": hybrid, "pinned": pinned}


def check_health_views(sql: psycopg.Connection, o: Org, grants: set[tuple[str, str | None]], allowed: set[int]) -> None:
    """The knowledge-health views, as an analyst: exactly the fragments and documents
    its grants allow (row-level security of the tables they read)."""
    visible_fragments = [(n, f) for n, f in enumerate(o.fragments) if visible(o, grants, f)]
    owned = sql.execute("select coalesce(sum(fragments), 0) from api.fragments_by_owner").fetchone()[0]
    assert owned == len(allowed)
    sources: dict[int, int] = {}
    for _, f in visible_fragments:
        sources[f.id] = sources.get(f.id, 0) + 1
    clusters = dict(sql.execute("select fragment_id, sources from api.near_duplicate_clusters"))
    assert leak(set(clusters), allowed) == 0
    assert clusters == {i: n for i, n in sources.items() if n > 1}
    by_text: dict[str, set[int]] = {}
    for _, f in visible_fragments:
        by_text.setdefault(f.text, set()).add(f.id)
    pairs = {(a, b) for a, b in sql.execute("select fragment_id, near_fragment_id from api.near_duplicate_pairs")}
    assert leak({i for pair in pairs for i in pair}, allowed) == 0
    assert pairs == {(a, b) for ids in by_text.values() for a in ids for b in ids if a < b}
    paths = dict(sql.execute("select path, versions from api.document_version_counts"))
    assert paths == {f"f{n}.md": 1 for n, _ in visible_fragments}
    never = {r[0] for r in sql.execute("select fragment_id from api.fragments_never_retrieved")}
    assert leak(never, allowed) == 0 and never == allowed  # these traces list no candidate
    TALLY["view_reads"] += 5


def hidden_scope(o: Org, grants: set[tuple[str, str | None]], trace: Trace) -> list[str]:
    """The scope ids of the trace's request this reader holds no grant on now."""
    return [k for k, v in zip(SCOPE_KEYS, trace.scope) if v and not readable_scope(o, grants, k, v)]


def no_secrets(o: Org, grants: set[tuple[str, str | None]], rows: object, allowed: set[int], ids: set[int]) -> None:
    """Nothing in `rows` names a session the reader may not read, and no fragment id it
    may not read appears (`ids`: the fragment ids the view returned)."""
    dumped = json.dumps(rows, default=str)
    named = [s for s in SESSIONS if not readable_scope(o, grants, "session_id", s) and f'"{s}"' in dumped]
    TALLY["leaks"] += len(named) + len(ids - allowed)
    assert not named and ids <= allowed, (named, ids - allowed, dumped)


def check_usage_views(
    sql: psycopg.Connection,
    o: Org,
    grants: set[tuple[str, str | None]],
    expected: dict[str, Trace],
    every_trace: list[Trace],
) -> None:
    """Every usage view, the query vectors, retrieval from SQL and the replay diffs, as
    an analyst: built on api.retrieval_traces (or its helpers), they show exactly the
    traces it shows this reader, redacted as it redacts them."""
    fragments = {f.id: f for f in o.fragments}
    allowed = {f.id for f in o.fragments if visible(o, grants, f)}
    summaries = {str(r[0]["trace_id"]): r[0] for r in sql.execute("select to_jsonb(s) from api.retrieval_summaries s")}
    TALLY["leaks"] += len(set(summaries) - set(expected))
    assert set(summaries) == set(expected)
    no_secrets(o, grants, summaries, allowed, set())
    for trace_id, row in summaries.items():
        t = expected[trace_id]
        hidden = hidden_scope(o, grants, t)
        assert row["withheld"] == bool(hidden)
        assert row["query"] == (None if hidden else t.query)
        assert row["candidates"] == len(t.fragment_ids)
        for key, value in zip(SCOPE_KEYS, t.scope):
            assert row[key] == (None if hidden else value)
    days = sql.execute("select coalesce(sum(retrievals), 0) from api.retrievals_per_day").fetchone()[0]
    assert days == len(expected)
    no_secrets(o, grants, sql.execute("select to_jsonb(d) from api.retrievals_per_day d").fetchall(), allowed, set())
    floor = {str(r[0]) for r in sql.execute("select trace_id from api.retrievals_below_floor")}
    assert floor == {i for i, t in expected.items() if not t.fragment_ids}

    candidacies: dict[int, int] = {}
    for t in expected.values():
        for fragment_id in t.fragment_ids:
            if fragment_id in allowed:
                candidacies[fragment_id] = candidacies.get(fragment_id, 0) + 1
    rows = sql.execute("select fragment_id, candidacies, retrievals, source from api.fragment_retrievals").fetchall()
    no_secrets(o, grants, rows, allowed, {r[0] for r in rows})
    assert {r[0]: r[1] for r in rows} == candidacies
    returned = {r[0] for r in rows if r[2] > 0}
    docs = {r[0] for r in sql.execute("select doc_id from api.document_retrievals")}
    readable_docs = {r[0] for r in sql.execute("select doc_id from data.documents")}
    TALLY["leaks"] += len(docs - readable_docs)
    assert docs <= readable_docs
    never = {r[0] for r in sql.execute("select fragment_id from api.fragments_never_retrieved")}
    assert never == allowed - returned

    # Query vectors: those of the traces whose query it may read, and api.retrieve uses
    # them exactly then (else BM25 only), under its own grants.
    readable_queries = {i for i, t in expected.items() if not hidden_scope(o, grants, t)}
    vectors = {str(r[0]) for r in sql.execute("select trace_id from api.query_vectors")}
    TALLY["leaks"] += len(vectors - readable_queries)
    assert vectors == readable_queries
    for query in sorted({t.query for t in every_trace if t.org == o.name}):
        rows = sql.execute(
            "select fragment_id, dense_rank, fused_score from api.retrieve(%s, %s, p_k_lexical => 1000, "
            "p_k_dense => 1000)",
            (o.name, query),
        ).fetchall()
        has_vector = any(expected[i].query == query for i in readable_queries)
        reference = sql.execute(
            "select fragment_id, dense_rank, fused_score from api.retrieve_candidates(%s, %s, %s, null, null, null, "
            "1000, %s, 60, %s::jsonb)",
            (
                o.name,
                query,
                json.dumps({"prose": BASE}),
                1000 if has_vector else 0,
                json.dumps(fusion_spec(PipelineConfig(), query)),
            ),
        ).fetchall()
        assert rows == reference, (query, has_vector)
        assert leak({r[0] for r in rows}, allowed) == 0
        TALLY["queries"] += 1

    # Replay diffs: one replayed query per trace (recorded for its maker), shown like it.
    diffs = {
        str(r[0]["trace_id"]): r[0]
        for r in sql.execute("select to_jsonb(d) from api.eval_replay_diffs d where d.org_id = %s", (o.name,))
    }
    TALLY["leaks"] += len(set(diffs) - set(expected))
    assert set(diffs) == set(expected)
    for trace_id, diff in diffs.items():
        t = expected[trace_id]
        hidden = hidden_scope(o, grants, t)
        assert diff["query"] == (None if hidden else t.query)
        assert diff["redacted"] == (
            [] if not hidden else ["query", "request.query", *(f"request.scope.{k}" for k in hidden)]
        )
        for c, fragment_id in zip(diff["current"], t.fragment_ids[:3]):
            readable = fragment_id in allowed
            assert c["redacted"] is (not readable)
            assert c.get("fragment_id") == (fragment_id if readable else None)
            if not readable:
                TALLY["redacted_candidates"] += 1
                assert set(c) == {"final_score", "redacted"}
                assert fragments[fragment_id].text not in json.dumps(diff)
    no_secrets(
        o,
        grants,
        diffs,
        allowed,
        {c["fragment_id"] for d in diffs.values() for c in d["current"] + d["candidate"] if "fragment_id" in c},
    )
    TALLY["view_reads"] += 9


def record_replays(conn: psycopg.Connection, traces: list[Trace], texts: dict[int, str]) -> None:
    """An eval replay run (app.eval.history, as `contexts eval replay` stores one): each
    trace replayed for its maker, its top three under both pipelines."""
    from datetime import UTC, datetime

    from app.eval import history

    def listed(ids: list[int]) -> list[dict]:
        return [{"fragment_id": i, "source": f"f{i}.md", "final_score": 0.5, "preview": texts[i]} for i in ids[:3]]

    rows = [
        {
            "org_id": t.org,
            "principal_id": f"p{t.maker}",
            "origin": f"trace {t.trace_id}",
            "trace_id": t.trace_id,
            "query": t.query,
            "request": t.request,
            "overlap": 1.0,
            "flagged": False,
            "same_order": True,
            "current": listed(t.fragment_ids),
            "candidate": listed(t.fragment_ids[::-1]),
        }
        for t in traces
    ]
    history.record(conn, "replay", {"config": {}}, {}, datetime.now(UTC), replays=rows)


@pytest.fixture
def world_db(db_url, logins):
    with psycopg.connect(db_url) as conn:
        conn.execute("select service.register_embedding_model('prose', 'property-test', %s)", (DIMS,))
        conn.commit()
        yield conn


WORLD_SEEDS = (1, 2, 3)
"""The property's random worlds come from independent runs, one per seed, each on a
database of its own: 11 worlds a run, 33 in all (the first world of each run is the
simplest one, the same in all three), drawn the same way on every machine. Separate
tests, so that the suite's workers share them out."""


@pytest.mark.parametrize("world_seed", WORLD_SEEDS)
def test_no_principal_ever_sees_another_scope(world_db, db_url, logins, world_seed):
    @seed(world_seed)
    @settings(
        max_examples=11,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        orgs=st.lists(org, min_size=1, max_size=3),
        queries=st.lists(
            st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=2
        ),
    )
    def worlds(orgs: list[Org], queries: list[str]) -> None:
        no_principal_sees_another_scope(world_db, db_url, logins, orgs, queries)

    worlds()


def no_principal_sees_another_scope(world_db, db_url, logins, orgs: list[Org], queries: list[str]) -> None:
    conn = world_db
    conn.rollback()  # a failed example leaves nothing half-open for the next
    TALLY["examples"] += 1
    for o in orgs:
        write(conn, o, o.fragments)
        grant_principals(conn, o, expire=False)
        TALLY["orgs"] += 1
        TALLY["fragments"] += len({f.id for f in o.fragments})
    publish(conn, orgs)
    every_id = {f.id for o in orgs for f in o.fragments}
    live = set(every_id)
    analyst_login = logins["analysts"][0]
    snapshots: dict[tuple[str, int, str], dict] = {}
    traces: dict[tuple[str, int], str] = {}
    bundle_refs: dict[tuple[str, int], list[str]] = {}
    expired = {o.name: o.expired for o in orgs}
    for o in orgs:  # before any revocation, and before sessions expire
        o.expired = set()
    for o in orgs:
        for p, grants in enumerate(o.principals):
            act_as(conn, o.name, f"p{p}")
            check_bundles(conn, orgs, o, grants, live, scoped=False)
            conn.rollback()
    revoke_bundles(conn, orgs)
    for o in orgs:
        o.expired = expired[o.name]
        expire_sessions(conn, o)
    conn.commit()

    for o in orgs:
        for p, grants in enumerate(o.principals):
            TALLY["principals"] += 1
            allowed = {f.id for f in o.fragments if visible(o, grants, f)}
            # As the service: every search, and every fragment id in the world.
            act_as(conn, o.name, f"p{p}")
            bundled = check_bundles(conn, orgs, o, grants, live)
            refs = bundle_refs_of(orgs, o, grants)
            bundle_refs[(o.name, p)] = refs
            check_rules(conn, orgs, o, grants, live)
            check_links(conn, o, grants, every_id)
            for query in queries:
                result = searches(conn, o, query) | {"bundles": bundle_scores(conn, o, query, refs)}
                snapshots[(o.name, p, query)] = result
                for stage, rows in result.items():
                    assert leak(set(rows), bundled if stage == "bundles" else allowed) == 0, (stage, query, grants)
                # And complete: every fragment it may read in the requested scope (the org,
                # no persona or session asked) is found, by dense search too.
                in_scope = {
                    f.id for f in o.fragments if visible(o, grants, f) and f.persona is None and f.session is None
                }
                assert set(result["dense"]) == in_scope
                assert set(result["hybrid"]) == set(result["lexical"]) | set(result["dense"])
                # Pins: exactly those of the fragments it may read in that scope.
                assert set(result["pinned"]) == in_scope & o.pinned
            listed = {r[0] for r in conn.execute("select fragment_id from api.pins_list(%s)", (o.name,))}
            assert leak(listed, allowed) == 0
            assert listed == {
                f.id for f in o.fragments if f.id in o.pinned and visible(o, grants, f) and not (f.persona or f.session)
            }
            for fragment_id in every_id:
                try:
                    with conn.transaction():  # a savepoint: a 404 does not end the transaction
                        conn.execute("select * from api.get_fragment(%s)", (fragment_id,)).fetchone()
                    readable = True
                except psycopg.errors.NoDataFound:
                    readable = False
                TALLY["reads"] += 1
                TALLY["leaks"] += readable and fragment_id not in allowed
                assert readable == (fragment_id in allowed)
            for kind, session in grants:
                if kind == "session" and session not in o.expired:
                    vector = json.dumps({"prose": BASE})
                    rows = {
                        r[0]
                        for r in conn.execute(
                            "select fragment_id from api.search_dense(%s, %s, 1000, null, null, %s)",
                            (o.name, vector, session),
                        )
                    }
                    TALLY["queries"] += 1
                    assert leak(rows, allowed) == 0
                    assert rows == {
                        f.id
                        for f in o.fragments
                        if visible(o, grants, f) and f.persona is None and f.session in (None, session)
                    }
            traces[(o.name, p)] = conn.execute(
                "select service.record_trace(%s, 'q', '{}', '{}', '[]')", (o.name,)
            ).fetchone()[0]
            conn.commit()
            # As an analyst mapped to this principal: plain SQL sees exactly the same rows.
            conn.execute("update data.principals set db_role = null where db_role = %s", (analyst_login,))
            conn.execute(
                "update data.principals set db_role = %s where org_id = %s and principal_id = %s",
                (analyst_login, o.name, f"p{p}"),
            )
            conn.commit()
            with psycopg.connect(login_url(db_url, analyst_login)) as sql:
                rows = {r[0] for r in sql.execute("select fragment_id from data.fragments")}
                assert leak(rows, allowed) == 0 and rows == allowed
                pins = {r[0] for r in sql.execute("select fragment_id from data.pins")}
                assert leak(pins, allowed) == 0 and pins == allowed & o.pinned
                bundled_rows = {r[0] for r in sql.execute("select fragment_id from data.context_members")}
                assert leak(bundled_rows, bundled) == 0 and bundled_rows == bundled
                kinds = {k for k, _ in grants}
                rule_rows = {r[0] for r in sql.execute("select rule_id from data.context_rules")}
                assert rule_rows == {
                    rule_id
                    for x in orgs
                    for b in x.bundles
                    for rule_id, org_name, rule_repo in b.rules
                    if org_name == o.name and (rule_repo is None or "org" in kinds or ("repo", rule_repo) in grants)
                }
                for table in ("embeddings", "fragment_sources", "fragment_links"):
                    assert leak({r[0] for r in sql.execute(f"select fragment_id from data.{table}")}, allowed) == 0
                packed = "select p.fragment_id from data.bm25_blocks b, extensions.bm25_postings(b.postings) p"
                assert leak({r[0] for r in sql.execute(packed)}, allowed) == 0
                cited = {r[0] for r in sql.execute("select target_fragment_id from data.fragment_links")} - {None}
                assert leak(cited, allowed) == 0
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    sql.execute("select * from data.fragment_authority")
                sql.rollback()
                n = sql.execute("select coalesce(sum(fragment_count), 0) from data.bm25_corpus").fetchone()[0]
                assert n == len(allowed)  # statistics count what it may see, nothing else
                TALLY["queries"] += 5
                check_health_views(sql, o, grants, allowed)

    # Traces: the principal that made one, and auditors of its org, read it; nobody else.
    for (org_name, maker), trace_id in traces.items():
        for o in orgs:
            for p, grants in enumerate(o.principals):
                act_as(conn, o.name, f"p{p}")
                try:
                    with conn.transaction():
                        conn.execute("select api.get_trace(%s)", (trace_id,))
                    readable = True
                except psycopg.errors.NoDataFound:
                    readable = False
                expected = o.name == org_name and (p == maker or ("audit", None) in grants)
                TALLY["reads"] += 1
                TALLY["leaks"] += readable and not expected
                assert readable == expected
                conn.rollback()

    # Scores do not move when data the principal cannot see comes and goes: another
    # tenant with the same vocabulary and vectors, and a session nobody holds.
    noise = Org(
        f"t{next(_names)}",
        [Fragment(q.split() + ["journal"], None, None, None, [0.0] * DIMS) for q in queries * 3],
        [],
        set(),
    )
    write(conn, noise, noise.fragments, prefix="n")
    hidden = orgs[0]
    conn.execute("select service.bind_principal(%s, 'writer')", (hidden.name,))
    conn.execute("select service.open_session('hidden')")
    conn.commit()
    conn.execute("select service.bind_principal(%s, 'writer')", (hidden.name,))
    for n, q in enumerate(queries):
        text = f"{q} journal hidden {n}"
        digest = hashlib.sha256(text.encode()).hexdigest()
        doc_id, version, _, _ = conn.execute(
            "select * from service.begin_document(%s, null, null, 'hidden', %s, 'doc', %s, %s)",
            (hidden.name, f"h{n}.md", text, digest),
        ).fetchone()
        chunk = {
            "namespace": "prose",
            "owner": "o",
            "heading_path": [],
            "lexical_heading": "",
            "symbol": None,
            "text": text,
            "content_hash": digest,
            "token_count": 3,
            "chunker_version": "prop",
            "simhash": int(digest[:15], 16),
            "anchor": "",
            "start_line": 1,
            "end_line": 1,
            "embedding": BASE,
            # Hidden citations of every fragment of the org, and claims to supersede
            # them (both may count only inside the hidden session, whose readers hold
            # none of the principals' grants: no window may close for them).
            "references": [
                {"type": kind, "target": f"f{m}.md", "key": f"path:f{m}.md"}
                for m in range(len(hidden.fragments))
                for kind in ("link", "supersedes")
            ],
        }
        conn.execute("select * from service.add_fragments(%s, %s, %s)", (doc_id, version, json.dumps([chunk])))
    conn.commit()
    refresh_authority(conn)

    def unchanged() -> None:
        for (org_name, p, query), before in snapshots.items():
            act_as(conn, org_name, f"p{p}")
            o = next(o for o in orgs if o.name == org_name)
            refs = bundle_refs[(org_name, p)]
            assert searches(conn, o, query) | {"bundles": bundle_scores(conn, o, query, refs)} == before
            conn.rollback()

    unchanged()
    conn.execute("delete from data.orgs where org_id = %s", (noise.name,))
    conn.execute("delete from data.documents where org_id = %s and session_id = 'hidden'", (hidden.name,))
    conn.commit()
    refresh_authority(conn)
    unchanged()

    # Deleted documents leave every door: Contexts read by reference and named in every
    # request scope, the rules that bring them, and the searches (a fragment another live
    # document still holds stays). Documents in an expired session stay: nobody may
    # write there any more.
    gone: dict[str, set[int]] = {}
    for o in orgs:
        conn.execute("select service.bind_principal(%s, 'writer')", (o.name,))
        gone[o.name] = {n for n in o.deleted if o.fragments[n].session not in o.expired}
        for n in sorted(gone[o.name]):
            conn.execute("select * from service.delete_document(%s)", (o.fragments[n].doc_id,))
        conn.commit()
    live = {f.id for o in orgs for n, f in enumerate(o.fragments) if n not in gone[o.name]}
    TALLY["deleted"] += len(every_id - live)
    for o in orgs:
        for p, grants in enumerate(o.principals):
            act_as(conn, o.name, f"p{p}")
            check_bundles(conn, orgs, o, grants, live)
            check_rules(conn, orgs, o, grants, live)
            dense = {
                r[0]
                for r in conn.execute(
                    "select fragment_id from api.search_dense(%s, %s, 1000)", (o.name, json.dumps({"prose": BASE}))
                )
            }
            in_scope = {f.id for f in o.fragments if visible(o, grants, f) and f.persona is None and f.session is None}
            assert leak(dense, in_scope & live) == 0 and dense == in_scope & live
            conn.rollback()
    print("\nno-leak proof so far:", json.dumps(TALLY))  # with -s: the counts for the record
    assert TALLY["leaks"] == 0


traced_org = st.builds(
    lambda o, auditor, expire_later, revoke_later: dataclasses.replace(
        o, principals=[*o.principals, auditor | {("audit", None)}], expire_later=expire_later, revoke_later=revoke_later
    ),
    org,
    st.sets(st.sampled_from(GRANTS), max_size=2),
    st.sets(st.sampled_from(SESSIONS), max_size=1),
    st.sets(st.sampled_from(GRANTS), max_size=1),
)
"""An org whose last principal is an auditor (with a few read grants of its own); some
sessions expire, and p0 loses a grant, once the traces are recorded."""


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    orgs=st.lists(traced_org, min_size=1, max_size=3),
    query=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join),
)
def test_every_trace_shows_each_reader_exactly_what_its_grants_allow(world_db, db_url, logins, orgs, query):
    """Real traces (the retrieval lane's writer; org, session, persona and repo scopes),
    read after some grants are revoked and sessions expire, by every principal: the one
    that made a trace and the auditors of its org read it (nobody else), each exactly as
    its grants allow now, over api.get_trace as the service and over api.retrieval_traces
    as an analyst, who may not select data.retrieval_traces at all."""
    conn = world_db
    conn.rollback()
    for o in orgs:
        write(conn, o, o.fragments)
        grant_principals(conn, o)
    traces: list[Trace] = []
    for o in orgs:
        for p, grants in enumerate(o.principals):
            act_as(conn, o.name, f"p{p}")
            traces += [record(conn, o, p, query, scope) for scope in trace_scopes(o, grants)]
            conn.commit()
    for o in orgs:
        for kind, scope_id in o.revoke_later:
            conn.execute("select service.revoke_scope(%s, 'p0', %s, %s)", (o.name, kind, scope_id))
        o.principals[0] = o.principals[0] - o.revoke_later
        for session in o.expire_later:
            conn.execute(
                "update data.sessions set expires_at = now() - interval '1 second' "
                "where org_id = %s and session_id = %s",
                (o.name, session),
            )
        o.expired = o.expired | o.expire_later
    conn.commit()

    record_replays(conn, traces, {f.id: f.text for o in orgs for f in o.fragments})

    analyst_login = logins["analysts"][0]
    for o in orgs:
        for p, grants in enumerate(o.principals):
            expected = {
                t.trace_id: t for t in traces if t.org == o.name and (t.maker == p or ("audit", None) in grants)
            }
            act_as(conn, o.name, f"p{p}")
            for t in traces:
                try:
                    with conn.transaction():
                        shown = conn.execute("select api.get_trace(%s::uuid)", (t.trace_id,)).fetchone()[0]
                except psycopg.errors.NoDataFound:
                    shown = None
                TALLY["trace_reads"] += 1
                TALLY["leaks"] += shown is not None and t.trace_id not in expected
                assert (shown is not None) == (t.trace_id in expected)
                if shown is not None:
                    check_trace(o, grants, t, shown)
            conn.rollback()
            conn.execute("update data.principals set db_role = null where db_role = %s", (analyst_login,))
            conn.execute(
                "update data.principals set db_role = %s where org_id = %s and principal_id = %s",
                (analyst_login, o.name, f"p{p}"),
            )
            conn.commit()
            with psycopg.connect(login_url(db_url, analyst_login)) as sql:
                rows = {r[0]["trace_id"]: r[0] for r in sql.execute("select to_jsonb(t) from api.retrieval_traces t")}
                TALLY["leaks"] += len(set(rows) - set(expected))
                assert set(rows) == set(expected)
                for trace_id, shown in rows.items():
                    check_trace(o, grants, expected[trace_id], shown)
                check_usage_views(sql, o, grants, expected, traces)
                for table in ("data.retrieval_traces", "data.eval_replays", "data.usage_pending_traces"):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        sql.execute(f"select query, request from {table}")
                    sql.rollback()
    print("\ntrace redaction proof so far:", json.dumps(TALLY))  # with -s: the counts for the record
    assert TALLY["leaks"] == 0
