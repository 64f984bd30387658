"""Faults on the real HTTP path: a loopback proxy in front of the service that can refuse a
request, answer it with a 503 without forwarding it, or forward it and lose the response
(the service has applied it; the client sees the connection close without an answer).

It speaks just enough HTTP/1.1 for synelo's API: keep-alive, bodies with Content-Length.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Literal

Verdict = Literal["pass", "fail", "drop", "down"]
Decide = Callable[[str, str, bytes], Verdict]

_UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b'content-length: 35\r\n\r\n{"detail": "injected: unavailable"}'
)


def _read_message(sock: socket.socket, buffer: bytearray) -> bytes | None:
    """One HTTP message (head and Content-Length body) from `sock`; None at EOF."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    end = buffer.index(b"\r\n\r\n") + 4
    length = 0
    for line in bytes(buffer[:end]).split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        elif name.strip().lower() == b"transfer-encoding":
            raise ValueError("chunked messages are not supported by the fault proxy")
    while len(buffer) < end + length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    message = bytes(buffer[: end + length])
    del buffer[: end + length]
    return message


class FaultProxy:
    """Listens on 127.0.0.1 (an ephemeral port) and forwards to `upstream` (host, port).

    `decide(method, path, body)` judges every request: "pass" forwards it, "fail" answers 503
    without forwarding, "drop" forwards it and closes the client's connection instead of
    answering, "down" closes the connection without forwarding. `down = True` makes every
    request "down" (the service unreachable)."""

    def __init__(self, upstream: tuple[str, int], decide: Decide | None = None) -> None:
        self.upstream = upstream
        self.decide: Decide = decide or (lambda _m, _p, _b: "pass")
        self.down = False
        self.counts = {"pass": 0, "fail": 0, "drop": 0, "down": 0}
        self.retry_after: int | None = None  # a "fail" answer's Retry-After seconds
        self.connections = 0  # client connections accepted
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name="fault-proxy").start()

    def _unavailable(self) -> bytes:
        """The injected 503, with `retry_after` as its Retry-After header when set."""
        if self.retry_after is None:
            return _UNAVAILABLE
        head, body = _UNAVAILABLE.split(b"\r\n\r\n", 1)
        return head + f"\r\nretry-after: {self.retry_after}".encode() + b"\r\n\r\n" + body

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        inbox, outbox = bytearray(), bytearray()
        try:
            while True:
                request = _read_message(conn, inbox)
                if request is None:
                    return
                line = request.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
                body = request[request.index(b"\r\n\r\n") + 4 :]
                verdict: Verdict = "down" if self.down else self.decide(line[0], line[1], body)
                with self._lock:
                    self.counts[verdict] += 1
                if verdict == "down":
                    return
                if verdict == "fail":
                    conn.sendall(self._unavailable())
                    continue
                if upstream is None:
                    upstream = socket.create_connection(self.upstream, timeout=30)
                upstream.sendall(request)
                response = _read_message(upstream, outbox)
                if response is None or verdict == "drop":
                    return  # applied (or the service went away): the answer is lost
                conn.sendall(response)
        except OSError:
            return
        finally:
            conn.close()
            if upstream is not None:
                upstream.close()
