"""A fake Tavily API on 127.0.0.1: POST /search answered from a function of the request.

Every request body and header is kept; `expect_dates` makes the server answer HTTP 400
(as a strict API would) when a request lacks the expected start_date / end_date, and
records the mismatch so a test can assert on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.fakes.loopback import LoopbackServer, Reply, Request

Results = Callable[[dict[str, Any]], list[dict[str, Any]]]


class FakeTavily:
    def __init__(self, results: Results | list[dict[str, Any]], *, key: str = "tvly-test") -> None:
        self.results = results if callable(results) else (lambda _body: list(results))
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.mismatches: list[str] = []
        self.expected: dict[str, str | None] | None = None
        self.fail_with: int | None = None
        self.fail_times: int | None = None  # fail only this many requests (None: all)
        self._lock = threading.Lock()
        self.server = LoopbackServer(self._handle)

    @property
    def url(self) -> str:
        return self.server.url

    def expect_dates(self, start_date: str | None, end_date: str | None) -> None:
        self.expected = {"start_date": start_date, "end_date": end_date}

    def __enter__(self) -> FakeTavily:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def _handle(self, req: Request) -> Reply:
        body = req.json() or {}
        with self._lock:
            self.requests.append(body)
            self.headers.append(req.headers)
        if req.path != "/search" or req.method != "POST":
            return Reply(404, {"detail": {"error": "not found"}})
        if req.headers.get("authorization") != f"Bearer {self.key}":
            return Reply(401, {"detail": {"error": f"Unauthorized: invalid key {req.headers}"}})
        if self.fail_with and (self.fail_times is None or self.fail_times > 0):
            if self.fail_times is not None:
                self.fail_times -= 1
            return Reply(self.fail_with, {"detail": {"error": "scripted failure"}})
        if self.expected is not None:
            for k, v in self.expected.items():
                if body.get(k) != v:
                    with self._lock:
                        self.mismatches.append(f"{k}={body.get(k)!r}, expected {v!r}")
                    return Reply(400, {"detail": {"error": f"{k} mismatch"}})
        hits = self.results(body)[: int(body.get("max_results") or 5)]
        if not body.get("include_raw_content"):
            hits = [{k: v for k, v in h.items() if k != "raw_content"} for h in hits]
        return Reply(
            200,
            {"query": body.get("query"), "results": hits, "response_time": 0.01},
        )
