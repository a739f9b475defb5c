"""The one content hash: how Evergreen tells that two texts are the same page text."""

from __future__ import annotations

import hashlib


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def content_hash(text: str) -> str:
    """SHA-256 hex digest of ``text`` with line endings normalised to ``\\n`` (nothing else)."""
    return hashlib.sha256(normalise_newlines(text).encode("utf-8")).hexdigest()
