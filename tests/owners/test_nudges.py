"""Nudges reach each org's own webhook at least once: a real HTTP receiver on
127.0.0.1 that fails first, a crash between the send and the mark, one org's nudges
never at another's webhook, signatures, validated URLs, and no secret read back."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import psycopg
import pytest

from app.nudges import SIGNATURE_HEADER, deliver_pending
from tests.owners.helpers import OLD, fragments_of, record_returns

SECRET = "s3cret-s3cret-s3cret"


class Receiver:
    """A webhook on 127.0.0.1: answers 500 to its first `failures` requests, then 204."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.received: list[tuple[dict, dict]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append((dict(self.headers), {"raw": body, **json.loads(body)}))
                failing = receiver.failures > 0
                receiver.failures -= 1
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/nudges"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def transactions(db_url):
    """The worker's transactions, each committed on exit, on one connection (as the CLI's)."""
    with psycopg.connect(db_url, autocommit=True) as conn:

        @contextlib.contextmanager
        def transaction():
            with conn.transaction():
                yield conn

        yield transaction


def stale_corpus(conn, ingest, org: str, text: str) -> list[int]:
    ingest(org, {"runbook.md": f"# Runbook\n\n{text}\n"}, repo="core", owner="Ada", timestamp=OLD)
    ids = fragments_of(conn, org, "runbook.md")
    record_returns(conn, org, ids, times=6)
    conn.commit()
    return ids


def set_webhook(conn, org: str, url: str, secret: str | None = SECRET):
    conn.execute("select service.bind_principal(%s, 'admin')", (org,))
    row = conn.execute("select * from service.webhook_set(%s, %s, %s)", (org, url, secret)).fetchone()
    conn.commit()
    return row


def test_nudges_are_delivered_at_least_once_and_only_to_their_own_org(conn, ingest, db_url):
    acme = stale_corpus(conn, ingest, "acme", "Promote the replica, then repoint DNS to it.")
    beta = stale_corpus(conn, ingest, "beta", "Rotate the signing keys of the billing service.")
    with Receiver(failures=1) as acme_hook, Receiver() as beta_hook, transactions(db_url) as tx:
        set_webhook(conn, "acme", acme_hook.url)
        set_webhook(conn, "beta", beta_hook.url, secret=None)

        first = deliver_pending(tx, retry_base_s=600, allow_private=True)
        assert (first.enqueued, first.delivered, first.failed) == (len(acme) + len(beta), len(acme + beta) - 1, 1)
        early = deliver_pending(tx, retry_base_s=600, allow_private=True)
        assert (early.enqueued, early.delivered, early.failed) == (0, 0, 0), "backing off; same period: no new row"
        # The backoff's ten minutes pass (a sleep would make the test depend on this machine's speed).
        conn.execute("update data.nudge_outbox set next_attempt_at = now() where delivered_at is null")
        conn.commit()
        again = deliver_pending(tx, retry_base_s=600, allow_private=True)
        assert (again.enqueued, again.delivered, again.failed) == (0, 1, 0)

        acme_seen = [body for _h, body in acme_hook.received]
        assert {b["fragment_id"] for b in acme_seen} == set(acme) and {b["org_id"] for b in acme_seen} == {"acme"}
        assert {b["fragment_id"] for _h, b in beta_hook.received} == set(beta)
        assert len(acme_seen) == len(acme) + 1, "the failed one was sent again"
        for headers, body in acme_hook.received:
            expected = "sha256=" + hmac.new(SECRET.encode(), body["raw"], hashlib.sha256).hexdigest()
            assert headers[SIGNATURE_HEADER] == expected
            assert body["owner"] == "Ada" and body["path"] == "runbook.md" and body["retrievals"] == 6
        assert all(SIGNATURE_HEADER not in h for h, _b in beta_hook.received), "no secret, no signature"

    attempts = conn.execute(
        "select n.org_id, count(*), count(*) filter (where d.status = 500), bool_and(n.delivered_at is not null)"
        " from data.nudge_outbox n join data.nudge_deliveries d using (nudge_id) group by n.org_id order by 1"
    ).fetchall()
    assert attempts == [("acme", len(acme) + 1, 1, True), ("beta", len(beta), 0, True)]


def test_a_crash_between_send_and_mark_sends_the_nudge_again(conn, ingest, db_url):
    ids = stale_corpus(conn, ingest, "acme", "Promote the replica, then repoint DNS to it.")

    class Crash(Exception):
        pass

    def crash_after_send(response: httpx.Response) -> None:
        raise Crash("the worker dies after the webhook answered")

    with Receiver() as hook, transactions(db_url) as tx:
        set_webhook(conn, "acme", hook.url)
        with httpx.Client(event_hooks={"response": [crash_after_send]}) as dying, pytest.raises(Crash):
            deliver_pending(tx, client=dying, allow_private=True)
        assert len(hook.received) == 1
        assert conn.execute("select count(*) from data.nudge_outbox where delivered_at is null").fetchone()[0] == len(
            ids
        )
        done = deliver_pending(tx, allow_private=True)
        assert done.delivered == len(ids)
        first, second = hook.received[0][1], hook.received[1][1]
        assert first["nudge_id"] == second["nudge_id"] and first["raw"] == second["raw"]


def test_webhook_urls_are_validated_and_the_secret_never_read_back(conn, ingest, as_principal, logins, db_url):
    ingest("acme", {"a.md": "# A\n\nText.\n"})
    for bad in (
        "ftp://example.com/hook",
        "http://user:pw@example.com/hook",
        "javascript:alert(1)",
        "http://exa mple.com/",
        "https:///nohost",
    ):
        as_principal("acme")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("select * from service.webhook_set('acme', %s, %s)", (bad, SECRET))
        conn.rollback()
    as_principal("acme")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conn.execute("select * from service.webhook_set('acme', 'https://hooks.example.com/x', 'short')")
    conn.rollback()
    as_principal("acme")
    row = conn.execute(
        "select * from service.webhook_set('acme', 'https://hooks.example.com/x?a=1', %s)", (SECRET,)
    ).fetchone()
    assert SECRET not in repr(row) and row[2] is True
    shown = conn.execute("select * from service.webhook_get('acme')").fetchone()
    assert SECRET not in repr(shown)
    # A scheme is case-insensitive (RFC 3986): HTTPS:// is taken, and kept as https://.
    for url in ("HTTPS://hooks.example.com/Path?Q=1", "Http://hooks.example.com/x"):
        stored = conn.execute("select url from service.webhook_set('acme', %s, null)", (url,)).fetchone()[0]
        assert stored == url.split("://")[0].lower() + "://" + url.split("://", 1)[1]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select * from data.org_webhooks")
    conn.rollback()
    for role in ("contexts_analyst", "contexts_auditor", "contexts_service"):
        assert not conn.execute("select has_table_privilege(%s, 'data.org_webhooks', 'select')", (role,)).fetchone()[0]
    for role in ("contexts_analyst", "contexts_auditor"):
        assert not conn.execute(
            "select has_function_privilege(%s, 'service.nudge_claim(text)', 'execute')", (role,)
        ).fetchone()[0]


def test_a_run_tries_each_due_nudge_once_even_when_its_retry_is_due_at_once(conn, ingest, db_url):
    """A failing webhook whose retry comes due while the run goes on (no backoff here; a
    slow machine under a short one) is not tried again in the same run: the run ends, and
    the next run tries it."""
    ids = stale_corpus(conn, ingest, "acme", "Promote the replica, then repoint DNS to it.")
    with Receiver(failures=1_000) as hook, transactions(db_url) as tx:
        set_webhook(conn, "acme", hook.url)
        first = deliver_pending(tx, retry_base_s=0.0, allow_private=True)
        assert (first.delivered, first.failed, len(hook.received)) == (0, len(ids), len(ids))
        second = deliver_pending(tx, retry_base_s=0.0, allow_private=True)
        assert (second.delivered, second.failed, len(hook.received)) == (0, len(ids), 2 * len(ids))


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://hooks.example.com:99999/h", "Port out of range"),
        ("http://hooks.example.com:0/h", "port is 0"),
        ("http://hooks.example.com:-1/h", "cannot be read"),
        ("http://a..example.com/h", "not a DNS name"),
        ("http://.example.com/h", "not a DNS name"),
        ("http://xn--/h", "not a DNS name"),
        ("http://example.com\\t/h", "not a DNS name"),
        ("http://%31%32%37.0.0.1/h", "percent-encoding"),
        ("http://127.0.0.1%00.example.com/h", "percent-encoding"),
        ("http://[fe80::1%25lo]/h", "zone ids"),
    ],
)
def test_a_webhook_url_that_names_no_host_and_port_is_refused_whatever_is_allowed(conn, url, words):
    """Stored with a 200 before: a port out of range, a host with an empty label, a
    backslash, percent-encoding or a zone id (the last one also escaped the address
    check, as a name that does not resolve)."""
    from app.access import ensure_admin_principal
    from app.operations.errors import Invalid
    from app.operations.owners import webhook_set_on
    from app.wire.bodies import WebhookIn

    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.commit()
    conn.execute("select service.bind_principal('acme', 'admin')")
    for allow_private in (False, True):
        with pytest.raises(Invalid) as refused:
            webhook_set_on(conn, "acme", WebhookIn(url=url), allow_private=allow_private)
        assert words in refused.value.detail
        conn.rollback()
        conn.execute("select service.bind_principal('acme', 'admin')")


def test_a_webhook_url_in_upper_case_is_read_and_kept_in_its_canonical_form(conn):
    """`HTTPS://Hooks.example.com/Path` was refused as "not an http:// or https:// URL"."""
    import msgspec

    from app.access import ensure_admin_principal
    from app.operations.owners import webhook_set_on
    from app.wire.bodies import WebhookIn

    conn.execute("select service.create_org('acme')")
    ensure_admin_principal(conn, "acme", "admin")
    conn.execute("select service.bind_principal('acme', 'admin')")
    hook = msgspec.json.decode(b'{"url": "HTTPS://Hooks.example.com/Path?Q=1"}', type=WebhookIn)
    assert webhook_set_on(conn, "acme", hook, allow_private=True).url == "https://Hooks.example.com/Path?Q=1"
    for bad in ("HTTPX://hooks.example.com/", "FTP://hooks.example.com/", "HTTPS:/hooks.example.com"):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(msgspec.json.encode({"url": bad}), type=WebhookIn)


def test_a_webhook_on_a_private_address_is_neither_set_nor_sent_to(conn, ingest, db_url):
    """An org writer may not make the service POST to loopback, link-local (a cloud's
    metadata service) or private addresses: the webhook is refused when set, and one
    stored before (or whose name now resolves there) is not sent to; the attempt is
    recorded with the reason. With the operator's CONTEXTS_WEBHOOK_ALLOW_PRIVATE it is."""
    from app.operations.errors import Invalid
    from app.operations.owners import webhook_set_on
    from app.wire.bodies import WebhookIn

    ids = stale_corpus(conn, ingest, "acme", "Promote the replica, then repoint DNS to it.")
    conn.execute("select service.bind_principal('acme', 'admin')")
    for url in (
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8000/documents",
        "http://[::1]:5432/",
        "http://0.0.0.0/",
        "http://2130706433/",
        "http://10.0.0.7/hook",
        "http://[::ffff:127.0.0.1]/",
        # IPv6 addresses that carry an IPv4 one a translator or tunnel would send to.
        "http://[64:ff9b::a9fe:a9fe]/h",
        "http://[64:ff9b::a00:1]/",
        "http://[2002:7f00:1::]/",
        "http://[::127.0.0.1]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
        "http://[64:ff9b:1::1]/",
    ):
        with pytest.raises(Invalid) as refused:
            webhook_set_on(conn, "acme", WebhookIn(url=url))
        assert "address: the service sends only to public addresses unless its operator sets" in refused.value.detail
    conn.rollback()
    with Receiver() as hook, transactions(db_url) as tx:
        set_webhook(conn, "acme", hook.url)  # stored as if set before the check existed
        report = deliver_pending(tx, retry_base_s=0.01)
        assert (report.delivered, report.failed, hook.received) == (0, len(ids), [])
        reasons = conn.execute("select distinct error from data.nudge_deliveries").fetchall()
        assert len(reasons) == 1 and reasons[0][0].startswith("not sent: the webhook's host 127.0.0.1 is 127.0.0.1")
        time.sleep(0.05)
        allowed = deliver_pending(tx, retry_base_s=0.01, allow_private=True)
        assert allowed.delivered == len(ids) and len(hook.received) == len(ids)
    conn.execute("select service.bind_principal('acme', 'admin')")
    shown = webhook_set_on(conn, "acme", WebhookIn(url=hook.url), allow_private=True)
    assert shown.url == hook.url
