"""A counting proxy on 127.0.0.1 in front of a real local server: the chat-completions bodies the kit really sent
(``.posted``) and the server's own token counts (``.usages``)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CountingProxy"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: CountingProxy


class _Forward(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:
        return

    def _relay(self, body: bytes | None) -> None:
        owner = self.server.owner
        req = urllib.request.Request(owner.target + self.path, data=body, method=self.command,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=owner.timeout_s) as resp:  # noqa: S310 - loopback
                status, data = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        except OSError:
            self.close_connection = True
            return
        if body is not None and self.path.endswith("/chat/completions") and status == 200:
            try:
                usage = json.loads(data).get("usage") or {}
            except ValueError:
                usage = {}
            with owner._lock:
                owner.usages.append(usage)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._relay(None)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/chat/completions"):
            with self.server.owner._lock:
                self.server.owner.posted.append(json.loads(body))
        self._relay(body)


class CountingProxy:
    """Forwards to ``target``; ``posted`` (request bodies) and ``usages`` (answers' usage) grow as calls pass."""

    def __init__(self, target: str, *, timeout_s: float = 900.0) -> None:
        self.target = target.rstrip("/")
        self.timeout_s = timeout_s
        self.posted: list[dict[str, Any]] = []
        self.usages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Forward)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> CountingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
