"""The sample corpus: the pages shipped with Evergreen, imported on first use."""

from __future__ import annotations

from typing import Any

from core import config
from core.errors import NotFoundError
from core.source_spec import SAMPLE_CORPUS
from core.sources.corpus import add_corpus


def ensure_sample_corpus() -> dict[str, Any]:
    """Import the sample pages into the ``sample`` corpus (idempotent)."""
    pages = config.sample_dir() / "pages"
    if not pages.is_dir():
        raise NotFoundError(f"The sample workspace is missing ({pages}); reinstall Evergreen.")
    return add_corpus(SAMPLE_CORPUS, pages).as_dict()
