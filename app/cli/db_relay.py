"""The SQL door: `contexts db serve` listens on TCP and relays each connection to the
embedded server's Unix socket, whoever started that server and whenever (ADR 0035).

The embedded PostgreSQL build has no TLS (no OpenSSL: `show ssl_library` is empty), so
the relay speaks it: it answers a client's SSLRequest "yes", wraps its side of the
connection in TLS (1.2 or later) and relays the plaintext to the socket, which never
leaves the machine. A client that does not ask for TLS is refused with a FATAL saying
how to connect (only a cancel request, which carries no secret but the backend's key,
passes in the clear, as PostgreSQL itself lets it). GSSAPI encryption is answered "no".

The socket trusts the superuser without a password (app/db/embedded.py's access rules);
every other login proves its password there as over TCP. So the relay reads each
connection's startup packet and refuses the superuser (and replication connections)
before anything reaches the server.

The certificate: a self-signed one made on first start under CONTEXTS_HOME/tls (its key
mode 0600) and reused afterwards, or one's own (`--tls-cert`, `--tls-key`)."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import ipaddress
import socket
import ssl
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

from app.db.service_login import SERVICE_LOGIN
from app.private import write_private

SSL_REQUEST, GSSENC_REQUEST, CANCEL_REQUEST = 80877103, 80877104, 80877102
MAX_STARTUP = 10_000
"""Longest startup packet accepted (PostgreSQL's own limit is 10,000 bytes)."""
CERT_FILE, KEY_FILE = "server.crt", "server.key"
"""The self-signed certificate and its key, under CONTEXTS_HOME/tls."""
CERT_DAYS = 3650


class TlsError(RuntimeError):
    """A certificate or key that cannot serve TLS (unreadable, not PEM, not a pair)."""


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    self_signed: bool
    fingerprint: str
    """SHA-256 of the certificate (DER), as `openssl x509 -fingerprint -sha256` prints it."""
    not_after: datetime.datetime


def _load(cert: Path, key: Path, self_signed: bool) -> Certificate:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    except (OSError, ValueError) as exc:
        raise TlsError(f"cannot read the certificate {cert}: {exc}") from exc
    digest = hashlib.sha256(loaded.public_bytes(Encoding.DER)).hexdigest().upper()
    fingerprint = ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
    return Certificate(cert, key, self_signed, fingerprint, loaded.not_valid_after_utc)


def _names(host: str) -> list:
    """The certificate's subject alternative names: this machine's name, localhost, the
    loopback addresses and the listen address when it is one (for sslmode=verify-full)."""
    from cryptography import x509

    dns = {"localhost", socket.gethostname(), socket.getfqdn()}
    addresses = {"127.0.0.1", "::1"}
    if host not in ("", "*"):
        for part in host.split(","):
            part = part.strip()
            try:
                addresses.add(str(ipaddress.ip_address(part)))
            except ValueError:
                if part:
                    dns.add(part)
    return [x509.DNSName(d) for d in sorted(d for d in dns if d)] + [
        x509.IPAddress(ipaddress.ip_address(a)) for a in sorted(addresses)
    ]


def self_signed_certificate(home: Path, host: str) -> Certificate:
    """The door's self-signed certificate under home/tls: made on first use (an ECDSA
    P-256 key, mode 0600; valid ten years), read afterwards."""
    folder = home / "tls"
    cert, key = folder / CERT_FILE, folder / KEY_FILE
    if cert.exists() and key.exists():
        return _load(cert, key, self_signed=True)
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"contexts db serve on {socket.gethostname()}")])
    now = datetime.datetime.now(datetime.UTC)
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=CERT_DAYS))
        .add_extension(x509.SubjectAlternativeName(_names(host)), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(private, hashes.SHA256())
    )
    pem_key = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # The key first (a certificate without its key is made again), each written whole
    # and renamed into place, owner-only: a crash leaves no half file.
    write_private(key, pem_key.decode("ascii"))
    write_private(cert, made.public_bytes(serialization.Encoding.PEM).decode("ascii"))
    return _load(cert, key, self_signed=True)


def given_certificate(cert: Path, key: Path) -> Certificate:
    return _load(cert, key, self_signed=False)


def server_context(certificate: Certificate) -> ssl.SSLContext:
    """A server-side TLS context (TLS 1.2 or later) with the certificate and its key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certificate.cert, certificate.key)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(
            f"cannot serve TLS with {certificate.cert} and {certificate.key}: {getattr(exc, 'strerror', None) or exc}"
        ) from exc
    context.set_alpn_protocols(["postgresql"])  # what libpq 17 and later offer
    return context


def _error(message: str, code: str = "28000") -> bytes:
    fields = b"".join(
        k + v.encode() + b"\0" for k, v in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message))
    )
    body = fields + b"\0"
    return b"E" + struct.pack("!I", len(body) + 4) + body


def startup_parameters(packet: bytes) -> dict[str, str]:
    """The key/value pairs of a startup packet (after its length and protocol version)."""
    parts = packet[8:].split(b"\0")
    return {
        parts[i].decode(errors="replace"): parts[i + 1].decode(errors="replace")
        for i in range(0, len(parts) - 1, 2)
        if parts[i]
    }


async def _read_packet(reader: asyncio.StreamReader) -> bytes | None:
    head = await reader.readexactly(4)
    (length,) = struct.unpack("!I", head)
    if length < 8 or length > MAX_STARTUP:
        return None
    return head + await reader.readexactly(length - 4)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        writer.close()


PLAINTEXT_REFUSED = (
    "the SQL door of Contexts (`contexts db serve`) accepts TLS connections only: connect with sslmode=require "
    "(or sslmode=verify-ca and the sslrootcert `contexts db serve` printed)"
)


SERVICE_REFUSED = (
    f"{SERVICE_LOGIN} is the service's own login: it connects over the server's Unix socket, never through the SQL "
    "door, which is for analysts' and auditors' logins (`contexts analyst create`)"
)


class Relay:
    """Listens on (host, port), speaks TLS to clients with `tls` and relays to the Unix
    socket `socket_path`, refusing `superuser`. Runs in a thread of its own until stop()."""

    def __init__(self, host: str, port: int, socket_path: str, superuser: str, tls: ssl.SSLContext) -> None:
        self.host, self.port, self.socket_path, self.superuser, self.tls = host, port, socket_path, superuser, tls
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._run, name="contexts-db-relay", daemon=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        encrypted = False
        try:
            while True:
                packet = await _read_packet(reader)
                if packet is None:
                    writer.write(_error("invalid startup packet", "08P01"))
                    return
                (code,) = struct.unpack("!I", packet[4:8])
                if code in (SSL_REQUEST, GSSENC_REQUEST) and encrypted:
                    writer.write(_error("an encryption request inside TLS", "08P01"))
                    return
                if code == SSL_REQUEST:
                    writer.write(b"S")  # TLS: the client's handshake follows
                    await writer.drain()
                    await writer.start_tls(self.tls)
                    encrypted = True
                    continue
                if code == GSSENC_REQUEST:
                    writer.write(b"N")  # no GSSAPI encryption: the client asks for TLS next, or gives up
                    await writer.drain()
                    continue
                break
            if code != CANCEL_REQUEST:
                params = startup_parameters(packet)
                if not encrypted:
                    writer.write(_error(PLAINTEXT_REFUSED))
                    return
                if params.get("user") == self.superuser:
                    writer.write(
                        _error(f"{self.superuser} connects only over the server's Unix socket, never over TCP")
                    )
                    return
                if params.get("user") == SERVICE_LOGIN:
                    writer.write(_error(SERVICE_REFUSED))
                    return
                if params.get("replication", "false").lower() not in ("false", "0", "no", "off"):
                    writer.write(_error("replication connections are not relayed by `contexts db serve`"))
                    return
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(self.socket_path)
            upstream_writer.write(packet)
            await upstream_writer.drain()
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError, OSError):  # ssl.SSLError is an OSError
            pass
        finally:
            writer.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, None if self.host in ("*", "") else self.host, self.port)
            )
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        if self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
