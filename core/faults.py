"""Fault-injection points for crash tests (a testing aid, off unless configured).

``EVERGREEN_FAULTS="kill@fetch:3"`` makes the process kill itself with SIGKILL the third
time it reaches the ``fetch`` point; ``raise@write:1`` raises RuntimeError instead.
Points: ``fetch`` (a page was fetched), ``write`` (before a writer call), ``commit``
(inside the version commit, before the transaction ends).
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter

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
