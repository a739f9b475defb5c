"""Writers: the offline extractive writer (default) and, when configured, an LLM."""

from __future__ import annotations

from core.errors import EvergreenError
from core.writers.base import Writer


def get_writer(name: str = "offline") -> Writer:
    if name == "offline":
        from core.writers.offline import OfflineWriter

        return OfflineWriter()
    raise EvergreenError(f"Unknown writer {name!r}: this build has the 'offline' writer.")
