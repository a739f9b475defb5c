"""Where a workspace lives: the database URL and the corpus index folder.

One place decides; the CLI's ``--db`` and the app pass overrides in here.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_HOME = "EVERGREEN_HOME"
ENV_DB = "EVERGREEN_DB"


def workspace_dir() -> Path:
    """The workspace folder: ``$EVERGREEN_HOME``, else ``./data``."""
    return Path(os.environ.get(ENV_HOME) or "data").expanduser()


def database_url(override: str | None = None) -> str:
    """Any SQLAlchemy URL; by default a SQLite file in the workspace."""
    url = override or os.environ.get(ENV_DB)
    if url:
        if "://" not in url:  # a plain path is taken as a SQLite file
            return f"sqlite:///{Path(url).expanduser()}"
        return url
    return f"sqlite:///{workspace_dir() / 'evergreen.db'}"


def corpora_dir() -> Path:
    """Local temporal corpora are SQLite FTS5 indexes kept here, one file each."""
    return Path(os.environ.get("EVERGREEN_CORPORA") or workspace_dir() / "corpora").expanduser()


_CORE = Path(__file__).resolve().parent


def resource_dir(packaged: str, checkout: str) -> Path:
    """A folder the project ships: ``checkout`` (relative to the project's top) in a
    checkout, ``core/<packaged>`` in an installed wheel (pyproject's package-dir)."""
    installed = _CORE / packaged
    return installed if installed.is_dir() else _CORE.parent / checkout


def sample_dir() -> Path:
    """The sample workspace shipped with the project (``data/sample``)."""
    return resource_dir("sample", "data/sample")


def prompts_dir() -> Path:
    """The writer's prompt templates (``prompts/``)."""
    return resource_dir("prompts", "prompts")
