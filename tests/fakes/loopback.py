"""A tiny threaded HTTP server on 127.0.0.1 for fakes (stdlib only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[["Request"], "Reply"]


class Request:
    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class Reply:
    def __init__(
        self,
        status: int = 200,
        body: bytes | str | Any = b"",
        headers: dict[str, str] | None = None,
        content_type: str | None = None,
    ) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, bytes):
            body = json.dumps(body).encode("utf-8")
            content_type = content_type or "application/json"
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.content_type = content_type or "text/plain; charset=utf-8"


class LoopbackServer:
    """Serve ``handler`` on 127.0.0.1 at a free port in a daemon thread."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        outer = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                reply = outer.handler(req)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(reply.body)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. a timeout test)

            do_GET = do_POST = do_HEAD = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
