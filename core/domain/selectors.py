"""Selectors: where a passage of a page is, kept the way web annotations keep it.

A W3C Web Annotation ``TextQuoteSelector`` (``exact`` + ``prefix`` + ``suffix``) with a
``TextPositionSelector``-style hint (``start``), the way hypothes.is anchors annotations:
what a claim's anchor stores (:mod:`core.domain.anchors`) and what re-finding it in a newer text
starts from (:mod:`core.domain.relocate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONTEXT = 32  # characters of prefix / suffix kept with a quote


@dataclass(frozen=True)
class Selector:
    """A TextQuoteSelector (exact, prefix, suffix) with a position hint (start)."""

    exact: str
    prefix: str = ""
    suffix: str = ""
    start: int = -1

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": "TextQuoteSelector",
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
            "start": self.start,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Selector:
        return cls(
            exact=str(data.get("exact", "")),
            prefix=str(data.get("prefix", "")),
            suffix=str(data.get("suffix", "")),
            start=int(data.get("start", -1)),
        )

    @classmethod
    def at(cls, content: str, start: int, end: int) -> Selector:
        return cls(
            exact=content[start:end],
            prefix=content[max(0, start - CONTEXT) : start],
            suffix=content[end : end + CONTEXT],
            start=start,
        )
