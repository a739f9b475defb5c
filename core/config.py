"""Where a workspace lives: the database URL and the corpus index folder.

One place decides, from three layers read in this order:

1. a door's explicit choice — the CLI's ``--db``, the benchmark's per-question database —
   set with ``overriding(name, value)`` for as long as the door runs;
2. the process's environment (``EVERGREEN_HOME``, ``EVERGREEN_DB`` …);
3. values the app supplies from its Streamlit secrets (``supply``), used where the
   environment says nothing.

Nothing here (or anywhere in ``core``) writes ``os.environ``: a door passes its choice in,
and code that needs a setting asks ``value(name)``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ENV_HOME = "EVERGREEN_HOME"
ENV_DB = "EVERGREEN_DB"
ENV_CORPORA = "EVERGREEN_CORPORA"

_lock = threading.Lock()
_chosen: dict[str, str] = {}  # layer 1: a door's choices (process-wide: run threads see them)
_supplied: dict[str, str] = {}  # layer 3: the app's secrets


def value(name: str) -> str | None:
    """The setting called ``name`` (an environment variable's name): a door's choice, else
    the environment, else a value the app supplied; None when none says anything."""
    with _lock:
        chosen, supplied = _chosen.get(name), _supplied.get(name)
    return chosen or os.environ.get(name) or supplied


@contextmanager
def overriding(name: str, choice: str | None) -> Iterator[None]:
    """Use ``choice`` for setting ``name`` (over the environment) until the block ends;
    ``None`` changes nothing. Runs started in other threads meanwhile see it too."""
    if not choice:
        yield
        return
    with _lock:
        before = _chosen.get(name)
        _chosen[name] = choice
    try:
        yield
    finally:
        with _lock:
            if before is None:
                _chosen.pop(name, None)
            else:
                _chosen[name] = before


def supply(values: Mapping[str, str]) -> None:
    """The values the app read from its secrets (replacing any supplied before); the
    environment wins over each of them."""
    with _lock:
        _supplied.clear()
        _supplied.update(values)


def supplied() -> dict[str, str]:
    """A copy of the values the app supplied (``supply``)."""
    with _lock:
        return dict(_supplied)


def workspace_dir() -> Path:
    """The workspace folder: ``$EVERGREEN_HOME``, else ``./data``."""
    return Path(value(ENV_HOME) or "data").expanduser()


def database_url(override: str | None = None) -> str:
    """Any SQLAlchemy URL; by default a SQLite file in the workspace."""
    url = override or value(ENV_DB)
    if url:
        if "://" not in url:  # a plain path is taken as a SQLite file
            return f"sqlite:///{Path(url).expanduser()}"
        return url
    return f"sqlite:///{workspace_dir() / 'evergreen.db'}"


def corpora_dir() -> Path:
    """Local temporal corpora are SQLite FTS5 indexes kept here, one file each."""
    return Path(value(ENV_CORPORA) or workspace_dir() / "corpora").expanduser()


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
