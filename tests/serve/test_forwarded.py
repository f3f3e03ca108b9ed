"""Behind a reverse proxy (docs/http-tls.md): `contexts serve` takes the client's address
and scheme from X-Forwarded-For and X-Forwarded-Proto only when the connection comes
from a peer in forwarded_allow_ips (--forwarded-allow-ips, CONTEXTS_FORWARDED_ALLOW_IPS);
from any other peer the headers are ignored, and a list it cannot read is refused."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from app.cli import main
from app.settings import Settings
from tests.serve.test_serve import in_thread

FORWARDED = {"X-Forwarded-For": "198.51.100.1, 203.0.113.7", "X-Forwarded-Proto": "https"}
"""A client (198.51.100.1) behind a proxy (203.0.113.7) behind the one that connects."""


async def who_app(scope, receive, send) -> None:
    """Says which client and scheme the server handed the application."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = json.dumps({"client": scope["client"][0], "scheme": scope["scheme"]}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def seen(forwarded_allow_ips: str | None) -> dict:
    """What the application sees of a forwarded request from 127.0.0.1."""
    settings = Settings() if forwarded_allow_ips is None else Settings(forwarded_allow_ips=forwarded_allow_ips)
    settings.validate()
    with in_thread(who_app, settings, 10) as port:
        return httpx.get(f"http://127.0.0.1:{port}/", headers=FORWARDED, trust_env=False).json()


@pytest.mark.parametrize("trusted", [None, "127.0.0.1", "127.0.0.0/8, 10.0.0.0/8"])
def test_a_trusted_proxy_names_the_client_and_scheme(trusted):
    """The default trusts a proxy on the same host. The client is the nearest address in
    the chain that is not a trusted proxy itself (here the outer proxy, 203.0.113.7: the
    address the first one's peer really had)."""
    assert seen(trusted) == {"client": "203.0.113.7", "scheme": "https"}


@pytest.mark.parametrize("trusted", ["", "10.0.0.0/8", "::1", "192.0.2.1"])
def test_other_peers_cannot_say_who_they_are(trusted):
    assert seen(trusted) == {"client": "127.0.0.1", "scheme": "http"}


@pytest.mark.parametrize("trusted", ["127.0.0.1, 203.0.113.0/24", "*"])
def test_the_whole_chain_may_be_trusted(trusted):
    """`*` believes any peer and every proxy in the chain: only for a service that no one
    but its proxies can reach."""
    assert seen(trusted) == {"client": "198.51.100.1", "scheme": "https"}


@pytest.mark.parametrize(
    "wrong", ["proxy.internal", "10.0.0.1/8", "127.0.0.1, 300.1.2.3", "*, 10.0.0.1", "10.0.0.0/33"]
)
def test_a_list_that_cannot_be_read_is_refused(wrong):
    """uvicorn would take such an entry as a name no peer matches, trusting nobody in silence."""
    with pytest.raises(ValueError, match="CONTEXTS_FORWARDED_ALLOW_IPS"):
        Settings.from_env({"CONTEXTS_FORWARDED_ALLOW_IPS": wrong})
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--forwarded-allow-ips", wrong])
    assert result.exit_code != 0 and "--forwarded-allow-ips" in result.output, result.output
    assert "is neither" in result.output


def test_the_setting_reads_from_the_environment():
    assert (
        Settings.from_env({"CONTEXTS_FORWARDED_ALLOW_IPS": "10.1.0.0/16,::1"}).forwarded_allow_ips == "10.1.0.0/16,::1"
    )
    assert Settings.from_env({}).forwarded_allow_ips == "127.0.0.1,::1"
