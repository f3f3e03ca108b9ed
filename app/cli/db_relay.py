"""The SQL door's relay, for when the embedded server is already running on its Unix
socket only (started by `contexts serve` or `make run`): `contexts db serve` then listens
on TCP itself and relays each connection to that socket, so it works in any order.

The socket trusts the superuser without a password (app/db/embedded.py's access rules);
every other login proves its password there as over TCP. So the relay reads each
connection's startup packet and refuses the superuser (and replication connections)
before anything reaches the server; encryption requests are answered "no" (the embedded
build has no TLS), as the server itself answers them."""

from __future__ import annotations

import asyncio
import struct
import threading

SSL_REQUEST, GSSENC_REQUEST, CANCEL_REQUEST = 80877103, 80877104, 80877102
MAX_STARTUP = 10_000
"""Longest startup packet accepted (PostgreSQL's own limit is 10,000 bytes)."""


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
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


class Relay:
    """Listens on (host, port) and relays to the Unix socket `socket_path`, refusing
    `superuser`. Runs in a thread of its own until stop()."""

    def __init__(self, host: str, port: int, socket_path: str, superuser: str) -> None:
        self.host, self.port, self.socket_path, self.superuser = host, port, socket_path, superuser
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._run, name="contexts-db-relay", daemon=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                packet = await _read_packet(reader)
                if packet is None:
                    writer.write(_error("invalid startup packet", "08P01"))
                    return
                (code,) = struct.unpack("!I", packet[4:8])
                if code in (SSL_REQUEST, GSSENC_REQUEST):
                    writer.write(b"N")  # no encryption: the client goes on in the clear or gives up
                    await writer.drain()
                    continue
                break
            if code != CANCEL_REQUEST:
                params = startup_parameters(packet)
                if params.get("user") == self.superuser:
                    writer.write(
                        _error(f"{self.superuser} connects only over the server's Unix socket, never over TCP")
                    )
                    return
                if params.get("replication", "false").lower() not in ("false", "0", "no", "off"):
                    writer.write(_error("replication connections are not relayed by `contexts db serve`"))
                    return
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(self.socket_path)
            upstream_writer.write(packet)
            await upstream_writer.drain()
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
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
