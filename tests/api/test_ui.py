"""The trace page (GET /ui): its files load without a key and carry a strict CSP; in a
real browser (Playwright driving the system's Chromium) a wrong key is refused in
words, a search shows its fragments and the trace that explains them, links lead to
the fragment and its sources, and hostile fragment text and paths stay text.

The browser tests run against the service as `contexts serve` runs it (uvicorn on a
free port). CONTEXTS_SKIP_BROWSER=1 skips them where no Chromium can be installed;
otherwise a missing browser is a failure, not a skip."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.api.ui import CONTENT_SECURITY_POLICY, UI_DIR
from tests.mcp.test_mcp import STORAGE_QUERY, Tenants, keys_of_tenants, served  # noqa: F401  (fixtures)
from tests.retrieve.corpus import DOCS

CHROMIUM = os.environ.get("CONTEXTS_CHROMIUM", "/usr/bin/chromium")
SKIP_BROWSER = os.environ.get("CONTEXTS_SKIP_BROWSER") == "1"
browser_test = pytest.mark.skipif(
    SKIP_BROWSER, reason="CONTEXTS_SKIP_BROWSER=1: no Chromium on this machine, browser tests not run"
)

HOSTILE_PATH = "notes/<img src=x onerror=window.__pwned=1>.md"
HOSTILE_TEXT = (
    "# Hostile <img src=x onerror=window.__pwned=2>\n\n"
    "When the storage volume is full, <script>window.__pwned=3</script> "
    '<b onmouseover="window.__pwned=4">rotate the journal</b> and page the owner.\n'
)


@pytest.fixture
def tenants(db_url, ingest) -> Tenants:
    """As tests/mcp/test_mcp.py's (which `served` starts the service for), plus a note
    whose path and text are HTML that would run script if parsed as markup."""
    ingest("acme", DOCS | {HOSTILE_PATH: HOSTILE_TEXT}, author="Ada", owner="Ada")
    return keys_of_tenants(db_url)


@pytest.fixture
def base_url(served: str) -> str:  # noqa: F811
    return served.removesuffix("/mcp")


# --- the files --------------------------------------------------------------------------


def test_the_page_loads_without_a_key_with_a_strict_policy(client):
    client.headers.pop("Authorization")
    for path in ("/ui", "/ui/traces/00000000-0000-0000-0000-000000000000", "/ui/fragments/1"):
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe" not in CONTENT_SECURITY_POLICY
    script = client.get("/ui/assets/ui.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert client.get("/ui/assets/ui.css").headers["content-type"].startswith("text/css")
    assert client.get("/ui/assets/index.html").status_code == 404
    assert client.get("/ui/assets/..%2Fapi%2Fui.py").status_code == 404
    # The data stays behind the key.
    assert client.get("/traces/00000000-0000-0000-0000-000000000000").status_code == 401
    # The page is not part of the API's contract.
    assert not any(p.startswith("/ui") for p in client.get("/schema/openapi.json").json()["paths"])


def test_the_glossary_says_every_feature_of_the_reranker_in_words(client):
    """GET /ui/glossary.json, without a key as the page: one meaning per feature the
    reranker reads, in its column order, and the page's security headers."""
    from app.retrieve.features import FEATURES
    from app.retrieve.learned import MODEL_PATH, load

    client.headers.pop("Authorization")
    got = client.get("/ui/glossary.json")
    assert got.status_code == 200 and got.headers["content-type"].startswith("application/json")
    assert got.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    meanings = got.json()["features"]
    assert list(meanings) == list(FEATURES) and all(len(m) > 10 for m in meanings.values())
    # The glossary lists only the features a trace names: no meaning leans on another's.
    assert not [name for name, m in meanings.items() if m.startswith(("the same", "likewise"))]
    assert set(load(MODEL_PATH).columns) <= set(meanings)
    assert client.head("/ui/glossary.json").status_code == 200


def test_the_page_answers_head_a_favicon_and_names_its_charset_once(client):
    """What browsers and checkers ask beside GET: HEAD of the page, /favicon.ico, and a
    Content-Type with one charset (a repeated parameter is malformed)."""
    client.headers.pop("Authorization")
    for path in ("/ui", "/ui/traces/00000000-0000-0000-0000-000000000000", "/ui/assets/ui.js", "/ui/assets/ui.css"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert got.headers["content-type"].lower().count("charset") == 1, got.headers["content-type"]
    icon = client.get("/favicon.ico")
    assert icon.status_code == 204 and icon.content == b"" and "max-age" in icon.headers["cache-control"]
    assert client.head("/favicon.ico").status_code == 204


def test_the_page_has_no_inline_script_and_never_parses_data_as_html():
    html = (UI_DIR / "index.html").read_text()
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/ui/assets/ui.js" defer>']
    assert re.findall(r"<script[^>]*>(.*?)</script>", html, re.S) == [""]  # nothing between the tags
    assert not re.search(r"\son[a-z]+\s*=", html)  # no inline event handlers
    script = (UI_DIR / "ui.js").read_text()
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", script)


# --- in a browser -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if SKIP_BROWSER:
        pytest.skip("CONTEXTS_SKIP_BROWSER=1: no Chromium on this machine, browser tests not run")
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), (
        f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` (make test does), "
        "or set CONTEXTS_SKIP_BROWSER=1 to skip the browser tests"
    )
    with sync_playwright() as playwright:
        # As root (containers, CI) Chromium refuses to start with its sandbox on.
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # The page itself keeps to its policy: Chromium reports any refused load or script.
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(30_000)
    yield page
    context.close()
    assert errors == [], errors


def enter_key(page, key: str) -> None:
    page.fill("#key-input", key)
    page.click("#key-form button")


@browser_test
def test_a_search_shows_its_fragments_trace_and_sources(page, base_url, tenants):
    from playwright.sync_api import expect

    page.goto(f"{base_url}/ui")
    expect(page.locator("#key-section")).to_be_visible()
    enter_key(page, "not-a-key")
    expect(page.locator("#message")).to_contain_text("The service refused the key")
    expect(page.locator("#key-section")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('contexts.key')") is None

    enter_key(page, tenants.acme_admin)
    expect(page.locator("#who")).to_have_text("as admin in acme (auditor)")
    page.fill("#query", STORAGE_QUERY)
    page.click("#search-form button")
    expect(page.locator("#trace-table tbody tr").first).to_be_visible()

    returned = page.locator("#results li.fragment")
    assert returned.count() >= 1
    expect(returned.first.locator(".source")).to_have_text("runbooks/storage.md#storage-runbook")
    rows = page.locator("#trace-table tbody tr:not(.gap)")
    included = page.locator("#trace-table tbody tr.included")
    assert included.count() == returned.count() == rows.count()
    first = rows.first
    assert first.locator("td.source").inner_text().startswith("runbooks/storage.md#")
    assert first.locator("td.rank").inner_text() == "1" and first.locator("td.fate").inner_text() == "included"
    assert set(page.locator("#trace-table td.fate").all_inner_texts()) == {"included"}
    fates = set(page.locator("#dropped-table td.fate").all_inner_texts())
    assert fates <= {"over_budget", "below_min_score", "below_min_relevance", "beyond_rerank_top", "only_boilerplate"}
    expect(page.locator("#trace-meta")).to_contain_text(STORAGE_QUERY)
    expect(page.locator("#trace-meta")).to_contain_text("weighted, a prose query")

    # The trace has its own address; it opens again from there with the same key.
    # The row count is read before leaving: read after, it races the new page's load.
    trace_url = page.locator("#trace-link").get_attribute("href")
    assert re.fullmatch(r"/ui/traces/[0-9a-f-]{36}", trace_url or "")
    searched_rows = rows.count()
    assert searched_rows >= 1
    page.goto(f"{base_url}{trace_url}")
    expect(page.locator("#trace-table tbody tr:not(.gap)")).to_have_count(searched_rows)
    expect(page.locator("#search-section")).to_be_hidden()

    # A candidate's fragment: its text and source pointers.
    rows.first.locator("td").nth(2).locator("a").click()  # source, final rank, fragment
    expect(page.locator("#fragment-section")).to_be_visible()
    expect(page.locator("#sources-table tbody tr").first.locator("td").first).to_have_text("runbooks/storage.md")
    expect(page.locator("#fragment-text")).to_contain_text("rotate the journal")

    # A trace of another org is not found, and says so.
    page.goto(f"{base_url}/ui/traces/00000000-0000-0000-0000-000000000000")
    expect(page.locator("#message")).to_contain_text("404")


@browser_test
def test_a_trace_of_more_candidates_than_are_explained_shows_the_explained_ones(page, base_url, tenants, ingest):
    """The learned reranker (the default) keeps the features and largest contributions
    of its best EXPLAINED candidates; the page shows them on those, and every other row
    still shows its score."""
    from playwright.sync_api import expect

    from app.retrieve.features import MEANINGS
    from app.retrieve.learned import EXPLAINED

    notes = {
        f"notes/host-{i}.md": f"# Host {i}\n\nWhen the storage volume of host {i} is full, rotate the journal.\n"
        for i in range(EXPLAINED + 6)
    }
    ingest("acme", notes, author="Ada", owner="Ada")
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", STORAGE_QUERY)
    page.click("#search-form button")
    rows = page.locator("#trace-table tbody tr, #dropped-table tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() > EXPLAINED
    explained = page.locator("#trace-section td.explained")
    expect(explained).to_have_count(EXPLAINED)
    titles = explained.evaluate_all("cells => cells.map(c => c.title)")
    assert all("features: " in t and "contributions: \n" not in t for t in titles)
    # The contributions are written in the row, not only in the tooltip.
    shown = page.locator("#trace-section td.contributions:has(div)")
    expect(shown).to_have_count(EXPLAINED)
    assert all(re.search(r"[+-]?\d\.\d{3}$", t.splitlines()[0]) for t in shown.all_inner_texts())
    # Each contribution says what its feature means, and the glossary lists every
    # feature the trace names, in the model's column order.
    lines = page.locator("#trace-section td.contributions div:not(.raw)")
    pairs = lines.evaluate_all("ds => ds.map(d => [d.textContent.split(' ')[0], d.title])")
    assert pairs and all(title == f"{name}: {MEANINGS[name]}" for name, title in pairs)
    expect(page.locator("#glossary")).to_be_visible()
    page.click("#glossary summary")
    terms = page.locator("#glossary-list dt").all_inner_texts()
    assert set(terms) == {name for name, _ in pairs} and terms == [n for n in MEANINGS if n in set(terms)]
    assert page.locator("#glossary-list dd").first.inner_text() == MEANINGS[terms[0]]


@browser_test
def test_the_returned_order_says_which_ranks_composition_left_out(page, base_url, tenants, ingest):
    """A candidate ranked among the returned ones but over the budget leaves a gap in the
    returned ranks (1, 3, ...): a row in its place names the missing ranks and why."""
    from playwright.sync_api import expect

    long = "\n\n".join(
        f"When the storage volume is full, rotate the journal (step {i}): " + "check the disk usage first. " * 12
        for i in range(8)
    )
    notes = {"notes/storage-long.md": f"# Storage volume full\n\n{long}\n"} | {
        f"notes/host-{i}.md": f"# Host {i}\n\nWhen the storage volume of host {i} is full, rotate the journal.\n"
        for i in range(6)
    }
    ingest("acme", notes, author="Ada", owner="Ada")
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", STORAGE_QUERY)
    page.fill("#budget", "120")
    page.click("#search-form button")
    expect(page.locator("#trace-table tbody tr.included").first).to_be_visible()
    ranks = [int(r) for r in page.locator("#trace-table tbody tr.included td.rank").all_inner_texts()]
    over = page.locator("#dropped-table tbody tr", has=page.locator("td.fate", has_text="over_budget"))
    over_ranks = {int(r) for r in over.locator("td.rank").all_inner_texts() if r.strip()}
    skipped = [r for r in range(1, max(ranks)) if r not in ranks]
    assert skipped and set(skipped) <= over_ranks, (ranks, over_ranks)
    gaps = page.locator("#trace-table tbody tr.gap")
    expect(gaps.first).to_contain_text(f"#{skipped[0]}")
    said = " ".join(gaps.all_inner_texts())
    # Each run of skipped ranks is named: one by one, or three or more as "#a to #b".
    shown: set[int] = set()
    for a, b in re.findall(r"#(\d+)(?: to #(\d+))?", said):
        shown.update(range(int(a), int(b or a) + 1))
    assert shown == set(skipped) and "over budget" in said and "listed below" in said, (said, skipped)
    # Each gap row stands right before the first returned row ranked after the gap.
    first_gap_next = gaps.first.locator("xpath=following-sibling::tr[1]/td[@class='rank']")
    assert int(first_gap_next.inner_text()) > skipped[0]


@browser_test
def test_hostile_fragment_text_and_paths_are_shown_as_text(page, base_url, tenants):
    from playwright.sync_api import expect

    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", "storage volume full rotate the journal hostile")
    page.click("#search-form button")
    expect(page.locator("#trace-table tbody tr").first).to_be_visible()

    hostile = page.locator("#results li.fragment", has_text="window.__pwned=3")
    expect(hostile).to_have_count(1)
    expect(hostile.locator("pre")).to_contain_text("<script>window.__pwned=3</script>")
    expect(hostile.locator(".source")).to_contain_text(HOSTILE_PATH)
    expect(page.locator("#trace-table td.source", has_text=HOSTILE_PATH)).to_have_count(1)
    hostile.locator("a").click()
    expect(page.locator("#sources-table td").first).to_have_text(HOSTILE_PATH)
    expect(page.locator("#fragment-text")).to_contain_text('<b onmouseover="window.__pwned=4">')

    # Parsed as markup, the text would have made elements (and the CSP blocked their script).
    assert page.locator("img, script:not([src]), b").count() == 0
    assert page.evaluate("window.__pwned") is None


@browser_test
def test_the_trace_says_what_a_supersession_left_out_and_by_what(page, base_url, tenants, ingest):
    """ "Why didn't the runbook come back?": the trace page lists the superseded
    runbook that would have ranked, and the document that superseded it, with the line
    that says so."""
    from playwright.sync_api import expect

    ingest(
        "acme",
        {
            "runbooks/storage-2019.md": "# Storage runbook (2019)\n\nWhen the storage volume is full, delete the "
            "oldest snapshots by hand.\n",
            "runbooks/storage-2026.md": "# Storage runbook (2026)\n\n- Status: accepted\n- Supersedes: "
            "[the 2019 runbook](storage-2019.md)\n\nThe volume grows by itself now.\n",
        },
        author="Ada",
        owner="Ada",
    )
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", STORAGE_QUERY)
    page.click("#search-form button")
    expect(page.locator("#trace-table tbody tr").first).to_be_visible()
    expect(page.locator("#left-out")).to_be_visible()
    row = page.locator("#left-out-table tbody tr", has_text="runbooks/storage-2019.md")
    expect(row).to_have_count(1)
    expect(row.locator("td.fate")).to_have_text("superseded")
    superseder = row.locator("td.superseder > div")
    expect(superseder).to_contain_text("runbooks/storage-2026.md")
    expect(superseder.locator(".evidence")).to_have_text("line 4: - Supersedes: [the 2019 runbook](storage-2019.md)")
    assert not page.locator("#results li.fragment", has_text="runbooks/storage-2019.md").count()


@browser_test
def test_at_1400_px_each_row_shows_its_source_final_score_and_largest_terms(page, base_url, tenants, ingest, tmp_path):
    """In a 1,400 px window the columns that decide a row's place (source, final score
    and the blend's largest terms, rerank and the reranker's largest contributions) are
    inside the window for every returned row, without scrolling sideways; in a narrower
    one the table scrolls in its box and the source column stays. What the retrieval
    left out (over the budget, beyond rerank_top, ...) has a section of its own."""
    from playwright.sync_api import expect

    notes = {
        f"notes/host-{i}.md": f"# Host {i}\n\nWhen the storage volume of host {i} is full, rotate the journal.\n"
        for i in range(8)
    }
    ingest("acme", notes, author="Ada", owner="Ada")
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", STORAGE_QUERY)
    page.fill("#budget", "100")
    page.click("#search-form button")
    rows = page.locator("#trace-table tbody tr.included")
    expect(rows.first).to_be_visible()
    page.screenshot(path=tmp_path / "trace-1400.png", full_page=True)

    assert page.evaluate("document.documentElement.scrollWidth") <= 1400  # the page does not scroll sideways
    scroller = page.locator("#trace-table").locator("xpath=..").bounding_box()
    assert scroller is not None
    right = min(1400.0, scroller["x"] + scroller["width"])
    term = re.compile(r"^(rerank|freshness|authority|pinned|persona) (\d\.\d{3})$")
    assert rows.count() >= 2
    for i in range(rows.count()):
        row = rows.nth(i)
        row.scroll_into_view_if_needed()
        for column in ("source", "final", "terms", "rerank", "contributions"):
            box = row.locator(f"td.{column}").bounding_box()
            assert box is not None and box["width"] > 0, (i, column)
            assert 0 <= box["x"] and box["x"] + box["width"] <= right + 0.5, (i, column, box, right)
            assert 0 <= box["y"] and box["y"] + box["height"] <= 900, (i, column, box)
        assert row.locator("td.source").inner_text().strip()
        final = float(row.locator("td.final").inner_text())
        terms = [term.match(t) for t in row.locator("td.terms div").all_inner_texts()]
        assert terms and all(terms), (i, row.locator("td.terms").inner_text())
        values = [float(m.group(2)) for m in terms if m]
        assert values == sorted(values, reverse=True) and sum(values) <= final + 0.002, (values, final)
        assert row.locator("td.contributions div").count() >= 1  # the best are explained, in the row

    # What the retrieval left out: in its own section, each with its reason.
    expect(page.locator("#left-out")).to_be_visible()
    expect(page.locator("#left-out-summary")).to_contain_text("over budget")
    dropped = page.locator("#dropped-table tbody tr")
    assert dropped.count() >= 1
    assert "over_budget" in dropped.locator("td.fate").all_inner_texts()
    assert page.locator("#dropped-table tr.included").count() == 0

    # Narrower, the table scrolls in its box: the source column stays, the others pass under it.
    page.set_viewport_size({"width": 800, "height": 900})
    box = page.locator("#dropped-table").locator("xpath=..")
    box.scroll_into_view_if_needed()
    scrolled = box.evaluate("e => { e.scrollLeft = e.scrollWidth; return e.scrollLeft; }")
    assert scrolled > 0
    page.wait_for_function("() => true")  # a frame for the layout
    frame = box.bounding_box()
    first = dropped.first
    source, rank = first.locator("td.source").bounding_box(), first.locator("td.rank").bounding_box()
    assert frame and source and rank
    assert abs(source["x"] - frame["x"]) <= 2, (source, frame)
    assert rank["x"] < frame["x"], (rank, frame)  # scrolled out of the box
    assert page.evaluate("document.documentElement.scrollWidth") <= 800


@browser_test
def test_a_trace_shows_the_fragments_a_relevance_floor_left_out(page, base_url, tenants):
    """A retrieval made over the API with a floor no fragment reaches answers nothing, and
    its trace page lists each candidate it dropped, marked below_min_relevance."""
    import httpx
    from playwright.sync_api import expect

    answer = httpx.post(
        f"{base_url}/contexts/retrieve",
        headers={"Authorization": f"Bearer {tenants.acme_admin}"},
        json={"query": STORAGE_QUERY, "scope": {"org_id": "acme"}, "min_relevance": 0.999},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["fragments"] == []
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.goto(f"{base_url}/ui/traces/{body['trace_id']}")
    dropped = page.locator("#dropped-table tbody tr")
    expect(dropped.first).to_be_visible()
    fates = dropped.locator("td.fate").all_inner_texts()
    assert fates and set(fates) == {"below_min_relevance"}, fates
    assert page.locator("#trace-table tbody tr.included").count() == 0
    assert dropped.first.locator("td.source").inner_text().startswith("runbooks/")


@browser_test
def test_a_twin_shows_the_rank_of_the_fragment_it_repeats(page, base_url, tenants, ingest):
    """A sync method and its async copy: the lower one's final cell says whose twin it
    is (by rank) and why its score was scaled."""
    from playwright.sync_api import expect

    from tests.api.test_api import SESSIONS_METHOD

    files = {
        "client/sync_sessions.py": SESSIONS_METHOD.format(cls="Sessions", a="", w=""),
        "client/async_sessions.py": SESSIONS_METHOD.format(cls="AsyncSessions", a="async ", w="await "),
    }
    ingest("acme", files, author="Ada", owner="Ada")
    page.goto(f"{base_url}/ui")
    enter_key(page, tenants.acme_admin)
    page.fill("#query", "remove expired sessions retention sweep")
    page.click("#search-form button")
    twin = page.locator("#trace-section td.final div.twin")
    expect(twin).to_have_count(1)
    expect(twin).to_have_text(re.compile(r"^twin of #\d+$"))
    title = twin.locator("xpath=..").get_attribute("title")
    assert "sync or async" in title and "x 0.85" in title


@browser_test
def test_the_interactive_docs_render_every_operation(page, base_url):
    """Swagger UI reads the OpenAPI 3.1 document the service writes (4.x, which the
    service once shipped, said "Unable to render this definition" and showed nothing)."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/schema")
    expect(page.locator(".opblock-summary-path", has_text="/contexts/retrieve").first).to_be_visible()
    expect(page.get_by_text("Unable to render this definition")).to_have_count(0)
    document = page.request.get(f"{base_url}/schema/openapi.json").json()
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    operations = sum(1 for item in document["paths"].values() for method in item if method in methods)
    assert operations > 30 and page.locator(".opblock").count() == operations
