"""Fault-injection points for crash tests (a testing aid, off unless configured).

``EVERGREEN_FAULTS="kill@fetch:3"`` makes the process kill itself with SIGKILL the third
time it reaches the ``fetch`` point; ``raise@write:1`` raises RuntimeError instead;
``pause@fetch:2`` holds the thread there — having written ``paused-<pid>`` into the
folder ``EVERGREEN_FAULTS_DIR`` — until a file ``release`` appears in it, so a test can
kill, cancel or watch a run that is held mid-way by a real worker process.
Points: ``fetch`` (a page was fetched), ``write`` (before a writer call), ``commit``
(inside the version commit, before the transaction ends).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

ENV_DIR = "EVERGREEN_FAULTS_DIR"
_hits: Counter[str] = Counter()
_lock = threading.Lock()


def point(name: str) -> None:
    spec = os.environ.get("EVERGREEN_FAULTS")
    if not spec:
        return
    with _lock:
        _hits[name] += 1
        count = _hits[name]
    for rule in spec.split(","):
        action, _, rest = rule.strip().partition("@")
        where, _, nth = rest.partition(":")
        if where == name and count == int(nth or 1):
            if action == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if action == "raise":
                raise RuntimeError(f"injected fault at {name} #{count}")
            if action == "pause":
                _pause()


def _pause() -> None:
    folder = Path(os.environ.get(ENV_DIR) or ".")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"paused-{os.getpid()}").write_text(str(os.getpid()), encoding="utf-8")
    while not (folder / "release").exists():
        time.sleep(0.05)
