"""How `synelo serve` runs uvicorn: the HTTP protocol, the limits on connections, the
timeouts, the open-file limit and the logging.

uvicorn as `serve` used to run it could be taken down by one client (issue 16): httptools
buffers a header of any size (a 64 MB header cost 400 MB and was answered 200); a connection
that sends nothing is kept for ever; and once the worker has as many connections as it may
open files, `accept()` fails, so that even `/healthz` goes unanswered. Hence:

- HTTP/1.1 is read by h11, whose buffer for an unfinished head is bounded (64 KiB here), with
  a check of each head line (16 KiB) and of the whole head once parsed: past either, 431;
- a request must arrive whole, head and body, within `SYNELO_TIMEOUT_REQUEST_S` of its first
  byte (of the connection, for the first request): past it, 408 and the connection closes,
  and a connection that sent nothing is closed;
- a connection idle between requests closes after `SYNELO_TIMEOUT_KEEP_ALIVE_S` (uvicorn);
- a worker holds at most `SYNELO_LIMIT_CONCURRENCY` connections, and fewer than it may open
  files: a connection past the limit closes the one idle longest (one with no request in
  flight: kept alive, or still sending its head), or, when every one is busy, is answered
  503. A request is served on its connection, so this bounds tasks too.

The soft limit on open files is first raised to the hard one.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from typing import Any

import h11
import orjson
import uvicorn
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState
from uvicorn.supervisors import Multiprocess

from synelo.config import Settings
from synelo.service.middleware.headers import security_headers
from synelo.service.middleware.metrics import CONNECTIONS_CLOSED

HEAD_LINE_MAX = 16 * 1024  # the request line, or one header line
HEAD_MAX = 64 * 1024  # the request line and every header line
FD_RESERVE = 128  # open files a worker needs besides its connections (database, logs, …)

log = logging.getLogger("synelo")


class ServeConfig(uvicorn.Config):
    """uvicorn's configuration and synelo's own limits, which the protocol reads from it
    (it is what uvicorn hands each connection, and what it sends to each worker)."""

    def __init__(
        self, app: str, *, timeout_request: float, max_connections: int, **kwargs: Any
    ) -> None:
        super().__init__(app, **kwargs)
        self.timeout_request = timeout_request
        self.max_connections = max_connections


class _Connection(h11.Connection):
    """h11's connection state, refusing a head with a line over `HEAD_LINE_MAX` or over
    `HEAD_MAX` in all (h11 itself bounds only a head not yet complete), and keeping the
    error, for the answer's status."""

    error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request):
                if _head_too_large(event):
                    raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
                if _framed_twice(event):
                    # RFC 9112 §6.1: h11 reads the body by Transfer-Encoding, as it should,
                    # but then keeps the connection; the server MUST close it after
                    # answering (a proxy before it may have framed the body by the other
                    # header: request smuggling). h11 then answers with Connection: close.
                    self._cstate.process_keep_alive_disabled()
        except h11.RemoteProtocolError as exc:
            self.error = exc
            raise
        return event


def _framed_twice(request: h11.Request) -> bool:
    """Whether the request has both Content-Length and Transfer-Encoding."""
    names = {name for name, _ in request.headers}  # h11 gives them lower-cased
    return b"content-length" in names and b"transfer-encoding" in names


def _head_too_large(request: h11.Request) -> bool:
    line = len(request.method) + len(request.target) + len(b"  HTTP/1.1")
    total = line + 2
    if line > HEAD_LINE_MAX:
        return True
    for name, value in request.headers.raw_items():
        line = len(name) + 2 + len(value)
        if line > HEAD_LINE_MAX:
            return True
        total += line + 2
    return total + 2 > HEAD_MAX


class SyneloH11(H11Protocol):
    """uvicorn's h11 protocol with synelo's limits (see the module's docstring)."""

    def __init__(
        self,
        config: ServeConfig,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.conn = _Connection(h11.SERVER, max_incomplete_event_size=HEAD_MAX)
        self.timeout_request = config.timeout_request
        self.max_connections = config.max_connections
        self.request_timer: asyncio.TimerHandle | None = None
        self.received = 0  # bytes of the request under way, while it is arriving
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.idle_since = self.loop.time()
        if len(self.connections) > self.max_connections and not self._close_longest_idle():
            _count("over_limit")
            transport.write(_answer(503, "too many connections: try again shortly"))
            transport.close()
            return
        self._start_request_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_request_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.request_timer is None and self.idle:
            self._start_request_timer()  # the next request on a kept-alive connection
        self.received += len(data)
        super().data_received(data)
        self._request_arrived()

    def on_response_complete(self) -> None:
        self.idle_since = self.loop.time()
        self._stop_request_timer()
        super().on_response_complete()  # may start a request that was pipelined
        if not self.idle and self.cycle.more_body:
            self._start_request_timer()

    def send_400_response(self, msg: str) -> None:
        """A head h11 refused: 431 when too large (counted), else 400; JSON either way."""
        error = self.conn.error if isinstance(self.conn, _Connection) else None
        status = error.error_status_hint if error is not None else 400
        if status == 431:
            _count("head_too_large")
            detail = f"request head over {HEAD_LINE_MAX} bytes a line or {HEAD_MAX} in all"
        else:
            detail = "invalid HTTP request"
        self._stop_request_timer()
        self.transport.write(_answer(status, detail))
        self.transport.close()

    def _should_upgrade(self) -> bool:
        """Never: synelo has no WebSocket routes (and uvicorn would log a warning for each
        upgrade it cannot make, a line a request for anyone to write)."""
        return False

    @property
    def idle(self) -> bool:
        """No request in flight: before the first, between two, or while a head arrives."""
        return self.cycle is None or self.cycle.response_complete

    def _request_arrived(self) -> None:
        """Stop the request's clock once it is all here, or once it is being answered."""
        cycle = self.cycle
        if not self.idle and (not cycle.more_body or cycle.response_started):
            self._stop_request_timer()

    def _start_request_timer(self) -> None:
        self._stop_request_timer()
        self.received = 0
        self.request_timer = self.loop.call_later(self.timeout_request, self._request_timeout)

    def _stop_request_timer(self) -> None:
        if self.request_timer is not None:
            self.request_timer.cancel()
            self.request_timer = None

    def _request_timeout(self) -> None:
        """The request did not arrive in time: 408 if it had begun, and close."""
        self.request_timer = None
        if self.transport.is_closing():
            return
        if not self.idle:
            if self.cycle.response_started:
                return  # the app answers without waiting for the rest
            self.cycle.disconnected = True  # the app's next receive() is a disconnect
            self.cycle.message_event.set()
        _count("timeout")
        if self.received:
            self.transport.write(
                _answer(408, f"the request did not arrive within {self.timeout_request:g} s")
            )
        self.transport.close()

    def _close_longest_idle(self) -> bool:
        """Close the connection idle the longest, other than this one; False if none is."""
        idle = (
            c
            for c in self.connections
            if c is not self
            and isinstance(c, SyneloH11)
            and c.idle
            and not c.transport.is_closing()
        )
        victim = min(idle, key=lambda c: c.idle_since, default=None)
        if victim is None:
            return False
        _count("evicted")
        victim._stop_request_timer()
        victim.transport.close()
        self.connections.discard(victim)  # now: its connection_lost comes later
        return True


_SECURITY = b"".join(name + b": " + value + b"\r\n" for name, value in security_headers())


def _answer(status: int, detail: str) -> bytes:
    """A whole JSON answer that closes the connection, written outside any ASGI cycle, with
    the security headers every answer of the app has (SecurityHeaders is not on this path)."""
    body = orjson.dumps({"detail": detail})
    return (
        (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n"
        ).encode()
        + _SECURITY
        + b"\r\n"
        + body
    )


def _count(reason: str) -> None:
    CONNECTIONS_CLOSED.labels(reason).inc()


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (its workers inherit
    it); return the soft limit in force."""
    try:
        import resource
    except ImportError:  # not a POSIX system: no such limit to raise
        return 1 << 16
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # "unlimited" is refused as a soft limit on some systems (macOS): ask for a large one
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY:
        return wanted
    if soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def max_connections(settings: Settings, open_files: int) -> int:
    """SYNELO_LIMIT_CONCURRENCY, lowered to what the open-file limit leaves room for."""
    room = max(16, open_files - FD_RESERVE)
    if settings.limit_concurrency > room:
        log.warning(
            "SYNELO_LIMIT_CONCURRENCY=%d is more than %d open files allow: using %d "
            "(raise the limit: LimitNOFILE= under systemd, ulimit -n otherwise)",
            settings.limit_concurrency,
            open_files,
            room,
        )
        return room
    return settings.limit_concurrency


def logging_config(log_level: str) -> dict[str, Any]:
    """uvicorn's logging, and synelo's loggers: "synelo" to standard error beside
    uvicorn's, and the access log ("synelo.access", when switched on) to standard output."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"]["synelo_access"] = {
        "formatter": "default",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stdout",
    }
    config["loggers"]["synelo"] = {
        "handlers": ["default"],
        "level": log_level.upper(),
        "propagate": False,
    }
    config["loggers"]["synelo.access"] = {
        "handlers": ["synelo_access"],
        "level": "INFO",
        "propagate": False,
    }
    return config


def serve_config(
    settings: Settings, *, host: str, port: int, workers: int, log_level: str, open_files: int
) -> ServeConfig:
    """The configuration `synelo serve` runs uvicorn with."""
    return ServeConfig(
        "synelo.service.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        http=SyneloH11,
        ws="none",
        timeout_request=settings.timeout_request_s,
        max_connections=max_connections(settings, open_files),
        timeout_keep_alive=settings.timeout_keep_alive_s,  # a float works (call_later)
        log_config=logging_config(log_level),
        log_level=log_level,
        access_log=False,  # synelo's own, on the "synelo.access" logger
        # uvicorn believes X-Forwarded-For from the proxies synelo's rate limits trust, no
        # others (not its own FORWARDED_ALLOW_IPS), so that both see the same client
        forwarded_allow_ips=settings.trusted_proxies,
    )


def serve(settings: Settings, *, host: str, port: int, workers: int, log_level: str) -> bool:
    """Run the service until it is stopped; False if it did not start."""
    open_files = raise_open_files_limit()
    config = serve_config(
        settings,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        open_files=open_files,
    )
    if config.workers > 1:
        with metrics_folder():
            Multiprocess(config, sockets=[config.bind_socket()]).run()
        return True
    server = uvicorn.Server(config)
    server.run()
    return server.started


@contextmanager
def metrics_folder() -> Iterator[str]:
    """A new folder for prometheus-client's multiprocess mode, in PROMETHEUS_MULTIPROC_DIR
    (any earlier value replaced: a folder from another run would add its counts), removed
    afterwards. The workers inherit it; prometheus_client reads it when they import it."""
    folder = tempfile.mkdtemp(prefix="synelo-metrics-")
    before = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    try:
        yield folder
    finally:
        if before is None:
            del os.environ["PROMETHEUS_MULTIPROC_DIR"]
        else:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = before
        shutil.rmtree(folder, ignore_errors=True)
