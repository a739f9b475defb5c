"""Writers: the offline extractive writer (default) and, when configured, an LLM."""

from __future__ import annotations

from core.domain.report_settings import WRITERS
from core.errors import EvergreenError
from core.writers.base import Writer

__all__ = ["WRITERS", "get_writer"]


def get_writer(name: str | None = None) -> Writer:
    """The writer called ``name``; None means the configured default (``EVERGREEN_LLM``)."""
    if name is None:
        from core.settings import get_settings

        name = get_settings().llm
    if name == "offline":
        from core.writers.offline import OfflineWriter

        return OfflineWriter()
    if name == "openai":
        from core.settings import get_settings
        from core.writers.llm import LlmWriter  # lazy: loads openai, only for this writer

        return LlmWriter.from_settings(get_settings())
    raise EvergreenError(f"Unknown writer {name!r}: choose one of {', '.join(WRITERS)}.")
