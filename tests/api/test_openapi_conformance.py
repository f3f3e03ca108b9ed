"""The OpenAPI document the app serves is true to what the app does.

schemathesis loads /schema/openapi.json from the app in-process (ASGI, no socket), then,
for every operation, sends examples from the document, boundary and invalid values
(coverage phase) and a bounded number of generated requests, valid and invalid
(fuzzing phase), as acme's administrator over a corpus of real documents. Every response
is checked against the document; any failure names the check, the operation and a
curl command that reproduces it. Seeded and deterministic, so a failure in CI is a
failure on a laptop too. For a longer hunt: CONTEXTS_OPENAPI_EXAMPLES=500
CONTEXTS_OPENAPI_SEED=7 pytest tests/api/test_openapi_conformance.py

The run goes through schemathesis's engine (what `st run` drives) and reports every
failure at once; its pytest integration (`schemathesis.pytest.from_fixture`) would need a
node attribute, `_nodeid`, that pytest 9.2 no longer has.
"""

from __future__ import annotations

import os
import re

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema
from schemathesis.python.asgi import shutdown_lifespans

from app.wire.retrieve import CONTROL_CHARACTERS
from tests.api.test_api import ingest
from tests.conftest import serving
from tests.retrieve.corpus import CODE, DOCS

MAX_EXAMPLES = int(os.environ.get("CONTEXTS_OPENAPI_EXAMPLES", "50"))
"""Generated requests per operation in the fuzzing phase, valid and invalid ones drawn
together; the coverage phase adds its boundary and invalid values (a hundred or so for
each request body) and undeclared methods."""
SEED = int(os.environ.get("CONTEXTS_OPENAPI_SEED", "20261201"))

CHECKS = [
    "not_a_server_error",  # no 5xx, whatever is sent
    "status_code_conformance",  # every status answered is declared for the operation
    "content_type_conformance",  # and with the declared media type (problem+json for errors)
    "response_schema_conformance",  # bodies match their declared schemas
    "response_headers_conformance",  # declared headers (WWW-Authenticate, Retry-After) are sent
    "positive_data_acceptance",  # what the document allows is not refused as invalid
    "negative_data_rejection",  # what it forbids (unknown fields, bad ids, bounds) is a 4xx
    "missing_required_header",  # no Authorization header: 401
    "ignored_auth",  # a request without (or with a wrong) key is refused
    "unsupported_method",  # undeclared methods: 405 with an Allow header
]
"""use_after_free and ensure_resource_availability need DELETE operations or links
between operations; the API declares neither."""

IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$")
QUERY = re.compile(f"^[^{CONTROL_CHARACTERS}]*$")


def schema_config(token: str) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
            # No links between operations are declared, so the stateful phase would only
            # repeat the fuzzing phase; real fragment and trace ids are tried below instead.
            "phases": {"stateful": {"enabled": False}},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
            "operations": [
                {
                    # A document is judged for what it holds (binary or empty content, an unusable
                    # path: the declared 422) and its paths must differ within one request (400):
                    # JSON Schema cannot say either, so a schema-valid body may rightly be refused.
                    # The statuses are declared, and status_code_conformance holds them to that.
                    # A session note and a promoted note are documents too.
                    "include-path-regex": "^/documents$|^/sessions/.+/notes",
                    "checks": {"positive_data_acceptance": {"enabled": False}},
                },
                {
                    # A pin's expires_at must lie in the future (a 400 otherwise), which a
                    # schema cannot say either; the tests in tests/api/test_pins.py hold the rest.
                    "include-path-regex": "^/pins$",
                    "include-method-regex": "^POST$",
                    "checks": {"positive_data_acceptance": {"enabled": False}},
                },
                {
                    # A ranking profile is refused when the weights in effect, its own and
                    # those it inherits from the org default, are all 0: stored state a
                    # schema cannot see; tests/api/test_profiles.py holds the rest.
                    "include-path-regex": "^/profiles$",
                    "include-method-regex": "^PUT$",
                    "checks": {"positive_data_acceptance": {"enabled": False}},
                },
                {
                    # A rule has 32 globs at most in all, path and symbol ones together: a
                    # schema cannot count across two lists (that it needs one of them, it
                    # says); tests/api/test_rules.py holds the rest.
                    "include-path-regex": "^/rules$",
                    "include-method-regex": "^POST$",
                    "checks": {"positive_data_acceptance": {"enabled": False}},
                },
            ],
            "auth": {"openapi": {"apiKey": {"bearer": token}}},
            "workers": 1,
        }
    )


def in_granted_scope(body: dict) -> None:
    """About half of the bodies get a scope in the key's org, so granted requests reach
    validation, chunking and retrieval; the others stay in orgs the key cannot use (403).
    Only a valid org id is replaced: an invalid one is what makes its request invalid."""
    scope = body.get("scope")
    if isinstance(scope, dict):
        org = scope.get("org_id")
        if isinstance(org, str) and IDENTIFIER.match(org) and len(org) <= 128 and len(org) % 2 == 0:
            scope["org_id"] = "acme"


def with_a_word(body: dict) -> None:
    """A query must hold a letter or a digit, in any script: the document's pattern
    dialect has no Unicode classes to say so. A schema-valid query without one gets a
    letter, so positive_data_acceptance checks every other field; an invalid query is
    left as it is."""
    query = body.get("query")
    if (
        isinstance(query, str)
        and 1 <= len(query) < 4000
        and QUERY.match(query)
        and not any(ch.isalnum() for ch in query)
    ):
        body["query"] = query + "q"


def with_touchable_paths(body: dict) -> None:
    """A touched path must stay inside the repo (no `..` segment, no leading slash, a
    path before any `#Symbol`), which the pattern dialect cannot say: such an entry is
    replaced by a plain path, so generated requests reach the rules; refusals have
    tests of their own (tests/api/test_rules.py)."""
    from app.wire.retrieve import check_touched

    touching = body.get("touching")
    if not isinstance(touching, list):
        return
    for index, value in enumerate(touching):
        if isinstance(value, str) and 1 <= len(value) <= 1024:
            try:
                check_touched(value)
            except ValueError:
                touching[index] = f"src/generated_{index}.py"


def with_storable_documents(body: dict) -> None:
    """Documents are refused for what they hold (paths with control or invisible
    characters, `..` or blank segments; binary or empty content: 422), which the pattern
    dialect cannot say. Such a path or content is replaced by a plain one, so generated
    requests also get documents stored; refusals have tests of their own."""
    from app.ingest.normalize import RejectedDocument, canonical_text, decode, normalize_path

    documents = body.get("documents")
    if not isinstance(documents, list):
        return
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            continue
        path, content = document.get("path"), document.get("content")
        if isinstance(path, str):
            try:
                normalize_path(path)
            except RejectedDocument:
                document["path"] = f"generated/{index}.md"
        if isinstance(content, str):
            try:
                usable = bool(canonical_text(decode(content, "x")))
            except RejectedDocument:
                usable = False
            if not usable:
                document["content"] = f"# Generated {index}\n\nSome text to store.\n"


@pytest.fixture
def client(settings, models, db_url, logins):
    """The API as conftest's `client` serves it, without the throttle of failed
    authentication: the run sends hundreds of requests without a key (the ignored_auth and
    missing_required_header checks), each of which must be the 401 of a missing key, not
    the 429 the throttle answers after a few (tests/api/test_throttle.py covers that)."""
    limits = {"auth_failures_per_client": 0, "auth_failures_per_key": 0}
    with serving(settings, db_url, logins, max_body_bytes=256 * 1024, **limits) as (test_client, token):
        test_client.headers["Authorization"] = f"Bearer {token}"
        yield test_client


@pytest.fixture
def api(client):
    """The served document, loaded as schemathesis sees it, over a corpus of documents."""
    assert ingest(client, DOCS | CODE).status_code == 201
    token = client.headers["Authorization"].removeprefix("Bearer ")
    schema = schemathesis.openapi.from_asgi("/schema/openapi.json", client.app, config=schema_config(token))

    @schema.hook
    def map_body(context, body):
        if isinstance(body, dict):
            in_granted_scope(body)
            if context.operation is not None and context.operation.path == "/contexts/retrieve":
                with_a_word(body)
            if context.operation is not None and context.operation.path in ("/contexts/retrieve", "/sessions"):
                with_touchable_paths(body)
            if context.operation is not None and context.operation.path == "/documents":
                with_storable_documents(body)
        return body

    try:
        yield schema
    finally:
        shutdown_lifespans()  # schemathesis keeps the app's lifespan running until told


def run(schema) -> tuple[list[str], dict[str, set[int]]]:
    """Every phase for every operation: the failures (one per operation, check and kind,
    with a curl command) and the statuses each operation answered."""
    failures: dict[tuple[str, str, str], str] = {}
    errors: list[str] = []
    statuses: dict[str, set[int]] = {}
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            for interaction in recorder.interactions.values():
                if interaction.response is not None:
                    statuses.setdefault(recorder.label, set()).add(interaction.response.status_code)
            for checks in recorder.checks.values():
                for check in checks:
                    info = check.failure_info
                    if info is not None:
                        key = (recorder.label, check.name, info.failure.title)
                        failures.setdefault(key, f"{info.failure.message}\n    {info.code_sample}")
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.format()}")
        elif isinstance(event, events.FatalError):
            raise event.exception
    report = [f"{label} [{check}] {title}\n    {detail}" for (label, check, title), detail in sorted(failures.items())]
    return errors + report, statuses


PARTS = {
    "contexts rules pins": ("contexts", "rules", "pins"),
    "documents sessions profiles": ("documents", "sessions", "profiles"),
}
"""The generated run in three parts, each its own test on a service of its own (so that
the suite's workers share them out), about a third of the run each: the operations under
these first path segments, and every other operation (where a path added later runs)."""
OTHERS = "every other operation"
REACHED = {
    "contexts rules pins": {"POST /contexts/retrieve": {200}},
    "documents sessions profiles": {"POST /documents": {201}},
    OTHERS: {"GET /fragments/{fragment_id}": {400, 401, 404}},
}
"""Answers each part's run must reach, not only refusals."""


def part_named(path: str) -> str:
    """The part an operation's path belongs to: by its first segment."""
    first = path.strip("/").split("/")[0]
    return next((part for part, segments in PARTS.items() if first in segments), OTHERS)


def part_of(schema, part: str):
    """The operations of `part` in `schema` (by exclusion: an include filter would be
    dropped by the per-operation entries of schema_config)."""
    return schema.exclude(lambda context: part_named(context.operation.path) != part)


@pytest.mark.parametrize("part", REACHED)
def test_served_schema_holds_for_generated_requests(api, part):
    problems, statuses = run(part_of(api, part))
    assert not problems, "\n\n".join(problems)
    for label, answers in REACHED[part].items():
        assert answers <= statuses[label], (label, sorted(statuses[label]))


def test_served_schema_holds_for_known_fragments_and_traces(api, client):
    """Generated ids rarely exist: these are real ones, under the same checks."""
    auth = {"Authorization": client.headers["Authorization"]}
    body = {"query": "what to do when the storage volume is full", "scope": {"org_id": "acme"}, "budget_tokens": 300}
    retrieve = api["/contexts/retrieve"]["POST"].Case(body=body, media_type="application/json")
    result = retrieve.call_and_validate(headers=auth).json()
    assert result["fragments"], result
    for fragment in result["fragments"]:
        case = api["/fragments/{fragment_id}"]["GET"].Case(path_parameters={"fragment_id": str(fragment["id"])})
        assert case.call_and_validate(headers=auth).json()["sources"]
    for trace_id in (result["trace_id"], result["trace_id"].upper()):
        case = api["/traces/{trace_id}"]["GET"].Case(path_parameters={"trace_id": trace_id})
        assert case.call_and_validate(headers=auth).json()["trace_id"] == result["trace_id"]
    assert api["/health"]["GET"].Case().call_and_validate().json()["status"] == "ok"


def test_every_application_serves_the_document_it_would_build(settings, monkeypatch):
    """create_app builds the document once per process and later applications reuse it
    (app/api/openapi.py): one built afresh, under other settings, is the same document."""
    from app.api import openapi
    from app.serve.app import create_app

    remembered = create_app(settings).openapi_schema
    assert create_app(settings.with_(max_body_bytes=1024)).openapi_schema is remembered
    monkeypatch.setattr(openapi, "_DOCUMENT", [])
    other = settings.with_(max_body_bytes=1024, auth_failures_per_client=0, auth_failure_window="day")
    fresh = create_app(other).openapi_schema
    assert fresh is not remembered
    assert fresh.to_schema() == remembered.to_schema()
    assert fresh.components.schemas["RetrieveRequest"].additional_properties is False  # corrected too


def test_served_schema_declares_errors_closed_requests_and_public_health(client):
    """What the generated requests cannot show: every error status is declared as
    problem+json with the headers it carries, request objects are closed, and /health is
    the only operation that needs no key."""
    document = client.get("/schema/openapi.json").json()
    components = document["components"]["schemas"]
    assert document["security"] == [{"apiKey": []}]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            label = f"{method.upper()} {path}"
            responses = operation["responses"]
            errors = {int(status) for status in responses if int(status) >= 400}
            for status in errors:
                assert responses[str(status)]["content"] == {
                    "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
                }, label
            assert 503 in errors and responses["503"]["headers"]["Retry-After"]["required"], label
            if path == "/health":
                assert operation["security"] == [{}], label
                continue
            assert "security" not in operation, label  # the document's apiKey applies
            assert 401 in errors and responses["401"]["headers"]["WWW-Authenticate"]["required"], label
            if operation.get("parameters") or "requestBody" in operation:  # input that can be malformed
                assert 400 in errors, label
            if "requestBody" in operation:
                assert {413, 415} <= errors, label
                content = operation["requestBody"]["content"]
                assert list(content) == ["application/json"], label
                for name in referenced(content["application/json"]["schema"], components):
                    assert components[name].get("additionalProperties") is False, f"{label}: {name} is open"


def referenced(schema: object, components: dict, seen: set[str] | None = None) -> set[str]:
    """Names of the component schemas `schema` refers to, directly or not."""
    seen = set() if seen is None else seen
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                referenced(components[name], components, seen)
        for value in schema.values():
            referenced(value, components, seen)
    elif isinstance(schema, list):
        for value in schema:
            referenced(value, components, seen)
    return seen


REFUSED = [
    # A Context version from nothing (every source empty).
    ("POST", "/contexts/ctx_1/versions", {"doc_ids": [], "fragment_ids": [], "path_globs": [], "query": None}),
    # Ids start at 1, in a list too.
    ("POST", "/contexts/ctx_1/versions", {"fragment_ids": [0]}),
    ("POST", "/contexts/ctx_1/versions", {"doc_ids": [2**53]}),
    # A rule without globs.
    ("POST", "/rules", {"context": "ctx_1@1", "name": "r", "org_id": "acme", "path_globs": [], "symbol_globs": []}),
    # A new owner or a path prefix with C1 control characters: the database refuses them as [[:cntrl:]].
    ("POST", "/owners/reassign", {"org_id": "acme", "from_owner": "Ada", "to_owner": "Bob\u008a"}),
    ("POST", "/owners/reassign", {"org_id": "acme", "from_owner": "Ada", "to_owner": "Bob", "path_prefix": "x\u0085"}),
    # A webhook URL with a C1 control character.
    ("PUT", "/orgs/acme/webhook", {"url": "https://hooks.example.com/\u0090x"}),
]
"""Requests the service refuses as malformed (400) that the document once allowed,
found by generated runs without the hooks above (schemathesis's positive_data_acceptance)."""


def schema_errors(document: dict, method: str, path: str, body: dict) -> list[str]:
    """Where `body` breaks the request schema the document declares for the operation."""
    from jsonschema import Draft202012Validator

    template = next(p for p in document["paths"] if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", p), path))
    schema = document["paths"][template][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    return [error.message for error in validator.iter_errors(body)]


@pytest.mark.parametrize(
    ("method", "path", "body"), REFUSED, ids=[f"{m} {p} {i}" for i, (m, p, _) in enumerate(REFUSED)]
)
def test_what_the_service_refuses_as_malformed_the_schema_refuses(client, method, path, body):
    document = client.get("/schema/openapi.json").json()
    answer = client.request(method, path, json=body)
    assert answer.status_code == 400, answer.text
    assert schema_errors(document, method, path, body), f"the document allows {body}, refused with {answer.text}"


def test_the_schema_still_allows_what_is_accepted(client):
    """The tightened schemas refuse only what they must: these are valid and accepted."""
    document = client.get("/schema/openapi.json").json()
    accepted = [
        (
            "POST",
            "/documents",
            {"documents": [{"path": "a.md", "content": "# A\n\nText.", "owner": "Zoë"}], "scope": {"org_id": "acme"}},
        ),
        ("POST", "/owners/reassign", {"org_id": "acme", "from_owner": "Zoë", "to_owner": "Ada Lovelace"}),
        ("PUT", "/orgs/acme/webhook", {"url": "https://hooks.example.com/nudge?to=zoë"}),
    ]
    for method, path, body in accepted:
        assert not schema_errors(document, method, path, body), body
        answer = client.request(method, path, json=body)
        assert answer.status_code in (200, 201), answer.text
    for body in ({"path_globs": ["src/**"]}, {"symbol_globs": ["Stripe*"]}):
        rule = {"context": "ctx_1@1", "name": "r", "org_id": "acme", **body}
        assert not schema_errors(document, "POST", "/rules", rule)
    assert not schema_errors(document, "POST", "/contexts/ctx_1/versions", {"query": {"query": "storage"}})


def test_options_allows_exactly_what_each_path_serves(client):
    """`OPTIONS` on every path of the document (and the undocumented ones: the page, its
    icon, /metrics, the document itself) lists in `Allow` the methods the path serves,
    no fewer and no more; each listed method is answered, and a method not listed is 405
    with the same methods in `Allow`. A path whose controller declares two methods once listed only
    the first."""
    document = client.get("/schema/openapi.json").json()
    served = {path: {method.upper() for method in item} for path, item in document["paths"].items()}
    served |= {
        "/ui": {"GET", "HEAD"},
        "/ui/traces/{trace_id}": {"GET", "HEAD"},
        "/favicon.ico": {"GET", "HEAD"},
        "/metrics": {"GET"},
        "/schema/openapi.json": {"GET"},
    }
    wrong = []
    for path, methods in served.items():
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        allow = client.options(concrete).headers.get("allow", "")
        listed = {method.strip() for method in allow.split(",") if method.strip()}
        if listed != methods | {"OPTIONS"}:
            wrong.append(f"{path}: Allow {allow!r}, serves {sorted(methods)}")
            continue
        for method in {"GET", "POST", "PUT", "DELETE", "PATCH"} - listed:
            refused = client.request(method, concrete)
            again = {m.strip() for m in refused.headers.get("allow", "").split(",")}
            if refused.status_code != 405 or again != listed:
                wrong.append(f"{method} {path}: {refused.status_code}, Allow {refused.headers.get('allow')!r}")
    assert not wrong, "\n".join(wrong)
