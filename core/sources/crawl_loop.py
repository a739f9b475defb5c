"""The one asyncio event loop, in a daemon thread, that all web crawling runs on: the
engine calls the web fetcher from worker threads, which submit to this loop and wait."""

from __future__ import annotations

import asyncio
import threading

_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def shared_loop() -> asyncio.AbstractEventLoop:
    """The one event loop (in a daemon thread) all crawling runs on. One per process,
    not per fetcher: crawl4ai keeps class-level asyncio locks bound to the first loop
    that uses them, so a second loop would fail under contention."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="evergreen-web", daemon=True).start()
            _LOOP = loop
        return _LOOP
