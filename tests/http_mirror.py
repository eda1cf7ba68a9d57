"""A real HTTP server on 127.0.0.1 for download tests and benchmarks, with Range support
and injectable faults.

It serves files (or bytes) under URL paths — the official paths of the registry, so that
``--mirror`` rewriting is exercised — and can, per path: drop the connection after a
given number of bytes (once per listed offset, then serve normally), flip a byte
(corruption), ignore ``Range`` like ``python -m http.server``, stall after some bytes
until ``release`` is set, or hold each request until ``gate`` requests are in flight at
once (to show downloads run concurrently). Every
request is logged as ``(path, range header, status)``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# the official URL path of NQ-open dev (the registry's), served by the tests' mirrors
NQ_OPEN_PATH = "/google-research-datasets/natural-questions/master/nq_open/NQ-open.dev.jsonl"


@dataclass
class Fault:
    drops: list[int] = field(default_factory=list)  # absolute offsets: one drop per request
    corrupt_at: int | None = None  # flip the byte at this offset (every response)
    ignore_range: bool = False  # answer 200 with the whole file, like python -m http.server
    stall_after: int | None = None  # send this many bytes, then wait for server.release


class MirrorServer:
    """``with MirrorServer({"/path/file": Path(...)}) as s: s.url ...``"""

    def __init__(self, files: dict[str, Path | bytes], *, gate: int = 0,
                 chunk: int = 64 << 10) -> None:
        self.files = files
        self.faults: dict[str, Fault] = {}
        self.log: list[tuple[str, str | None, int]] = []
        self.chunk = chunk
        # The gate's timeout only ends a test whose downloads never run concurrently (a
        # hang is the failure): generous, since on a loaded machine the client's threads
        # may take long to reach it.
        self.gate = threading.Barrier(gate, timeout=120) if gate > 1 else None
        # Lets stalled responses go on; set by the test or when the server stops, never by
        # a timer: a stall that ended by itself could complete a download the test is
        # about to interrupt.
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server._serve(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> MirrorServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def _content(self, path: str) -> bytes | None:
        item = self.files.get(path)
        if item is None:
            return None
        return item if isinstance(item, bytes) else Path(item).read_bytes()

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        rng = h.headers.get("Range")
        data = self._content(path)
        if data is None:
            self.log.append((path, rng, 404))
            h.send_error(404, "Not Found")
            return
        fault = self.faults.get(path, Fault())
        if fault.corrupt_at is not None and fault.corrupt_at < len(data):
            i = fault.corrupt_at
            data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
        start = 0
        status = 200
        if rng and not fault.ignore_range and rng.startswith("bytes="):
            first = rng[6:].split("-")[0]
            start = int(first)
            if start >= len(data):
                self.log.append((path, rng, 416))
                h.send_response(416)
                h.send_header("Content-Range", f"bytes */{len(data)}")
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            status = 206
        with self._lock:
            drop = fault.drops.pop(0) if fault.drops else None
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.log.append((path, rng, status))
        try:
            if self.gate is not None:
                self.gate.wait()
            h.send_response(status)
            h.send_header("Content-Length", str(len(data) - start))
            h.send_header("Accept-Ranges", "bytes")
            if status == 206:
                h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            h.end_headers()
            end = len(data) if drop is None or drop <= start else min(drop, len(data))
            stall = fault.stall_after
            pos = start
            while pos < end:
                n = min(self.chunk, end - pos)
                if stall is not None and pos < stall:
                    n = min(n, stall - pos)
                h.wfile.write(data[pos:pos + n])
                pos += n
                if stall is not None and pos == stall:
                    h.wfile.flush()
                    self.release.wait()
            h.wfile.flush()
            if drop is not None and end < len(data):
                with contextlib.suppress(OSError):
                    h.connection.shutdown(socket.SHUT_RDWR)
                h.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.in_flight -= 1


_REFUSING: list[socket.socket] = []  # bound for the whole run, never listening


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused).

    Its port stays bound by this process without listening, so connections are refused
    (Linux answers them with a reset) and no other process can take the port meanwhile.
    """
    if not _REFUSING:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        _REFUSING.append(s)
    return f"http://127.0.0.1:{_REFUSING[0].getsockname()[1]}"


@contextlib.contextmanager
def serving(files: dict[str, Path | bytes], **kw: int) -> Iterator[MirrorServer]:
    with MirrorServer(files, **kw) as s:
        yield s
