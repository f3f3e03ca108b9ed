"""`contexts db serve`'s TLS options refused before anything starts: a certificate
without its key, a file that is no certificate, a key that is not the certificate's."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from app.cli import main
from app.cli.db_relay import self_signed_certificate


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in ("CONTEXTS_DATABASE_URL", "CONTEXTS_HOME", "CONTEXTS_DB_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONTEXTS_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def serve(*args: str):
    return CliRunner().invoke(main, ["db", "serve", "--port", "1", *args])


def test_a_certificate_goes_with_its_key(home, tmp_path):
    own = self_signed_certificate(tmp_path / "own", "127.0.0.1")
    for args in (("--tls-cert", str(own.cert)), ("--tls-key", str(own.key))):
        done = serve(*args)
        assert done.exit_code == 2 and "--tls-cert and --tls-key go together" in done.output
    assert not home.exists()


def test_an_unusable_certificate_or_key_is_one_line(home, tmp_path, monkeypatch):
    import app.cli.db

    monkeypatch.setattr(app.cli.db, "port_problem", lambda host, port: None)  # the port is not the point here
    own = self_signed_certificate(tmp_path / "own", "127.0.0.1")
    other = self_signed_certificate(tmp_path / "other", "127.0.0.1")
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("not a certificate\n")
    cases = {
        ("--tls-cert", str(not_pem), "--tls-key", str(own.key)): "cannot read the certificate",
        ("--tls-cert", str(own.cert), "--tls-key", str(not_pem)): "cannot serve TLS with",
        ("--tls-cert", str(own.cert), "--tls-key", str(other.key)): "cannot serve TLS with",
    }
    for args, said in cases.items():
        done = serve(*args)
        assert done.exit_code == 1, done.output
        assert said in done.output and "Traceback" not in done.output
    assert not (home / "pgdata").exists()  # refused before starting anything
