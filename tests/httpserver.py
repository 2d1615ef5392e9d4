"""A loopback HTTP server for tests: serves in-memory files, honours Range, injects faults.

Usage::

    with serve({"/a.txt": b"hello"}, faults={"/a.txt": {"status": 500, "times": 2}}) as srv:
        download(srv.url("/a.txt"), tmp_path / "a.txt", backoff=0.01)
        assert [r.status for r in srv.requests] == [500, 500, 200]

Faults, per path (all optional, combinable):

- ``"status": int`` with ``"times": int | None``: answer the first ``times`` requests
  (every request when ``times`` is None or missing) with that status and a short body.
- ``"truncate_at": int`` with ``"truncate_times": int`` (default 1): for the first
  ``truncate_times`` successful responses, announce the full length but send only the
  first ``truncate_at`` bytes of the body, then close the connection.
- ``"ignore_range": True``: answer 200 with the whole body even when a Range is asked.
- ``"stall": float`` with ``"stall_at": int | None`` and ``"stall_times": int`` (default
  1): for the first ``stall_times`` requests, go silent for ``stall`` seconds (before the
  status line when ``stall_at`` is None, else after ``stall_at`` bytes of the body), then
  close the connection without sending the rest; a stalled server, for client timeouts.
- ``"headers": dict[str, str]``: extra response headers.

Paths are matched without their query string; unknown paths answer 404. Every request is
logged in ``.requests`` (method, path, query, Range header, status answered).

:func:`hf_server_files` lays out a Hugging Face Hub model repository (the API's file list
and the resolve URLs at :data:`HF_SHA`) as files for :func:`serve`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: str
    range: str | None
    headers: dict[str, str]
    status: int


@dataclass
class Server:
    """Handle yielded by :func:`serve`: the base URL, the files, the faults and the log."""

    base: str
    files: dict[str, bytes]
    faults: dict[str, dict[str, Any]]
    requests: list[Request] = field(default_factory=list)
    _counts: dict[tuple[str, str], int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        """Absolute URL of ``path`` (which starts with ``/``) on this server."""
        if not path.startswith("/"):
            path = "/" + path
        return self.base + path

    def requests_for(self, path: str) -> list[Request]:
        """The logged requests for one path, in order."""
        return [r for r in self.requests if r.path == path]

    def _bump(self, path: str, kind: str) -> int:
        """Count one event of ``kind`` for ``path``; return how many happened before it."""
        with self._lock:
            n = self._counts.get((path, kind), 0)
            self._counts[(path, kind)] = n + 1
            return n

    def _log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


def _make_handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def do_HEAD(self) -> None:
            self._respond(send_body=False)

        def do_GET(self) -> None:
            self._respond(send_body=True)

        def _log(self, path: str, query: str, status: int) -> None:
            server._log(
                Request(
                    method=self.command,
                    path=path,
                    query=query,
                    range=self.headers.get("Range"),
                    headers=dict(self.headers.items()),
                    status=status,
                )
            )

        def _simple(self, path: str, query: str, status: int, extra: dict[str, str]) -> None:
            body = f"status {status} for {path}\n".encode()
            self._log(path, query, status)
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _respond(self, *, send_body: bool) -> None:
            parts = urlsplit(self.path)
            path, query = parts.path, parts.query
            fault = server.faults.get(path, {})
            extra = dict(fault.get("headers", {}))
            stall = fault.get("stall") is not None and server._bump(path, "stall") < int(
                fault.get("stall_times", 1)
            )
            if stall and fault.get("stall_at") is None:
                self._log(path, query, 0)  # 0: no answer
                time.sleep(float(fault["stall"]))
                self.close_connection = True
                return

            if "status" in fault:
                times = fault.get("times")
                if times is None or server._bump(path, "status") < times:
                    self._simple(path, query, int(fault["status"]), extra)
                    return

            data = server.files.get(path)
            if data is None:
                self._simple(path, query, 404, extra)
                return

            total = len(data)
            start, end = 0, total - 1
            status = 200
            range_header = self.headers.get("Range")
            if range_header and not fault.get("ignore_range"):
                match = _RANGE_RE.match(range_header.strip())
                if match and (match.group(1) or match.group(2)):
                    first, last = match.group(1), match.group(2)
                    if first:
                        start = int(first)
                        end = min(int(last), total - 1) if last else total - 1
                    else:  # suffix range: the last N bytes
                        start, end = max(total - int(last), 0), total - 1
                    if start >= total or start > end:
                        self._simple(
                            path, query, 416, {**extra, "Content-Range": f"bytes */{total}"}
                        )
                        return
                    status = 206
            body = data[start : end + 1]

            truncate_at = fault.get("truncate_at")
            truncate = truncate_at is not None and server._bump(path, "truncate") < int(
                fault.get("truncate_times", 1)
            )

            self._log(path, query, status)
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(body)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{total}")
            if truncate or stall:
                self.send_header("Connection", "close")
            self.end_headers()
            if not send_body:
                return
            if stall:
                self.wfile.write(body[: int(fault["stall_at"])])
                self.wfile.flush()
                time.sleep(float(fault["stall"]))
                self.close_connection = True
                return
            if truncate:
                self.wfile.write(body[: int(truncate_at)])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def serve(
    files: dict[str, bytes], faults: dict[str, dict[str, Any]] | None = None
) -> Iterator[Server]:
    """Serve ``files`` (path -> bytes) on 127.0.0.1 at a free port for the ``with`` body."""
    state = Server(base="", files=dict(files), faults=dict(faults or {}))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    httpd.daemon_threads = True
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


#: The commit every repository of :func:`hf_server_files` is at.
HF_SHA = "0123456789abcdef0123456789abcdef01234567"


def hf_server_files(repo: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """Served paths of a Hub model repository ``repo`` holding ``files`` (name -> bytes):
    ``/api/models/<repo>/revision/main`` (sha and siblings, with LFS size and sha256 of
    the safetensors) and ``/<repo>/resolve/<HF_SHA>/<name>``."""
    siblings = []
    for name, data in files.items():
        entry: dict[str, object] = {"rfilename": name}
        if name.endswith(".safetensors"):
            entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        siblings.append(entry)
    api = json.dumps({"id": repo, "sha": HF_SHA, "siblings": siblings}).encode()
    served = {f"/api/models/{repo}/revision/main": api}
    served.update({f"/{repo}/resolve/{HF_SHA}/{name}": data for name, data in files.items()})
    return served
